"""A recipe: a run shown once, made into steps with slots, to be done again for every row of a table for free.

``recipe = Recipe.from_run(result, params={"product": "Rain Jacket"})`` (or ``Recipe.from_run(path_or_run,
template="Find the price of {product}")``, which reads the values out of the run's task) finds where the run
used each value: text it typed, an option it chose, a URL it went to (URL-encoded as the URL had it), the
fingerprint of an element it acted on, the URL of a page it was on. Each becomes a slot (see
:mod:`.slots`). The recipe keeps, per step, the action and its arguments, the element's fingerprint,
the page's URL pattern and title (what the step checks before it acts: the page it expects), and for the
answer the lines of the last page its values were read from.

When the recorded page's answer came from one JSON response of the page's own script, the recipe also learns that
call (:mod:`.calls`: the request with slots, where each answer field sits in the response), so a map can ask it
directly for each row, checked against the page (``recipe.map(rows, agent, mode="auto")``); ``recipe.call_note``
says why no call was learned.

``await recipe.map(rows)`` (:mod:`.recipe_map`) replays it per row with the row's values. A recipe is plain data:
``recipe.save(path)`` writes JSON, ``Recipe.load(path)`` reads it back and says clearly what is wrong with a
file that is not one. A file of version 1 (before calls were learned) loads as a recipe without a call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ...browser.actions import action_facts
from ..step.replay_pilot import replayable
from .answer import Answer, answer_of
from .calls.learn import learn_call
from .calls.template import LearnedCall, url_origin
from .slots import (
    RecipeError,
    check_names,
    escape,
    find_extraction,
    page_lines,
    templated,
    templated_all,
)

FORMAT = "notebook_agent.recipe"
VERSION = 2
#: The versions this one reads: 1 has no learned call.
READS = (1, 2)
#: Where a slot may be found in a step, by action: its arguments as typed, and URLs encoded as URLs are.
URL_ENCODINGS = ("q", "u", "")


class Slot(BaseModel):
    """A parameter of the recipe: its name (a column of the rows), the value it had, and where it was used."""

    model_config = ConfigDict(extra="forbid")
    name: str
    recorded: str
    used: list[str] = Field(default_factory=list)
    """``step 2: typed text``, ``step 1: URL``, ...: what takes the row's value."""


class RecipeStep(BaseModel):
    """One recorded step, its strings as templates over the slots."""

    model_config = ConfigDict(extra="forbid")
    index: int
    action: str
    args: dict[str, Any] = Field(default_factory=dict)
    target: dict[str, Any] | None = None
    """The fingerprint of the element it acted on (found again by what it was)."""
    url: str = ""
    """The URL pattern of the page it acted on: a row's page must have this path (else the step heals)."""
    title: str = ""
    next_goal: str = ""
    evaluation_previous_goal: str = ""
    memory: str = ""


class Recipe(BaseModel):
    """See the module docstring. ``recipe.slots``, ``recipe.steps``, ``recipe.task`` (the task template)."""

    model_config = ConfigDict(extra="forbid")
    format: str = FORMAT
    version: int = VERSION
    task: str
    slots: list[Slot]
    steps: list[RecipeStep]
    start_url: str | None = None
    answer: Answer = Field(default_factory=Answer)
    output_type: str = ""
    run_id: str = ""
    """The run it was made from."""
    settings: dict[str, Any] = Field(default_factory=dict)
    call: LearnedCall | None = None
    """The call behind the page, learned from the recording's network log (:mod:`.calls`), or None."""
    call_note: str = ""
    """Why no call was learned ("" when one was)."""

    # -- making one --------------------------------------------------------------------------------------------
    @classmethod
    def from_run(
        cls,
        run: Any,
        params: Mapping[str, Any] | None = None,
        *,
        template: str | None = None,
        approve_effects: bool = False,
    ) -> Recipe:
        """The recipe of ``run`` (a result or a run file). ``params``: ``{name: value the run used}``; or
        ``template``: the task template the run was made from (a map's), whose ``{column}`` values are read out
        of the run's task. ``approve_effects``: the person approves, once, that a learned call whose effect the
        recording approved (an order placed) is sent for every row of a map; the recipe file records it."""
        if isinstance(run, (str, Path)):
            from ..runs.run_file import load_run

            run = load_run(run, with_screenshots=False)
        if params is None and template is None:
            raise RecipeError(
                "Say which values of the run are parameters: Recipe.from_run(result, params={'product': "
                "'Rain Jacket'}), or template='Find the price of {product}' (the map's task template)."
            )
        given = dict(params or {})
        if template is not None:
            given = {**values_from_task(template, run.task), **given}
        return _build(run, check_names(given), template, approve_effects)

    # -- a file ------------------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        from ..runs.run_file import write_atomically

        out = Path(path)
        write_atomically(out, (self.model_dump_json(indent=1) + "\n").encode("utf-8"))
        return out

    @classmethod
    def load(cls, path: str | Path) -> Recipe:
        """Read a recipe file; a file that is not one is a :class:`RecipeError` saying where and why."""
        file = Path(path)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except OSError as exc:
            raise RecipeError(f"Cannot read the recipe {file}: {exc.strerror or exc}.") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RecipeError(f"{file} is not a recipe: it is not JSON ({exc}).") from None
        return cls.parse(data, str(file))

    @classmethod
    def parse(cls, data: Any, where: str = "the recipe") -> Recipe:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise RecipeError(
                f'{where} is not a recipe (no "format": {FORMAT!r}); make one with Recipe.from_run(result, ...).'
            )
        if data.get("version") not in READS:
            raise RecipeError(
                f"{where} is a recipe of version {data.get('version')!r}; this version reads "
                f"{' and '.join(map(str, READS))}."
            )
        if data.get("version") == 1 and ("call" in data or "call_note" in data):
            raise RecipeError(f"{where} says it is of version 1, which has no learned call, yet holds one.")
        data = {**data, "version": VERSION}
        try:
            recipe = cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            at = ".".join(str(p) for p in first["loc"]) or "(top)"
            raise RecipeError(
                f"{where} is not a valid recipe: at {at}, {first['msg']} ({exc.error_count()} problem(s))."
            ) from None
        recipe.check()
        return recipe

    def check(self) -> None:
        """Every field a template names is a slot (or a page read), so no row fails on a typo in the file."""
        from .slots import fill_all

        names = {s.name: s.recorded for s in self.slots}
        reads = {f"_{i + 1}": "0" for i in range(len(self.answer.reads))}
        try:
            for step in self.steps:
                fill_all([step.args, step.target or {}, step.url], names)
            fill_all([self.task, self.start_url or ""], names)
            fill_all([self.answer.text, self.answer.data], {**names, **reads})
            for r in self.answer.reads:
                r.regex(names)
        except (RecipeError, ValueError, re.error) as exc:
            raise RecipeError(f"The recipe's templates do not fit its slots: {exc}") from None
        if not self.steps:
            raise RecipeError("The recipe has no steps: its run did no action that ran.")
        if self.call is not None:
            origins = {url_origin(u) for u in [self.start_url or "", *(s.url for s in self.steps)]} - {""}
            origins |= {url_origin(str(s.args.get("url") or "")) for s in self.steps} - {""}
            self.call.check({o for o in origins if "{" not in o}, set(self.names), len(self.answer.reads))

    # -- using one -----------------------------------------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return [s.name for s in self.slots]

    async def map(self, rows: Any, agent: Any = None, **options: Any) -> Any:
        """Every row of ``rows`` (a DataFrame, a list of dicts) done with this recipe: see :mod:`.recipe_map`."""
        from .recipe_map import map_recipe

        return await map_recipe(self, rows, agent, **options)

    def map_sync(self, rows: Any, agent: Any = None, **options: Any) -> Any:
        """:meth:`map` from plain code, or from a cell with a running event loop (it runs on a thread of its
        own there, with its own browser). Ctrl-C (Interrupt) stops the rows and raises
        :class:`~..batch.map_runner.MapInterrupted` whose ``.result`` has every finished row."""
        from ..batch.map_rows import _call
        from ..batch.map_runner import MapInterrupted

        async def work() -> Any:
            try:
                return await self.map(rows, agent, **options)
            except MapInterrupted as stopped:  # returned, so asyncio.run does not turn it into a bare Ctrl-C
                return stopped

        out = _call(work)
        if isinstance(out, MapInterrupted):
            raise out
        return out

    def __repr__(self) -> str:
        slots = ", ".join(f"{s.name}={s.recorded!r}" for s in self.slots)
        call = "learned call" if self.call is not None else "no call"
        return (
            f"Recipe({self.task!r}, {len(self.steps)} steps, slots: {slots or 'none'}, reads {len(self.answer.reads)}, "
            f"{call})"
        )

    def _repr_html_(self) -> str:
        """The recipe in a notebook: its slots, and its learned call (redacted templates, field paths, a sample row)
        or why it has none."""
        from .calls.show import recipe_html

        return recipe_html(self)

    def to_python(self) -> str:
        """A short plain script that asks the learned call with httpx for one row (beside ``to_playwright(result)``,
        the recorded run as a Playwright script); a :class:`RecipeError` when no call was learned."""
        from .calls.show import to_python

        return to_python(self)


def values_from_task(template: str, task: str) -> dict[str, str]:
    """The values a filled ``template`` had in ``task`` (``Find {product}`` and ``Find Boots`` → product=Boots)."""
    from ..batch.map_table import template_fields

    names = template_fields(template)
    regex, at = "", 0
    seen: set[str] = set()
    for m in re.finditer(r"\{([^{}:!]+)(?:[:!][^{}]*)?\}", template.replace("{{", "\0").replace("}}", "\1")):
        literal = template.replace("{{", "\0").replace("}}", "\1")[at : m.start()]
        regex += re.escape(literal.replace("\0", "{").replace("\1", "}"))
        name = m.group(1)
        regex += f"(?P={_group(name, names)})" if name in seen else f"(?P<{_group(name, names)}>.+?)"
        seen.add(name)
        at = m.end()
    regex += re.escape(template.replace("{{", "\0").replace("}}", "\1")[at:].replace("\0", "{").replace("\1", "}"))
    found = re.fullmatch(regex, task.strip(), re.S)
    if found is None:
        raise RecipeError(f"The run's task {task!r} was not made from the template {template!r}.")
    return {n: found.group(_group(n, names)) for n in names}


def _group(name: str, names: list[str]) -> str:
    return f"g{names.index(name)}"


#: How a recipe names a slot's value where it says where a parameter was found.
_SLOT_WORDS = {"text": "typed text", "option": "chosen option", "url": "URL"}


def _build(run: Any, params: dict[str, str], template: str | None, approve_effects: bool = False) -> Recipe:
    steps = replayable(run)
    if not steps:
        raise RecipeError(f"Run {run.run_id or run.task!r} has no action that ran, so it makes no recipe.")
    used: dict[str, list[str]] = {n: [] for n in params}
    out: list[RecipeStep] = []
    done = None
    for s in steps:
        facts = action_facts(s.action or "")
        if facts.finishes:
            done = s
        is_url = "url" in facts.slots.values()
        args: dict[str, Any] = {}
        for key, value in s.args.items():
            if key in ("data", "table", "columns") and facts.finishes:
                continue
            args[key], found = templated_all(value, params, URL_ENCODINGS if is_url else ("",))
            what = _SLOT_WORDS.get(facts.slots.get(key, ""), f"{s.action} {key}")
            for name in found:
                used[name].append(f"step {s.index}: {what}")
        target, found = templated_all(s.target, params, URL_ENCODINGS) if s.target else (None, [])
        for name in found:
            used[name].append(f"step {s.index}: the element acted on")
        url, _ = templated(s.url, params, URL_ENCODINGS)
        title, _ = templated(s.title, params)
        out.append(
            RecipeStep(
                index=s.index,
                action=s.action or "",
                args=args,
                target=target,
                url=url,
                title=title,
                next_goal=templated(s.next_goal, params)[0],
                evaluation_previous_goal=templated(s.evaluation_previous_goal, params)[0],
                memory=templated(s.memory, params)[0],
            )
        )
    start = run.settings.get("start_url")
    start_url, found = templated(start, params, URL_ENCODINGS) if isinstance(start, str) and start else (None, [])
    for name in found:
        used[name].insert(0, "the start URL")
    unused = [n for n, where in used.items() if not where]
    if unused and template is None:
        name = unused[0]
        raise RecipeError(
            f"The run never typed, chose or went to {params[name]!r} ({name}), so it cannot be a slot: give the value "
            "exactly as the run used it."
        )
    answer = answer_of(done, run, params) if done is not None else Answer()
    call, note = learn_call(run, params, answer, approve_effects)
    return Recipe(
        task=template if template is not None else templated(run.task, params)[0],
        slots=[Slot(name=n, recorded=v, used=used[n]) for n, v in params.items()],
        steps=out,
        start_url=start_url,
        answer=answer,
        output_type=run.output_type,
        run_id=run.run_id,
        settings={k: run.settings.get(k) for k in ("max_steps", "approval", "output") if k in run.settings},
        call=call,
        call_note=note,
    )


__all__ = ["Answer", "Recipe", "RecipeError", "RecipeStep", "Slot", "escape", "find_extraction", "page_lines"]


def open_recipe(
    ref: Any, *, template: str | None = None, params: Mapping[str, Any] | None = None, runs_dir: str = "agent_runs"
) -> Recipe:
    """A recipe from what a person names (the one rule of ``%%agent --recipe``, ``%agent recipe`` and the
    terminal's ``map --recipe``): a :class:`Recipe`, a run result, a recipe file (``.json``), a run file
    (``.jsonl``), or a saved run of ``runs_dir`` by position or id. From a run, ``template`` (the task with
    ``{column}``s) or ``params`` say which of its values are slots."""
    if isinstance(ref, Recipe):
        return ref
    if hasattr(ref, "steps") and hasattr(ref, "task"):  # a run's result
        return Recipe.from_run(ref, params, template=template)
    text = str(ref)
    if text.endswith(".json"):
        return Recipe.load(text)
    from ..runs.run_file import find_run

    path = text if text.endswith(".jsonl") else str(find_run(runs_dir, text))
    if template is None and params is None:
        raise RecipeError(
            f"{text} is a run, not a recipe: give the task template with its {{column}}s (the cell body, or the "
            "terminal's TASK), or make a recipe file first with Recipe.from_run(result, ...).save('recipe.json')."
        )
    return Recipe.from_run(path, params, template=template)
