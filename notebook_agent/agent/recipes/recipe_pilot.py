"""One row of a recipe: the recorded steps with the row's values (:func:`bind`), walked by a :class:`RecipePilot`.

The pilot is a :class:`~notebook_agent.agent.step.replay_pilot.ReplayPilot` over the recipe's own steps filled
with the row: each element is found again by its fingerprint (with the row's values in it: the link named after
this row's product), each page checked against the recorded URL pattern, each action put through the gate like a
model's. Only the last step differs: the answer is read from the row's last page (:mod:`.answer`), and when it
cannot be read that step heals (the model reads it) or, without healing, the row fails saying what was missing.
:class:`RecipeRows` makes one pilot per row: it is what a recipe map gives the map engine, so the engine knows
pilots, not recipes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ...browser.session.browser_session import BrowserSession
from ...llm.scripted import ScriptedCall
from ..prompt.agent_output import MACRO_NAME
from ..runs.result import PageStep
from ..step.pilot import Runner
from ..step.replay_pilot import Decision, ReplayPilot, ReplayStep
from .answer import answer_for
from .recipe import Recipe, RecipeStep
from .slots import RecipeError, fill, fill_all

__all__ = ["Bound", "Recipe", "RecipePilot", "RecipeRows", "bind", "row_values"]
"""``Recipe`` is here too for the recipe map, which cannot import recipe.py (that imports it for ``recipe.map``)."""


def row_values(recipe: Recipe, row: Mapping[str, Any]) -> dict[str, Any]:
    """The row's value of every slot, or a :class:`RecipeError` naming the slots it lacks."""
    missing = [n for n in recipe.names if n not in row]
    if missing:
        raise RecipeError(
            f"The row has no {', '.join(missing)} for the recipe's slots (it has: {', '.join(map(str, row)) or '-'})."
        )
    return {n: row[n] for n in recipe.names}


@dataclass(frozen=True)
class Bound:
    """A recipe filled with one row's values: its steps (fingerprints and URLs filled) and its start page."""

    steps: list[RecipeStep]
    start: str | None


def bind(recipe: Recipe, values: Mapping[str, Any]) -> Bound:
    """``recipe`` with a row's slot ``values`` (:func:`row_values`) in its steps, fingerprints and URLs."""

    def filled(s: RecipeStep) -> RecipeStep:
        return s.model_copy(
            update={
                "args": fill_all(s.args, values),
                "target": fill_all(s.target, values) if s.target else None,
                "url": fill(s.url, values),
                "title": fill(s.title, values),
                "next_goal": fill(s.next_goal, values),
                "evaluation_previous_goal": fill(s.evaluation_previous_goal, values),
                "memory": fill(s.memory, values),
            }
        )

    start = fill(recipe.start_url, values) if recipe.start_url else None
    return Bound([filled(s) for s in recipe.steps], start)


class RecipePilot(ReplayPilot):
    """A replay of ``recipe`` with ``row``'s values; its last step reads the answer from the page."""

    keeps_calls = False
    """A row learns nothing from the page's calls, so its run does not keep them (agent/step/run.py)."""

    def __init__(
        self,
        recipe: Recipe,
        row: Mapping[str, Any],
        *,
        heal: bool = True,
        url: str | None = None,
        agent: Runner | None = None,
        start: str | None = None,
    ) -> None:
        self.values = row_values(recipe, row)
        """The row's value of each slot, taken once for the steps and the answer."""
        bound = bind(recipe, self.values)
        super().__init__(
            bound.steps,
            recorded_start=bound.start,
            heal=heal,
            url=url,
            start=start,
            typed=agent is not None and agent.output_spec is not None,
            secrets=agent.secrets.names if agent is not None else (),
            tools=agent.custom_tools if agent is not None else None,
        )
        # ``chosen`` as a replay's: the user named where the row starts (``url=``, the map's start page); a recipe,
        # like a run file, is input (a file anyone could edit), so its own start URL is judged as the model's
        # ``go_to_url`` would be (the domain rule, then the policy), and its steps' navigations go through the
        # gate like any call
        self.recipe = recipe

    async def prepare(self, browser: BrowserSession, step: PageStep, page_text: str = "") -> str | None:
        answer = self.recipe.answer
        last = self.steps[self.position] if self.position < len(self.steps) else None
        if last is None or not self.facts(last).finishes or not (answer.text or answer.data is not None):
            return await super().prepare(browser, step, page_text)
        self.position += 1
        self.known = None
        problem = self._off_answer_page(browser, last)
        text, data = "", None
        if problem is None:
            text, data, problem = answer_for(answer, page_text, self.values)
        if problem is None:
            args: dict[str, Any] = {"text": text, "success": bool(last.args.get("success", True))}
            if self.typed and data is not None:
                args["data"] = data
            self.decision = Decision(
                ScriptedCall(
                    MACRO_NAME,
                    {
                        "evaluation_previous_goal": last.evaluation_previous_goal,
                        "memory": last.memory,
                        "next_goal": last.next_goal,
                        "action": {"done": args},
                    },
                )
            )
            step.replay = "replayed"
            return None
        note = (
            f"This run follows a recipe. Its last step reads the answer from the page, and could not: {problem}. "
            "Read the answer from this page and finish with done."
        )
        self.decision = Decision(None, note)
        step.replay = "healed"
        if not self.heal:
            self._stop(step, f"step {last.index} (the answer): {problem}")
            return None
        return note

    def _off_answer_page(self, browser: BrowserSession, last: ReplayStep) -> str | None:
        """Why the current page is not the one the recorded answer was read on, with this row's values: another
        path, or a query value that came from a slot (the search for another product) differing; else None.
        An answer is only read where the recording read it: a page left elsewhere (an action that failed, a
        navigation stopped half-way) has other values in the same places."""
        if not last.url:
            return None
        try:
            here = str(browser.page.url)
        except Exception:
            return None
        expected, now = urlsplit(self.url(last.url)), urlsplit(here)
        template = next((s.url for s in self.recipe.steps if s.index == last.index), "")
        slotted = {k for k, v in parse_qsl(urlsplit(template).query) if "{" in v}
        want, got = dict(parse_qsl(expected.query)), dict(parse_qsl(now.query))
        elsewhere = (expected.netloc, expected.path) != (now.netloc, now.path)
        if elsewhere or any(want.get(k) != got.get(k) for k in slotted):
            return f"the page is {here}, where the recorded answer was read on {self.url(last.url)}"
        return None


@dataclass(frozen=True)
class RecipeRows:
    """The pilots of a recipe's rows, one per row (``rows(values, agent, start)``): what a recipe map gives the
    map engine (``MapOptions.pilots``). Plain data, so it travels to an executor's workers with the rows."""

    recipe: Recipe
    heal: bool = True
    url: str | None = None
    """Another base URL for the recorded site (``recipe.map(url=)``)."""

    def __call__(self, values: Mapping[str, Any], agent: Runner | None = None, start: str | None = None) -> RecipePilot:
        return RecipePilot(self.recipe, values, heal=self.heal, url=self.url, agent=agent, start=start)
