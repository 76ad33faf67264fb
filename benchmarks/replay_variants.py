"""How ``PageAgent.replay`` copes with changed pages: record a task once, replay it on changed versions of the site.

Records four runs on the original pages, each checked to end in the task's end state: the demo shop task
(``DEMO_TASK`` with the offline ``demo`` model on ``demo_url()``) and three tasks of benchmarks/local_suite.yaml on
benchmarks/local_site (``login``, ``contact-form``: three fields, a select and a textarea; ``checkboxes``), those
with a ``ScriptedModel`` that finds each element by its label or text in the state message. Then it replays
each recording on each variant of its site (benchmarks/variants_site.py: ``original`` — the baseline, ``ids``
renamed, list ``shuffle``, a cookie ``banner``, button and link text in ``caps``, the content in an ``iframe``,
the needed button ``gone``) twice:

- ``heal=False``: how many steps replay free before the replay stops, and why it stopped;
- ``heal=True`` with a scripted *healer*: a model that reads the heal note in the state message (the step that
  "could not be replayed as recorded", its action and the element it was on) and redoes that action on the
  element it finds by role and text in the current state (case-insensitive; for the ``gone`` variant it knows
  the replacement's name, or presses Enter in the search box) — a stand-in for a model that does the right thing.

For each task × variant it prints the steps replayed free / healed / failed, whether the task's end state was
reached (the demo cart holds exactly the cheapest wireless headphones, localStorage ``northwind.cart``; the
fixture tasks' ``check.text`` of local_suite.yaml, read in every frame), the replay's seconds and the healer's
model calls; and it flags a replayed (not healed) step whose element differs in role or name from the recorded
one: a replay acting on a wrong element would be a bug. Figures, not asserts. Every server runs on 127.0.0.1.

Each variant is served on its own origin at the root, as the recorded site was; ``--prefix /v2`` serves them under a
path instead, to see what a replay with ``url=`` carrying a path prefix costs. About a minute on 2 cores.

Run: .venv/bin/python benchmarks/replay_variants.py [--tasks demo,login,...] [--variants ids,caps,...] [--prefix /v2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot import serve  # benchmarks/snapshot.py: a quiet static server on 127.0.0.1
from variants_site import VARIANTS, VariantServer

from notebook_agent.agent import PageAgent
from notebook_agent.agent.evaluate import load_suite
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.runs.result import PageAgentResult
from notebook_agent.agent.step.replay_pilot import origin, rebase, replayable
from notebook_agent.browser import BrowserSession
from notebook_agent.browser.actions import action_facts
from notebook_agent.core.messages import UserMessage
from notebook_agent.core.model import Context
from notebook_agent.demo import DEMO_TASK, demo_url
from notebook_agent.llm.scripted import ScriptedCall, ScriptedModel

HERE = Path(__file__).resolve().parent
REPLAY_TIMEOUT = 90.0
CHEAPEST = [{"id": "p03", "qty": 1}]  # TrailSound Wireless Headphones Lite, $54.99

# -- reading the state message ------------------------------------------------------------------------------------

ELEMENT = re.compile(r"\s*\*?\[(\d+)\]<(\w+)([^>]*)>(.*)$")
KINDS = {  # a recorded role (or tag) -> the tags an element of that kind shows in the state, and its input types
    "button": (("button", "input"), ("", "submit", "button", "reset")),
    "link": (("a",), ("",)),
    "textbox": (("input", "textarea"), ("", "text", "email", "password", "search", "tel", "url", "number")),
    "searchbox": (("input",), ("search",)),
    "combobox": (("select",), ("",)),
    "checkbox": (("input",), ("checkbox",)),
}
#: The gone variant's replacements: what a model would click instead of the recorded button.
INSTEAD = {"sign in": "continue", "send message": "submit", "save settings": "apply"}


def state_of(ctx: Context) -> str:
    msg = ctx.messages[-1]
    return msg.text if isinstance(msg, UserMessage) else ""


def loose(text: str) -> str:
    return " ".join(text.split()).casefold()


def elements(state: str) -> list[tuple[int, str, str, str]]:
    """(index, tag, attributes, text) of each element line of the ``<browser_state>`` part of ``state``."""
    part = state[state.rfind("<browser_state>") :]
    out = []
    for line in part.splitlines():
        m = ELEMENT.match(line)
        if m:
            out.append((int(m.group(1)), m.group(2), m.group(3), m.group(4).replace("/>", " ").strip()))
    return out


def find_index(state: str, kind: str, name: str) -> int | None:
    """The element of this kind whose text or label is ``name`` (case and spacing aside), else one containing it."""
    tags, types = KINDS.get(kind, ((), ()))
    found = []
    for i, tag, attrs, text in elements(state):
        kind_of = re.search(r"\btype=(\w+)", attrs)
        if not tags or (tag in tags and (tag != "input" or (kind_of.group(1) if kind_of else "") in types)):
            found.append((i, text))
    want = loose(name)
    exact = [i for i, text in found if loose(text) == want]
    near = [i for i, text in found if want and want in loose(text)]
    return (exact or near)[0] if exact or near else None


def step(action: str, kind: str, name: str, **args: Any) -> Callable[[Context], ScriptedCall]:
    """A recording step: ``action`` on the element of ``kind`` named ``name`` in the state it is given."""

    def make(ctx: Context) -> ScriptedCall:
        index = find_index(state_of(ctx), kind, name)
        if index is None:
            raise LookupError(f"no {kind} {name!r} in:\n{state_of(ctx)}")
        return agent_output(action, {"index": index, **args}, next_goal=f"{action} on the {kind} '{name}'")

    return make


def done(text: str, success: bool = True) -> ScriptedCall:
    return agent_output("done", {"text": text, "success": success}, next_goal="report")


# -- the healer --------------------------------------------------------------------------------------------------

NOTE = re.compile(
    r"could not be replayed as recorded: (?P<why>.*?)\. That step's goal was: .*?; it did (?P<action>\w+) "
    r"(?P<args>\{.*?\}) on (?:the (?P<kind>[\w-]+)(?: '(?P<name>.*?)')?|an element)\. Do what that step did",
    re.S,
)


def heal(ctx: Context) -> ScriptedCall:
    """Redo the step the latest heal note names, on the element of the same kind and name in this state."""
    state = state_of(ctx)
    notes = list(NOTE.finditer(state))
    if not notes:
        if "no steps left" in state:
            return done("The recorded steps are all done.")
        return done("healer: no heal note in the state", success=False)
    note = notes[-1]
    action, kind, name = note["action"], note["kind"] or "", note["name"] or ""
    args = json.loads(note["args"])
    if "index" in args:
        index = find_index(state, kind, name)
        if index is None and loose(name) in INSTEAD:
            index = find_index(state, kind, INSTEAD[loose(name)])
        if index is None and kind == "button" and loose(name) == "search":  # no Search button: Enter in the box
            box = find_index(state, "searchbox", "Search products")
            if box is not None:
                return agent_output("send_keys", {"keys": "Enter", "index": box}, next_goal="heal: submit the search")
        if index is None:
            return done(f"healer: no {kind} {name!r} on this page", success=False)
        args["index"] = index
    return agent_output(action, args, next_goal=f"heal: {action} on the {kind} '{name}'")


# -- tasks -------------------------------------------------------------------------------------------------------


async def frames_text(browser: BrowserSession) -> str:
    texts = []
    for frame in browser.page.frames:
        try:
            texts.append(await frame.evaluate("() => document.body ? document.body.innerText : ''"))
        except Exception:  # a frame navigating away
            pass
    return "\n".join(texts)


@dataclass
class Task:
    id: str
    site: str
    """"demo" or "site" (variants_site.SITES)."""
    task: str
    url: str
    model: Any
    expect_text: str = ""
    secrets: dict[str, str] = field(default_factory=dict)
    """Typed as ``<secret>name</secret>``: a password typed as it is would be recorded redacted."""
    recorded: PageAgentResult | None = None

    async def check(self, browser: BrowserSession) -> tuple[bool, str]:
        """Whether the end state was reached, and what was there instead."""
        if self.site == "demo":
            cart = await browser.page.evaluate("() => JSON.parse(localStorage.getItem('northwind.cart') || '[]')")
            return cart == CHEAPEST, f"cart {cart}"
        text = await frames_text(browser)
        return self.expect_text in text, "no " + repr(self.expect_text)


def fixture_scripts() -> dict[str, list[Any]]:
    return {
        "login": [
            step("input_text", "textbox", "Username", text="ada"),
            step("input_text", "textbox", "Password", text="<secret>password</secret>"),
            step("click_element_by_index", "button", "Sign in"),
            done("Signed in as ada."),
        ],
        "contact-form": [
            step("input_text", "textbox", "Name", text="Grace Hopper"),
            step("input_text", "textbox", "Email", text="grace@example.com"),
            step("select_dropdown_option", "combobox", "Topic", text="Support"),
            step("input_text", "textbox", "Message", text="My drill will not charge."),
            step("click_element_by_index", "button", "Send message"),
            done("Message sent."),
        ],
        "checkboxes": [
            step("click_element_by_index", "checkbox", "Email"),
            step("click_element_by_index", "checkbox", "SMS"),
            step("click_element_by_index", "checkbox", "Push"),
            step("click_element_by_index", "button", "Save settings"),
            done("Email and SMS on, Push off, saved."),
        ],
    }


def tasks(site_url: str) -> list[Task]:
    suite = {t.id: t for t in load_suite(HERE / "local_suite.yaml", {"site": site_url, "demo": demo_url()}).tasks}
    out = [Task("demo", "demo", DEMO_TASK, demo_url(), "demo")]
    for tid, script in fixture_scripts().items():
        t = suite[tid]
        assert t.url and t.check.text, f"{tid}: the suite gives no url or check text"
        secrets = {"password": "lovelace"} if tid == "login" else {}
        out.append(Task(tid, "site", t.task, t.url, ScriptedModel(script), t.check.text, secrets))
    return out


async def record(browser: BrowserSession, task: Task) -> PageAgentResult:
    secrets = {origin(task.url): task.secrets} if task.secrets else None
    agent = PageAgent(model=task.model, browser=browser, start_url=task.url, screenshots=False, secrets=secrets)
    result = await agent.run(task.task)
    ok, seen = await task.check(browser)
    untargeted = [s.index for s in replayable(result) if action_facts(s.action or "").on_element and not s.target]
    if not (result.success and ok) or untargeted:
        raise SystemExit(
            f"recording {task.id} failed: status {result.status}, success {result.success}, end state {ok} "
            f"({seen}), steps without fingerprint {untargeted}: {[(s.action, s.result) for s in result.steps]}"
        )
    return result


# -- replaying ---------------------------------------------------------------------------------------------------


@dataclass
class Replay:
    counts: dict[str, int] = field(default_factory=dict)
    ok: bool = False
    seen: str = ""
    seconds: float = 0.0
    calls: int = 0
    stopped: str = ""
    errors: list[str] = field(default_factory=list)  # replayed steps whose action failed; a replay that broke
    wrong: list[str] = field(default_factory=list)  # replayed (not healed) steps on another element than recorded
    changed: str = ""  # how many of the pages the recording acted on the variant changes (HTML or scripts)

    def cell(self, heal: bool) -> str:
        c = self.counts
        parts = [str(c.get("replayed", 0))] + ([str(c.get("healed", 0))] if heal else []) + [str(c.get("failed", 0))]
        flag = "!" if self.wrong else ("E" if self.errors else "")
        return f"{'/'.join(parts):>7} {'yes' if self.ok else 'NO':>3}{flag:1} {self.seconds:5.1f}"


def changed_pages(task: Task, server: VariantServer, variant: str) -> str:
    """``k/n``: the variant changes k of the n pages the recording acted on (their HTML or the scripts they load)."""
    assert task.recorded is not None
    old = origin(task.recorded.steps[0].url)
    urls = sorted({s.url for s in replayable(task.recorded) if s.url})
    n = 0

    def fetch(url: str) -> bytes:
        with urllib.request.urlopen(url, timeout=10) as response:
            return bytes(response.read())

    for url in urls:
        pages = []
        for base in (server.base("original", task.site), server.base(variant, task.site)):
            page = rebase(url, old, base)
            html = fetch(page)
            scripts = re.findall(rb'<script src="([^"]+)"', html)
            pages.append([html] + [fetch(urljoin(page, src.decode())) for src in scripts])
        n += pages[0] != pages[1]
    return f"{n}/{len(urls)}"


def who(target: dict[str, Any] | None) -> tuple[str, str]:
    t = target or {}
    return str(t.get("role") or t.get("tag") or ""), loose(str(t.get("name") or t.get("text") or t.get("label") or ""))


def wrong_elements(recorded: PageAgentResult, result: PageAgentResult) -> list[str]:
    out = []
    for now, then in zip(result.steps, replayable(recorded), strict=False):
        if now.replay != "replayed" or not action_facts(then.action or "").on_element or not then.target:
            continue
        if who(now.target) != who(then.target):
            out.append(f"step {now.index} {then.action} on {who(now.target)} instead of {who(then.target)} ({now.url})")
    return out


async def replay(browser: BrowserSession, task: Task, base: str, heal_on: bool) -> Replay:
    out = Replay()
    await browser.page.goto(base + "/index.html")
    await browser.page.evaluate("() => localStorage.clear()")
    model = ScriptedModel([], on_exhausted=heal)
    secrets = {origin(base): task.secrets} if task.secrets else None
    agent = PageAgent(model=model, browser=browser, screenshots=False, secrets=secrets)
    assert task.recorded is not None
    started = time.perf_counter()
    try:
        result = await asyncio.wait_for(agent.replay(task.recorded, heal=heal_on, url=base), REPLAY_TIMEOUT)
    except TimeoutError:
        agent.stop("timed out")
        out.errors.append(f"the replay did not end in {REPLAY_TIMEOUT:.0f} s")
        return out
    except Exception as exc:
        out.errors.append(f"the replay raised {type(exc).__name__}: {exc}")
        return out
    finally:
        out.seconds = time.perf_counter() - started
        out.calls = len(model.requests)
    out.counts = result.replay_counts
    out.ok, out.seen = await task.check(browser)
    if result.status == "error":
        out.errors.append(f"run error: {result.error}")
    out.errors += [f"step {s.index} {s.action}: {s.result[:120]}" for s in result.steps if s.is_error and s.replay]
    out.wrong = wrong_elements(task.recorded, result)
    if not heal_on and out.counts.get("failed"):
        out.stopped = result.text.removeprefix("The replay stopped at ").split(". Replay with healing on")[0]
    elif heal_on and not result.success:
        out.stopped = f"ended unsuccessfully: {result.text[:160]}"
    return out


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default="", help="task ids (default: demo,login,contact-form,checkboxes)")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="variants, comma-separated")
    parser.add_argument("--prefix", default="", help="serve every variant under this path (e.g. /v2): url= with a path")
    args = parser.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        parser.error(f"unknown variants {sorted(unknown)}; known: {', '.join(VARIANTS)}")
    t0 = time.perf_counter()
    fixture, port = serve(HERE / "local_site")
    rows: list[tuple[Task, str, Replay, Replay]] = []
    try:
        with VariantServer(args.prefix) as server:
            async with BrowserSession() as browser:
                wanted = set(args.tasks.split(",")) if args.tasks else None
                chosen = [t for t in tasks(f"http://127.0.0.1:{port}") if wanted is None or t.id in wanted]
                for task in chosen:
                    task.recorded = await record(browser, task)
                    steps = [s.action or "" for s in replayable(task.recorded)]
                    print(f"recorded {task.id}: {len(steps)} steps ({', '.join(steps)}), end state reached", flush=True)
                for task in chosen:
                    for variant in variants:
                        base = server.base(variant, task.site)
                        free = await replay(browser, task, base, False)
                        healed = await replay(browser, task, base, True)
                        free.changed = changed_pages(task, server, variant)
                        rows.append((task, variant, free, healed))
                        print(f"  {task.id:12} {variant:8} {free.cell(False)} | {healed.cell(True)}", flush=True)
    finally:
        fixture.shutdown()
        fixture.server_close()
    print_table(rows)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    return 1 if any(f.wrong or h.wrong for _, _, f, h in rows) else 0


def print_table(rows: list[tuple[Task, str, Replay, Replay]]) -> None:
    print("\nsteps replayed free / healed / failed · end state reached · replay seconds · healer model calls")
    print("pages: how many of the pages the recording acted on the variant changes")
    print("(! a replayed step acted on another element than recorded; E a step's action failed, or the replay broke)")
    head = (
        f"{'task':12} {'variant':8} {'pages':>5} | {'heal=False':^17} | {'heal=True':^17} calls | heal=False stopped at"
    )
    print(head + "\n" + "-" * (len(head) + 20))
    notes: list[str] = []
    for task, variant, free, healed in rows:
        why = free.stopped or ("-" if not free.errors else free.errors[0])
        short = re.sub(r" was not found with confidence: .*", " not found", why)
        print(
            f"{task.id:12} {variant:8} {free.changed:>5} | {free.cell(False)} | {healed.cell(True)} "
            f"{healed.calls:5} | {short}"
        )
        if free.stopped:
            notes.append(f"{task.id} {variant} heal=False stopped at {free.stopped}")
        for mode, r in (("heal=False", free), ("heal=True", healed)):
            if r.wrong or r.errors or (not r.ok and mode == "heal=True"):
                detail = "; ".join(r.wrong + r.errors + ([f"end state: {r.seen}"] if not r.ok else []))
                notes.append(f"{task.id} {variant} {mode}: {detail} {r.stopped if mode == 'heal=True' else ''}")
    if notes:
        print("\nnotes:\n" + "\n".join(f"- {n}" for n in notes))


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
