"""An offline "demo model": plays the demo tasks on the demo shop with no API key.

It is a :class:`~notebook_agent.llm.scripted.ScriptedModel` whose every answer is computed from the state
message the page agent sends (the ``<browser_state>`` element lines, the URL, the ``<agent_history>``, read by
``state.py``) by a few plain rules, so it keeps working whatever the element indices are. It fills
``evaluation_previous_goal``, ``memory`` and ``next_goal`` like a real model would, so the notebook view looks
the same as a real run. It costs nothing and counts its tokens offline, as a model on this machine reports them
(``set_prices("demo", ...)`` prices it like a paid one, to try a budget).

``demo_model()`` plays :data:`DEMO_TASK`; ``demo_model("delete_account")`` plays :data:`DELETE_TASK`, the
approval demo (its "Delete account" click is the one a risky-action policy stops); ``demo_model_for(task)``
picks by the task text and otherwise answers with a model that explains it only knows the demo tasks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias
from urllib.parse import urljoin, urlsplit

from ..core.model import Context
from ..llm.errors import ModelConfigError
from ..llm.scripted import ScriptedCall, ScriptedModel, call
from .data_tasks import catalog_step, is_catalog_task, is_price_task, price_step
from .state import Element, PageState, listed_products, parse_price, state_of

DEMO_TASK = (
    "Find the cheapest pair of wireless headphones on the demo shop, add it to the cart, and tell me its name "
    "and price."
)
DELETE_TASK = "Open my account page and delete my account."
UNKNOWN_TASK_TEXT = (
    "The offline demo model only knows the demo tasks; set NOTEBOOK_AGENT_MODEL and an API key to run your own task."
)

TaskKind: TypeAlias = Literal["shop", "delete_account", "price", "catalog"]
TASK_KINDS: tuple[str, ...] = ("shop", "delete_account", "price", "catalog")

SEARCH_QUERY = "wireless headphones"
SORT_OPTION = "Price: low to high"
MACRO = "AgentOutput"

_SITE_SUFFIX = re.compile(r"\s*[·|–—-]\s*Northwind Outfitters\s*$")


def fmt_price(value: float) -> str:
    return f"${value:,.2f}"


# -- building an answer ---------------------------------------------------------------------------------------------
@dataclass
class Decision:
    evaluation: str
    memory: str
    next_goal: str
    action: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_call(self) -> ScriptedCall:
        return call(
            MACRO,
            {
                "evaluation_previous_goal": self.evaluation,
                "memory": self.memory,
                "next_goal": self.next_goal,
                "action": {self.action: self.args},
            },
        )


def _done(evaluation: str, memory: str, text: str, success: bool) -> Decision:
    goal = "Report the result to the user." if success else "Stop and explain what happened."
    return Decision(evaluation, memory, goal, "done", {"text": text, "success": success})


def _guard(state: PageState, memory: str) -> Decision | None:
    """Stop cleanly on the last step, or when the same action keeps repeating."""
    if state.max_steps and state.step >= state.max_steps:
        return _done(
            "I am out of steps.",
            memory,
            "I could not finish the task within the step limit.",
            False,
        )
    recent = [(h.action, json.dumps(h.args, sort_keys=True)) for h in state.history[-3:]]
    if len(recent) == 3 and recent[0] == recent[1] == recent[2]:
        return _done(
            "The last three actions were identical and did not get me further.",
            memory,
            "I got stuck repeating the same action on the demo shop, so I stopped.",
            False,
        )
    return None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/" if parts.scheme and parts.netloc else "/"


def _last_memory(state: PageState) -> str:
    for h in reversed(state.history):
        if h.memory:
            return h.memory
    return ""


_REMEMBERED = re.compile(r"Cheapest wireless headphones: (?P<name>.+?) at \$(?P<price>[\d,]+(?:\.\d+)?)")


# -- the shop task --------------------------------------------------------------------------------------------------
def _is_wireless_headphones(name: str) -> bool:
    low = name.lower()
    return "wireless" in low and "headphone" in low


def _search_box(state: PageState) -> Element | None:
    for e in state.elements:
        kind = e.attrs.get("type", "")
        if e.tag == "input" and kind in ("search", "text", "") and re.search(r"search|\bq\b", e.label + " " + kind):
            return e
    return None


def shop_step(state: PageState) -> Decision:
    """One step of :data:`DEMO_TASK`."""
    remembered = _REMEMBERED.search(_last_memory(state))
    base_memory = "Task: find the cheapest wireless headphones, add them to the cart, report name and price."
    memory = remembered.group(0) + "." if remembered else base_memory
    stop = _guard(state, memory)
    if stop is not None:
        return stop
    if not state.url:
        return _done(
            "I cannot see a page.",
            memory,
            "I could not read the browser state, so I could not use the demo shop.",
            False,
        )
    last = state.last

    # 1. A product page: add to cart, then report.
    if state.page == "product.html":
        name = _SITE_SUFFIX.sub("", state.title).strip() or (remembered.group("name") if remembered else "")
        price_text = fmt_price(parse_price(state.text) or 0.0)
        if remembered and remembered.group("name") == name:
            price_text = f"${remembered.group('price')}"
        memory = f"Cheapest wireless headphones: {name} at {price_text}."
        if name and not _is_wireless_headphones(name):
            return Decision(
                f"This product page ({name}) is not a pair of wireless headphones.",
                base_memory,
                "Go to the search results for wireless headphones, sorted by price.",
                "go_to_url",
                {"url": urljoin(_origin(state.url), "search.html?q=wireless+headphones&sort=price-asc")},
            )
        if re.search(r"added to cart", state.text, re.IGNORECASE):
            return _done(
                f"Success: the page confirms that {name} was added to the cart.",
                memory + " It is in the cart.",
                f"Cheapest wireless headphones: {name} at {price_text}",
                True,
            )
        button = state.find(r"add to (?:cart|bag|basket)", tags=("button", "input", "a"))
        if button is None:
            return _done(
                "The product page has no Add to cart button.",
                memory,
                f"I found {name} at {price_text}, but could not find a way to add it to the cart.",
                False,
            )
        return Decision(
            f"Success: the product page for {name} is open and shows {price_text}.",
            memory + " Next: add it to the cart.",
            f"Click 'Add to cart' for {name}.",
            "click_element_by_index",
            {"index": button.index},
        )

    # 2. Search results for the query: sort by price, then open the cheapest.
    query = state.query.get("q", "").lower()
    if state.page == "search.html" and all(w in query for w in SEARCH_QUERY.split()):
        products = listed_products(state)
        matches = [p for p in products if _is_wireless_headphones(p.name)]
        if not matches:
            return _done(
                f"The search for '{query}' shows no wireless headphones.",
                memory,
                "The demo shop has no wireless headphones matching the search.",
                False,
            )
        listing = "; ".join(f"{p.name} {fmt_price(p.price)}" for p in matches)
        sort = next(
            (
                e
                for e in state.elements
                if e.tag == "select" and SORT_OPTION.lower() in e.attrs.get("options", "").lower()
            ),
            None,
        )
        sorted_already = last is not None and last.action == "select_dropdown_option"
        if sort is not None and sort.attrs.get("value", "").lower() != SORT_OPTION.lower() and not sorted_already:
            return Decision(
                f"Success: the search shows {len(matches)} wireless headphones.",
                f"Found: {listing}.",
                "Sort the results by price, low to high, to see the cheapest first.",
                "select_dropdown_option",
                {"index": sort.index, "text": SORT_OPTION},
            )
        cheapest = min(matches, key=lambda p: p.price)
        evaluation = (
            "Success: the results are sorted by price, lowest first."
            if sort is not None and sort.attrs.get("value", "").lower() == SORT_OPTION.lower()
            else f"Success: the search shows {len(matches)} wireless headphones."
        )
        return Decision(
            evaluation,
            f"Cheapest wireless headphones: {cheapest.name} at {fmt_price(cheapest.price)}. Compared: {listing}.",
            f"Open the product page of {cheapest.name}, the cheapest.",
            "click_element_by_index",
            {"index": cheapest.element.index},
        )

    # 3. Anywhere else: search for the query.
    box = _search_box(state)
    if box is None:
        target = urljoin(_origin(state.url), "index.html")
        if last is not None and last.action == "go_to_url":
            return _done(
                "The shop's home page has no search box.",
                memory,
                "I could not find a search box on the demo shop.",
                False,
            )
        return Decision(
            "There is no search box on this page.",
            memory,
            "Go to the shop's home page to search from there.",
            "go_to_url",
            {"url": target},
        )
    if box.attrs.get("value", "").strip().lower() != SEARCH_QUERY:
        evaluation = (
            "Nothing done yet: the demo shop is open and has a search box."
            if last is None
            else "The page has a search box I can use."
        )
        return Decision(
            evaluation,
            memory,
            f"Type '{SEARCH_QUERY}' into the search box.",
            "input_text",
            {"index": box.index, "text": SEARCH_QUERY},
        )
    submit = next(
        (e for e in state.elements if e.line > box.line and e.tag in ("button", "input") and "search" in e.label),
        None,
    )
    evaluation = f"Success: the search box now contains '{SEARCH_QUERY}'."
    if submit is not None:
        return Decision(
            evaluation,
            memory,
            "Submit the search with the Search button.",
            "click_element_by_index",
            {"index": submit.index},
        )
    return Decision(evaluation, memory, "Press Enter to submit the search.", "send_keys", {"keys": "Enter"})


# -- the delete-account task ----------------------------------------------------------------------------------------
_DENIED = re.compile(r"\b(denied|blocked|declined|rejected|not approved)\b", re.IGNORECASE)


def delete_account_step(state: PageState) -> Decision:
    """One step of :data:`DELETE_TASK`."""
    memory = "Task: open the account page and delete the account."
    stop = _guard(state, memory)
    if stop is not None:
        return stop
    last = state.last
    text = state.text.lower()
    if "account has been deleted" in text:
        return _done(
            "Success: the site says the account has been deleted.",
            "The account was deleted after confirmation.",
            "Your account has been deleted: the shop confirmed “Your account has been deleted”.",
            True,
        )
    denied = next(
        (h for h in reversed(state.history) if h.action == "click_element_by_index" and _DENIED.search(h.result)), None
    )
    if denied is not None:  # never retry what the person (or the policy) refused
        reason = " ".join(denied.result.split())
        return _done(
            "Failed: clicking 'Delete account' was not allowed."
            if denied is last
            else "The earlier click on 'Delete account' was not allowed, so I will not try again.",
            "The delete click was denied; the account is untouched.",
            f"I did not delete your account: the click on “Delete account” was denied ({reason}). Nothing was changed.",
            False,
        )
    if "deletion cancelled" in text or "deletion canceled" in text:
        return _done(
            "The confirmation dialog was dismissed, so the site cancelled the deletion.",
            "The account was not deleted.",
            "The site asked for confirmation and the deletion was cancelled, so your account was not deleted.",
            False,
        )
    if state.page == "account.html":
        button = state.find(r"delete (?:my )?account", tags=("button", "input", "a"))
        if button is None:
            return _done(
                "The account page has no 'Delete account' button.",
                memory,
                "I opened your account page but found no way to delete the account.",
                False,
            )
        return Decision(
            "Success: the account page is open; it has a red 'Delete account' button.",
            memory + " On the account page now.",
            "Click 'Delete account' (the site will ask to confirm).",
            "click_element_by_index",
            {"index": button.index},
        )
    link = state.find(r"^(?:your |my )?account\b", tags=("a",))
    if link is not None:
        return Decision(
            "Nothing done yet: the shop is open." if last is None else "I am not on the account page yet.",
            memory,
            "Open the account page from the navigation bar.",
            "click_element_by_index",
            {"index": link.index},
        )
    if last is not None and last.action == "go_to_url":
        return _done("The account page did not open.", memory, "I could not open your account page.", False)
    return Decision(
        "There is no account link on this page.",
        memory,
        "Go to the account page directly.",
        "go_to_url",
        {"url": urljoin(_origin(state.url), "account.html")},
    )


# -- models ---------------------------------------------------------------------------------------------------------
StepRule: TypeAlias = Callable[[PageState], Decision]


def _data_rule(step: Callable[[PageState], tuple[str, str, str, dict[str, Any]]]) -> StepRule:
    """A data task's rule (:mod:`.data_tasks`) as a :class:`Decision`, with the same stop on the last step."""

    def rule(state: PageState) -> Decision:
        memory = f"Task: {state.task.strip()[:160]}"
        stop = _guard(state, memory)
        if stop is not None:
            return stop
        evaluation, goal, action, args = step(state)
        return Decision(evaluation, memory, goal, action, args)

    return rule


_RULES: dict[str, StepRule] = {
    "shop": shop_step,
    "delete_account": delete_account_step,
    "price": _data_rule(price_step),
    "catalog": _data_rule(catalog_step),
}


def _responder(rule: StepRule) -> Callable[[Context], ScriptedCall]:
    def respond(context: Context) -> ScriptedCall:
        state = state_of(context)
        decision = rule(state)
        last = state.last
        if last is not None and last.result.startswith("Error") and decision.action != "done":
            problem = " ".join(last.result.removeprefix("Error:").split())[:160]
            decision.evaluation = f"Failed: {problem} Trying again from what the page shows now."
        return decision.to_call()

    return respond


def demo_model(task_kind: TaskKind | str = "shop", *, delay: float = 0.0) -> ScriptedModel:
    """The offline model for one demo task: ``"shop"`` (:data:`DEMO_TASK`) or ``"delete_account"``
    (:data:`DELETE_TASK`). ``delay`` slows the streamed output (seconds per fragment) for a livelier view."""
    rule = _RULES.get(task_kind)
    if rule is None:
        raise ValueError(f"Unknown demo task kind {task_kind!r}; use one of {', '.join(TASK_KINDS)}.")
    return ScriptedModel(
        [],
        id=f"offline-{task_kind.replace('_', '-')}",
        provider="demo",
        delay=delay,
        on_exhausted=_responder(rule),
        counted=True,
    )


_UNKNOWN_TASK_ANSWER = Decision(
    "This task is not one of the offline demo tasks.",
    "",
    "Explain that a real model is needed for this task.",
    "done",
    {"text": UNKNOWN_TASK_TEXT, "success": False},
)


def unknown_task_model() -> ScriptedModel:
    """A model that immediately gives up, explaining that it only knows the demo tasks."""
    return ScriptedModel(
        [],
        id="offline-unknown",
        provider="demo",
        on_exhausted=lambda _ctx: _UNKNOWN_TASK_ANSWER.to_call(),
        counted=True,
    )


def task_kind_for(task: str) -> TaskKind | None:
    """Which demo task ``task`` is (by its wording), or None."""
    low = " ".join(task.lower().split())
    if is_price_task(task):  # "the price of AeroBeat Wireless Headphones" is a lookup, not the shopping task
        return "price"
    if low == DEMO_TASK.lower() or ("headphone" in low and ("cheap" in low or "wireless" in low)):
        return "shop"
    if low == DELETE_TASK.lower() or ("delete" in low and "account" in low):
        return "delete_account"
    if is_catalog_task(task):
        return "catalog"
    return None


def demo_model_for(task: str, *, delay: float = 0.0) -> ScriptedModel:
    """The offline model that plays ``task`` if it is a demo task; otherwise one that explains its limits."""
    kind = task_kind_for(task)
    return demo_model(kind, delay=delay) if kind is not None else unknown_task_model()


def any_task_demo_model(*, delay: float = 0.0) -> ScriptedModel:
    """The offline model for an agent whose task is not known yet (``PageAgent(model="demo")``): each call reads
    the task from the state message and plays that demo task, or explains its limits."""

    def respond(context: Context) -> ScriptedCall:
        kind = task_kind_for(state_of(context).task)
        return _responder(_RULES[kind])(context) if kind is not None else _UNKNOWN_TASK_ANSWER.to_call()

    return ScriptedModel([], id="offline", provider="demo", delay=delay, on_exhausted=respond, counted=True)


def demo_model_named(model_id: str = "offline", *, task: str | None = None, delay: float = 0.0) -> ScriptedModel:
    """The ``demo`` provider of the model registry (``get_model("demo")``, ``--model demo``): ``demo`` or
    ``demo:offline`` plays whichever demo task it is given (``task=`` picks it up front), ``demo:shop`` and
    ``demo:delete_account`` play one task. The ids a run records (``demo:offline-shop``) name the same models,
    so ``%agent rerun`` of a demo run works."""
    kind = model_id.removeprefix("offline-").replace("-", "_")
    if kind in ("", "offline", "unknown"):
        return demo_model_for(task, delay=delay) if task is not None else any_task_demo_model(delay=delay)
    if kind in TASK_KINDS:
        return demo_model(kind, delay=delay)
    raise ModelConfigError(
        f"Unknown demo model {'demo:' + model_id!r}: use demo (any demo task), "
        f"{', '.join('demo:' + k for k in TASK_KINDS)}."
    )
