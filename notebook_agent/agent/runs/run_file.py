"""Runs on disk: save a run as JSON Lines, load it back without loss, and compare two runs.

A run file ``<runs_dir>/<run_id>.jsonl`` holds one header line (task, model, settings, prompt version), one
line per step (reflection, action, result, timings, tokens, the exact request, the raw model output, the
approval) and one closing line (status, success, text, totals). Screenshots are written beside it as
``<run_id>/step_<k>.jpg`` and referenced by name; the prompt text is kept once per version under
``prompts/<hash>.md``. JSON Lines keeps files appendable and greppable, and a half-written file still loads.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...core.messages import AssistantMessage, Usage
from ...core.text import clean_text, map_strings
from ...llm.ledger import cost_text
from .result import PageAgentResult, PageStep, StepRequest
from .run_data import differences, table_from_dict, table_to_dict, to_json
from .run_schema import CLOSING, RunFileError, check_record

FORMAT_VERSION = 1


def step_to_dict(step: PageStep) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in dataclasses.fields(step):
        value = getattr(step, f.name)
        if f.name == "screenshot":
            continue
        if isinstance(value, (Usage, AssistantMessage)):
            value = value.model_dump(mode="json")
        elif isinstance(value, StepRequest):
            value = dataclasses.asdict(value)
        out[f.name] = value
    return out


def step_from_dict(data: dict[str, Any]) -> PageStep:
    data = dict(data)
    data["usage"] = Usage.model_validate(data.get("usage") or {})
    if data.get("output") is not None:
        data["output"] = AssistantMessage.model_validate(data["output"])
    if data.get("request") is not None:
        data["request"] = StepRequest(**data["request"])
    known = {f.name for f in dataclasses.fields(PageStep)}
    step = PageStep(**{k: v for k, v in data.items() if k in known})
    if not step.usage.calls and step.output is not None and step.asks_model:
        step.usage.calls = 1  # a file written before model calls were counted: the step's answer was one
    return step


def result_to_dict(result: PageAgentResult) -> dict[str, Any]:
    """A JSON-ready dict of the whole run (screenshots left out; see :func:`save_run`)."""
    head = {
        f.name: getattr(result, f.name)
        for f in dataclasses.fields(result)
        if f.name not in ("steps", "usage", "output", "tables")
    }
    head["usage"] = result.usage.model_dump(mode="json")
    head["output"] = to_json(result.output)
    head["tables"] = {name: table_to_dict(t) for name, t in result.tables.items()}
    head["steps"] = [step_to_dict(s) for s in result.steps]
    return head


def write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole or not at all: into a temporary file in the same folder, then renamed
    over ``path``. A full disk (or a kill) mid-write leaves the previous file, or none, never a truncated or
    empty one; the temporary file is removed and the error raised."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class RunWriter:
    """Writes one run file as the run happens: the header when it starts, each step as it finishes (flushed,
    with its screenshot beside it), the closing line when it ends. A kernel killed mid-run loses at most the
    step in progress; ``load_run`` reads a file without a closing line as a run cut short."""

    def __init__(self, runs_dir: str | Path, run_id: str, redact: Callable[[str], str] | None = None) -> None:
        self.folder = Path(runs_dir)
        self.redact = redact
        """Applied to every string of every line before it is written (secrets out, by value)."""
        self.run_id = re.sub(r"[^\w.-]", "_", run_id).lstrip(".") or "run"  # a file name, whatever it was given
        self.path = self.folder / f"{self.run_id}.jsonl"
        self.written = 0
        self.started = False
        """Whether the header line is written: a step or closing line is never written without one."""

    def start(self, head: dict[str, Any], system_prompt: str = "") -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        prompts = self.folder / "prompts"
        prompts.mkdir(exist_ok=True)
        prompt_file = prompts / f"{head.get('prompt_version')}.md"
        if system_prompt and not prompt_file.exists():
            write_atomically(prompt_file, clean_text(self._scrub(system_prompt)).encode("utf-8"))
        with self.path.open("w", encoding="utf-8") as fh:
            fh.write(_line(self._scrub({"kind": "run", "format": FORMAT_VERSION, **head})))
        self.started = True

    def step(self, step: PageStep, *, screenshot_pending: bool = False) -> None:
        """Append ``step``. ``screenshot_pending``: its picture is still being taken; the line names the
        file now and :meth:`screenshot` writes it when it arrives."""
        self._headed()
        if step.screenshot:
            self.screenshot(step)
        elif screenshot_pending:
            step.screenshot_ref = f"{self.run_id}/{self._shot_name(step)}"
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(_line(self._scrub({"kind": "step", **step_to_dict(step)})))
            fh.flush()
        self.written += 1

    def _shot_name(self, step: PageStep) -> str:
        return f"step_{step.index}.{'png' if step.screenshot_mime.endswith('png') else 'jpg'}"

    def screenshot(self, step: PageStep) -> None:
        """Write ``step``'s picture beside the run file."""
        if not step.screenshot:
            return
        shots = self.folder / self.run_id
        shots.mkdir(parents=True, exist_ok=True)
        name = self._shot_name(step)
        write_atomically(shots / name, step.screenshot)
        step.screenshot_ref = f"{self.run_id}/{name}"

    def end(self, closing: dict[str, Any]) -> None:
        self._headed()
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(_line(self._scrub({"kind": "end", **closing})))

    def _headed(self) -> None:
        """A file without its header line is not a run file (``load_run`` refuses it): writing a step or the
        closing line first is a mistake of the caller, never a file on disk."""
        if not self.started:
            raise RuntimeError(f"{self.path}: the header line must be written before any other line")

    def _scrub(self, node: object) -> Any:
        """``node`` with ``redact`` applied to every string in it (keys included)."""
        return node if self.redact is None else map_strings(node, self.redact)
        if isinstance(node, str):
            return self.redact(node)
        if isinstance(node, dict):
            return {self._scrub(k): self._scrub(v) for k, v in node.items()}
        if isinstance(node, (list, tuple)):
            return [self._scrub(v) for v in node]
        return node


MAX_SAVED_DEPTH = 200
"""How deeply a saved value may nest: deeper (absurd model output) is a note. Counted, not left to the recursion
limit, which another library may have raised: a line saved under a raised limit would not load under the usual one."""


def _line(record: dict[str, Any]) -> str:
    """One JSON line. Text is cleaned of lone surrogates; a value that cannot be serialised (nested deeper than
    :data:`MAX_SAVED_DEPTH`, or cyclic) is replaced by a note rather than losing the whole line."""
    safe = {key: value if _shallow(value) else _unsaved(value) for key, value in record.items()}
    try:
        return clean_text(json.dumps(safe, ensure_ascii=False, default=str)) + "\n"
    except (ValueError, RecursionError):  # what the walk cannot see (a value whose str() fails, say): key by key
        for key, value in safe.items():
            try:
                json.dumps(value, default=str)
            except (ValueError, RecursionError):
                safe[key] = _unsaved(value)
        return clean_text(json.dumps(safe, ensure_ascii=False, default=str)) + "\n"


def _unsaved(value: object) -> dict[str, str]:
    return {"unserialisable": f"{type(value).__name__} too deep or cyclic to save"}


def _shallow(value: object, limit: int = MAX_SAVED_DEPTH) -> bool:
    """Whether ``value`` nests no deeper than ``limit`` (walked without recursion; a cycle is deep)."""
    todo: list[tuple[object, int]] = [(value, 0)]
    while todo:
        node, depth = todo.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        if depth >= limit:
            return False
        todo.extend((child, depth + 1) for child in children)
    return True


def run_head(result: PageAgentResult) -> dict[str, Any]:
    """The header fields of a run file (everything known when the run starts)."""
    data = result_to_dict(result)
    for key in ("steps", "system_prompt", *CLOSING):
        data.pop(key, None)
    return data


def run_closing(result: PageAgentResult) -> dict[str, Any]:
    data = result_to_dict(result)
    # Derived from the steps on load; written out so a reader of the file sees which path the model took.
    return {**{k: data[k] for k in CLOSING}, "output_mode": result.output_mode}


def save_run(result: PageAgentResult, runs_dir: str | Path) -> Path:
    """Write the run (and its screenshots and prompt) under ``runs_dir``; returns the .jsonl path."""
    writer = RunWriter(runs_dir, result.run_id)
    writer.start(run_head(result), result.system_prompt)
    for step in result.steps:
        writer.step(step)
    writer.end(run_closing(result))
    return writer.path


def load_run(path: str | Path, *, with_screenshots: bool = True) -> PageAgentResult:
    """Read a run saved by :func:`save_run`. A run cut short (no closing line) loads with status ``error``.
    Every line is checked first (:mod:`.run_schema`): a file that is not a run file, or a line with a field of
    the wrong type, raises :class:`~.run_schema.RunFileError` naming the line, the step and the field."""
    path = Path(path)
    head: dict[str, Any] = {}
    end: dict[str, Any] = {}
    steps: list[PageStep] = []
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise RunFileError(f"{path} is not UTF-8 text (byte {exc.start}); is this a notebook_agent run file?") from None
    # Lines end at "\n" only: JSON keeps U+0085, U+2028 and the like raw inside strings, which splitlines() cuts.
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            if end:  # anything after the closing line is ignored
                break
            raise RunFileError(f"{path}:{number} is not valid JSON; is this a notebook_agent run file?") from None
        kind = record.get("kind") if isinstance(record, dict) else None
        if not head and kind != "run":
            raise RunFileError(f"{path} is not a notebook_agent run file (no header line)")
        if kind not in ("run", "step", "end"):
            continue  # a kind a newer writer may add
        checked = check_record(kind, record, f"{path}:{number}")
        if kind == "run":
            head = checked
        elif kind == "step":
            steps.append(step_from_dict(checked))
        else:
            end = checked
    if not head:
        raise RunFileError(f"{path} is not a notebook_agent run file (no header line)")
    # A run file is input too: only files inside its own folder are read, whatever the file says.
    for s in steps:
        inside = _inside(path.parent, s.screenshot_ref)
        s.screenshot_ref = s.screenshot_ref if inside else None
        if with_screenshots and inside is not None and inside.is_file():
            s.screenshot = inside.read_bytes()
    version = str(head.get("prompt_version") or "")
    prompt_file = path.parent / "prompts" / f"{version}.md"
    if not re.fullmatch(r"[0-9a-f]{6,64}", version):
        prompt_file = path.parent / "prompts" / "-"  # not a content hash: never a path
    known = {f.name for f in dataclasses.fields(PageAgentResult)}
    fields = {k: v for k, v in head.items() if k in known and k not in ("output", "tables")}
    try:
        tables = {str(k): table_from_dict(str(k), v) for k, v in (end.get("tables") or {}).items() if v}
    except (TypeError, ValueError) as exc:
        raise RunFileError(f"{path}: the closing line's field 'tables' is not valid: {exc}.") from None
    return PageAgentResult(
        **fields,
        steps=steps,
        status=end.get("status", "error"),
        success=end.get("success", False),
        text=end.get("text", ""),
        error=end.get("error", None if end else "The run file ends before the run did."),
        usage=_usage(end.get("usage"), steps),
        output=end.get("output"),
        tables=tables,
        duration_s=end.get("duration_s", 0.0),
        system_prompt=prompt_file.read_text(encoding="utf-8") if prompt_file.exists() else "",
    )


def _usage(closing: dict[str, Any] | None, steps: list[PageStep]) -> Usage:
    """The run's usage from its closing line, its model calls counted from the steps when a file written before
    they were counted has none."""
    usage = Usage.model_validate(closing or {})
    if not usage.calls:
        usage.calls = sum(s.usage.calls for s in steps)
    return usage


def _inside(folder: Path, ref: str | None) -> Path | None:
    """``folder / ref`` if that stays inside ``folder`` (no absolute paths, no ``..``), else None."""
    if not ref or not isinstance(ref, str):
        return None
    candidate = (folder / ref).resolve()
    root = folder.resolve()
    return candidate if candidate.is_relative_to(root) and candidate != root else None


def scan_runs(runs_dir: str | Path) -> tuple[list[PageAgentResult], list[tuple[Path, str]]]:
    """Every readable run in a folder, oldest first (screenshots not loaded), and the files that could not be
    read with why, so one bad file never hides the others."""
    folder = Path(runs_dir)
    if not folder.is_dir():
        return [], []
    runs: list[PageAgentResult] = []
    bad: list[tuple[Path, str]] = []
    for p in sorted(folder.glob("*.jsonl")):
        try:
            runs.append(load_run(p, with_screenshots=False))
        except (ValueError, OSError, TypeError, KeyError) as exc:
            bad.append((p, str(exc) or type(exc).__name__))
    return runs, bad


def list_runs(runs_dir: str | Path) -> list[PageAgentResult]:
    """Every readable run in a folder, oldest first (screenshots not loaded); see :func:`scan_runs`."""
    return scan_runs(runs_dir)[0]


def open_run(run: PageAgentResult | str, runs_dir: str | Path | None = None) -> PageAgentResult:
    """A run given as a result, a run file's path, or a reference into ``runs_dir`` (default ``agent_runs``;
    see :func:`find_run`), loaded without its screenshots: what a replay takes."""
    if not isinstance(run, str):
        return run
    path = run if run.endswith(".jsonl") else find_run(runs_dir or "agent_runs", run)
    return load_run(path, with_screenshots=False)


def find_run(runs_dir: str | Path, ref: str) -> Path:
    """A run file by reference, one rule: a whole number ``n`` with ``1 <= |n| <= number of runs`` is a
    position (1 = oldest, -1 = newest); anything else names one run by the start of its id or of its random
    tail (``bbbbbb`` or ``bbb`` for ``20261130-100000-bbbbbb``). No match, or more than one, is an error that
    lists the candidates."""
    folder = Path(runs_dir)
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise ValueError(f"No saved runs in {folder}")
    ref = ref.strip()
    if re.fullmatch(r"[+-]?\d+", ref) and 1 <= abs(int(ref)) <= len(files):
        i = int(ref)
        return files[i - 1 if i > 0 else i]
    matches = [p for p in files if ref and (p.stem.startswith(ref) or p.stem.rsplit("-", 1)[-1].startswith(ref))]
    if len(matches) == 1:
        return matches[0]
    positions = f"a position from 1 to {len(files)} (or -1 to -{len(files)})"
    if not matches:
        why = (
            f"There are {len(files)} runs; {ref} is out of range"
            if ref.lstrip("+-").isdigit()
            else f"No run matches {ref!r}"
        )
        newest = ", ".join(p.stem for p in reversed(files[-5:]))
        raise ValueError(
            f"{why}: no run id in {folder} starts with it. Give {positions}, or the start of a run id; "
            f"the newest: {newest}{' …' if len(files) > 5 else ''}."
        )
    raise ValueError(
        f"More than one run matches {ref!r} in {folder}: {', '.join(p.stem for p in matches[:8])}"
        f"{' …' if len(matches) > 8 else ''}. Give more of the id, or {positions}."
    )


@dataclass
class StepDiff:
    index: int
    a: PageStep | None
    b: PageStep | None
    same_action: bool
    same_result: bool


@dataclass
class Comparison:
    a: PageAgentResult
    b: PageAgentResult
    steps: list[StepDiff]
    first_divergence: int | None
    """1-based step where the runs first differ in action, arguments or result; None if they never do."""
    divergence_kind: str | None
    """``action`` or ``result``."""

    def summary(self) -> list[tuple[str, Any, Any]]:
        def tokens(r: PageAgentResult) -> int:
            return r.usage.tokens

        return [
            ("status", self.a.status, self.b.status),
            ("success", self.a.success, self.b.success),
            ("steps", len(self.a.steps), len(self.b.steps)),
            ("tokens", tokens(self.a), tokens(self.b)),
            ("cost", cost_text(self.a.usage.dollars), cost_text(self.b.usage.dollars)),
            ("time s", round(self.a.duration_s, 2), round(self.b.duration_s, 2)),
            ("prompt", self.a.prompt_version, self.b.prompt_version),
            ("model", self.a.model, self.b.model),
            ("output mode", self.a.output_mode or "-", self.b.output_mode or "-"),
            *self.answer_rows(),
        ]

    def answer_rows(self) -> list[tuple[str, Any, Any]]:
        """The typed answers, field by field where they differ (nothing when neither run had one)."""
        if self.a.output is None and self.b.output is None:
            return []
        diffs = differences(self.a.output, self.b.output, "answer")
        return [(where, x, y) for where, x, y in diffs] if diffs else [("answer", "same", "same")]


def compare_runs(a: PageAgentResult, b: PageAgentResult) -> Comparison:
    diffs: list[StepDiff] = []
    first: int | None = None
    kind: str | None = None
    for i in range(max(len(a.steps), len(b.steps))):
        sa = a.steps[i] if i < len(a.steps) else None
        sb = b.steps[i] if i < len(b.steps) else None
        same_action = sa is not None and sb is not None and (sa.action, sa.args) == (sb.action, sb.args)
        same_result = (
            same_action and sa is not None and sb is not None and (sa.result, sa.is_error) == (sb.result, sb.is_error)
        )
        diffs.append(StepDiff(i + 1, sa, sb, same_action, same_result))
        if first is None and not same_result:
            first, kind = i + 1, ("result" if same_action else "action")
    return Comparison(a, b, diffs, first, kind)
