"""Runs on disk: save a run as JSON Lines, load it back without loss, and compare two runs.

A run file ``<runs_dir>/<run_id>.jsonl`` holds one header line (task, model, settings, prompt version), one
line per step (reflection, action, result, timings, tokens, the exact request, the raw model output, the
approval) and one closing line (status, success, text, totals). Screenshots are written beside it as
``<run_id>/step_<k>.jpg`` and referenced by name; the prompt text is kept once per version under
``prompts/<hash>.md``. JSON Lines keeps files appendable and greppable, and a half-written file still loads.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.messages import AssistantMessage, Usage
from .results import PageAgentResult, PageStep, StepRequest

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
    return PageStep(**{k: v for k, v in data.items() if k in known})


def result_to_dict(result: PageAgentResult) -> dict[str, Any]:
    """A JSON-ready dict of the whole run (screenshots left out; see :func:`save_run`)."""
    head = {f.name: getattr(result, f.name) for f in dataclasses.fields(result) if f.name not in ("steps", "usage")}
    head["usage"] = result.usage.model_dump(mode="json")
    head["steps"] = [step_to_dict(s) for s in result.steps]
    return head


def save_run(result: PageAgentResult, runs_dir: str | Path) -> Path:
    """Write the run (and its screenshots and prompt) under ``runs_dir``; returns the .jsonl path."""
    folder = Path(runs_dir)
    folder.mkdir(parents=True, exist_ok=True)
    run_id = result.run_id
    shots = folder / run_id
    for step in result.steps:
        if step.screenshot:
            shots.mkdir(exist_ok=True)
            ext = "png" if step.screenshot_mime.endswith("png") else "jpg"
            name = f"step_{step.index}.{ext}"
            (shots / name).write_bytes(step.screenshot)
            step.screenshot_ref = f"{run_id}/{name}"
    prompts = folder / "prompts"
    prompts.mkdir(exist_ok=True)
    prompt_file = prompts / f"{result.prompt_version}.md"
    if result.system_prompt and not prompt_file.exists():
        prompt_file.write_text(result.system_prompt, encoding="utf-8")
    data = result_to_dict(result)
    steps = data.pop("steps")
    closing = {k: data.pop(k) for k in ("status", "success", "text", "error", "usage", "duration_s")}
    data.pop("system_prompt", None)
    path = folder / f"{run_id}.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        fh.write(json.dumps({"kind": "run", "format": FORMAT_VERSION, **data}, ensure_ascii=False) + "\n")
        for s in steps:
            fh.write(json.dumps({"kind": "step", **s}, ensure_ascii=False) + "\n")
        fh.write(json.dumps({"kind": "end", **closing}, ensure_ascii=False) + "\n")
    return path


def load_run(path: str | Path, *, with_screenshots: bool = True) -> PageAgentResult:
    """Read a run saved by :func:`save_run`. A run cut short (no closing line) loads with status ``error``."""
    path = Path(path)
    head: dict[str, Any] = {}
    end: dict[str, Any] = {}
    steps: list[PageStep] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            if end:  # anything after the closing line is ignored
                break
            raise ValueError(f"{path}:{number} is not valid JSON; is this a notebook_agent run file?") from None
        if not head and record.get("kind") != "run":
            raise ValueError(f"{path} is not a notebook_agent run file (no header line)")
        kind = record.pop("kind", None)
        if kind == "run":
            record.pop("format", None)
            head = record
        elif kind == "step":
            steps.append(step_from_dict(record))
        elif kind == "end":
            end = record
    if not head:
        raise ValueError(f"{path} is not a notebook_agent run file (no header line)")
    if with_screenshots:
        for s in steps:
            if s.screenshot_ref and (path.parent / s.screenshot_ref).exists():
                s.screenshot = (path.parent / s.screenshot_ref).read_bytes()
    prompt_file = path.parent / "prompts" / f"{head.get('prompt_version')}.md"
    known = {f.name for f in dataclasses.fields(PageAgentResult)}
    fields = {k: v for k, v in head.items() if k in known}
    return PageAgentResult(
        **fields,
        steps=steps,
        status=end.get("status", "error"),
        success=end.get("success", False),
        text=end.get("text", ""),
        error=end.get("error", None if end else "The run file ends before the run did."),
        usage=Usage.model_validate(end.get("usage") or {}),
        duration_s=end.get("duration_s", 0.0),
        system_prompt=prompt_file.read_text(encoding="utf-8") if prompt_file.exists() else "",
    )


def list_runs(runs_dir: str | Path) -> list[PageAgentResult]:
    """Every run in a folder, oldest first (screenshots not loaded)."""
    folder = Path(runs_dir)
    if not folder.is_dir():
        return []
    return [load_run(p, with_screenshots=False) for p in sorted(folder.glob("*.jsonl"))]


def find_run(runs_dir: str | Path, ref: str) -> Path:
    """A run file by id, unique id prefix, or 1-based position (``-1`` = newest)."""
    folder = Path(runs_dir)
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise ValueError(f"No saved runs in {folder}")
    matches = [p for p in files if p.stem.startswith(ref) or p.stem.endswith(ref)]
    if not matches and ref.lstrip("-").isdigit():
        i = int(ref)
        if i == 0 or abs(i) > len(files):
            raise ValueError(f"There are {len(files)} runs; {ref} is out of range")
        return files[i - 1 if i > 0 else i]
    if len(matches) != 1:
        raise ValueError(f"{'No' if not matches else 'More than one'} run matches {ref!r} in {folder}")
    return matches[0]


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
            return r.usage.input + r.usage.output + r.usage.cache_read

        return [
            ("status", self.a.status, self.b.status),
            ("success", self.a.success, self.b.success),
            ("steps", len(self.a.steps), len(self.b.steps)),
            ("tokens", tokens(self.a), tokens(self.b)),
            ("cost $", round(self.a.usage.cost.total, 6), round(self.b.usage.cost.total, 6)),
            ("time s", round(self.a.duration_s, 2), round(self.b.duration_s, 2)),
            ("prompt", self.a.prompt_version, self.b.prompt_version),
            ("model", self.a.model, self.b.model),
        ]


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
