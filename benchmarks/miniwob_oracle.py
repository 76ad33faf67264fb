"""The perfect "oracle" model of the MiniWoB++ benchmark, answering over the OpenAI Chat Completions wire.

It runs as a server on 127.0.0.1 (the scripted wire server of the test suite, ``tests/llm/server.py``, with a
responder instead of a queue of replies), so the agent talks to it exactly as it talks to llama-server: the real
``openai`` SDK, a streamed response, ``response_format`` with the AgentOutput schema, the JSON decoded and checked
by the agent. Each request is read as a model reads it: the state message only (the user request, the page's
indexed elements and text, where MiniWoB's instruction is the ``#query`` line at the top), never the page itself.
A plan per task (``miniwob_plans.py``) turns that into the right action; once the page says the episode ended
("Episodes done: 1") the oracle calls ``done``, with success as the page's "Last reward" says.

The usage it reports is measured on the request as sent: prompt tokens of the messages (``llm/tokens.py``), and as
cached the tokens of the prefix shared with the previous request, which is what llama-server's prompt cache
reuses. So "prompt tokens per step" and "cached share" are the agent's own figures, not a model's.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: tests.llm.server

from notebook_agent.llm import get_model
from notebook_agent.llm.tokens import count_tokens
from tests.llm.server import Recorded, Reply, ScriptedServer, sse_reply
from tests.llm.wire import chat_chunk, split

ELEMENT = re.compile(r"^(\t*)\*?\[(\d+)\]<([\w-]+)(.*?)(?:>(.*?))? />(.*)$")
ATTR = re.compile(r"([\w-]+)(?:=(\S*))?")
MODEL_ID = "miniwob-oracle"


@dataclass
class Element:
    index: int
    tag: str
    attrs: dict[str, str]
    text: str
    """The text inside the element (``<button>OK />``)."""
    name: str
    """The text after it (a checkbox's label: ``<input type=checkbox />Email``)."""
    depth: int
    line: int
    """Its line number in the browser state."""

    @property
    def label(self) -> str:
        return (self.text or self.name).strip()

    def attr(self, key: str) -> str:
        return self.attrs.get(key, "")


@dataclass
class State:
    """The state message as the oracle reads it."""

    request: str
    lines: list[str]
    elements: list[Element]
    query: str
    episodes_done: int
    last_reward: float | None
    last_result: str = ""
    """What the agent said the previous action did (the last "Action Results:" of the history)."""

    def text_lines(self) -> list[tuple[int, str]]:
        """The lines that are page text, not elements: (line number, text)."""
        return [(i, t.strip()) for i, t in enumerate(self.lines) if t.strip() and not ELEMENT.match(t.strip("\t"))]

    def find(self, label: str | None = None, *, tag: str | None = None, **attrs: str) -> Element | None:
        for e in self.all(label, tag=tag, **attrs):
            return e
        return None

    def all(self, label: str | None = None, *, tag: str | None = None, **attrs: str) -> list[Element]:
        out = []
        for e in self.elements:
            if tag is not None and e.tag != tag:
                continue
            if label is not None and e.label != label:
                continue
            if any(e.attrs.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            out.append(e)
        return out

    def label_before(self, e: Element) -> str:
        """The nearest text line above ``e`` (a form field's visible label)."""
        before = [t for i, t in self.text_lines() if i < e.line]
        return before[-1] if before else ""


def _goal(action: tuple[str, dict[str, Any]], state: State) -> str:
    """The next goal as a model writes it, naming the element it acts on by its text (so the guards that read
    the goal, such as the small profile's goal rule, are judged on a perfect model's goals too)."""
    index = action[1].get("index")
    element = next((e for e in state.elements if e.index == index), None)
    text = " ".join((element.text or element.name).split()) if element is not None else ""
    return f"{action[0]} on '{text}', as the task asks" if text else f"{action[0]} as the task asks"


def parse_state(message: str) -> State:
    request = _between(message, "<user_request>", "</user_request>").strip()
    browser = _between(message, "<browser_state>", "</browser_state>")
    lines = browser.split("\n")
    start = next((i for i, t in enumerate(lines) if t.strip() == "[Start of page]"), 0)
    lines = lines[start + 1 :]
    elements = []
    for number, raw in enumerate(lines):
        m = ELEMENT.match(raw)
        if m:
            attrs = {k: v for k, v in ATTR.findall(m.group(4) or "")}
            elements.append(
                Element(int(m.group(2)), m.group(3), attrs, m.group(5) or "", m.group(6), len(m.group(1)), number)
            )
    query = next((t.strip() for t in lines if t.strip() and not ELEMENT.match(t)), "")
    results = re.findall(r"Action Results: (.*)", _between(message, "<agent_history>", "</agent_history>"))
    done = re.search(r"Episodes done: (\d+)", browser)
    reward = re.search(r"Last reward: (-?[\d.]+)", browser)
    return State(
        request,
        lines,
        elements,
        query,
        int(done.group(1)) if done else 0,
        float(reward.group(1)) if reward else None,
        results[-1] if results else "",
    )


def _between(text: str, start: str, end: str) -> str:
    a = text.rfind(start)
    if a < 0:
        return ""
    b = text.find(end, a)
    return text[a + len(start) : b if b >= 0 else len(text)]


Action = tuple[str, dict[str, Any]]


@dataclass
class Memory:
    """What the oracle itself said earlier in the episode (a model keeps its own outputs in its context)."""

    actions: list[Action] = field(default_factory=list)
    notes: dict[str, Any] = field(default_factory=dict)

    def clicked(self, index: int) -> bool:
        return ("click_element_by_index", {"index": index}) in self.actions

    def once(self, key: str) -> bool:
        """True the first time ``key`` is asked for: a step of a plan that is done once."""
        if key in self.notes:
            return False
        self.notes[key] = True
        return True


Plan = Callable[[State, Memory], Action]


def click(e: Element) -> Action:
    return "click_element_by_index", {"index": e.index}


def type_text(e: Element, text: str) -> Action:
    return "input_text", {"index": e.index, "text": text}


def select(e: Element, text: str) -> Action:
    return "select_dropdown_option", {"index": e.index, "text": text}


def done(text: str, success: bool) -> Action:
    return "done", {"text": text, "success": success}


class GiveUp(Exception):
    """A plan cannot find on the state what the move needs: the oracle ends with done(success=false, why)."""


class Oracle:
    """The responder: one request in, one AgentOutput out. ``plan`` is set per episode by the harness."""

    def __init__(self) -> None:
        self.plan: Plan | None = None
        self.memory = Memory()
        self.previous = ""
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def begin(self, plan: Plan) -> None:
        with self.lock:
            self.plan, self.memory, self.log = plan, Memory(), []

    def decide(self, state: State) -> tuple[Action, str]:
        if state.episodes_done >= 1:
            reward = state.last_reward if state.last_reward is not None else 0.0
            return done(f"The episode ended with reward {reward:.2f}.", reward > 0), "the page shows the episode ended"
        assert self.plan is not None, "no plan set for this episode"
        previous = self.memory.actions[-1] if self.memory.actions else None
        if state.last_result.startswith("Not done") and previous is not None and not self.memory.notes.get("repeat"):
            # the documented override of a refusal: the same move once more
            self.memory.notes["repeat"] = True
            return previous, "repeat the refused move"
        self.memory.notes["repeat"] = False
        try:
            action = self.plan(state, self.memory)
        except GiveUp as exc:
            return done(f"I cannot do this: {exc}", False), f"gave up: {exc}"
        except Exception as exc:  # a plan that cannot read this state: a failure with its cause, not a dead server
            return done(f"The plan failed: {type(exc).__name__}: {exc}", False), f"plan error: {exc}"
        return action, ""

    def __call__(self, request: Recorded) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        messages = body.get("messages") or []
        rendered = "".join(f"<{m.get('role')}>{_content(m.get('content'))}" for m in messages)
        with self.lock:
            user = next((_content(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
            state = parse_state(user)
            action, note = self.decide(state)
            self.memory.actions.append(action)
            shared = _shared_prefix(self.previous, rendered)
            self.previous = rendered
            self.log.append({"query": state.query, "action": {action[0]: action[1]}, "note": note})
        output = {
            "evaluation_previous_goal": "Done as planned." if self.memory.actions[1:] else "Start",
            "memory": "",
            "next_goal": note or _goal(action, state),
            "action": {action[0]: action[1]},
        }
        text = json.dumps(output, ensure_ascii=False)
        prompt = count_tokens(rendered) + 4 * len(messages)
        cached = min(prompt, count_tokens(shared))
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": count_tokens(text),
            "total_tokens": prompt + count_tokens(text),
            "prompt_tokens_details": {"cached_tokens": cached},
        }
        items: list[Any] = [chat_chunk({"role": "assistant", "content": ""})]
        items += [chat_chunk({"content": c}) for c in split(text, 64)]
        items += [chat_chunk({}, finish="stop"), chat_chunk(usage=usage), "data: [DONE]\n\n"]
        return sse_reply(items)


def _content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
    return ""


def _shared_prefix(a: str, b: str) -> str:
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return b[:n]


def start_oracle() -> tuple[ScriptedServer, Oracle]:
    oracle = Oracle()
    server = ScriptedServer()
    server.responder = oracle
    return server.start(), oracle


def oracle_model(server: ScriptedServer) -> Any:
    """The agent's model for the oracle: Chat Completions to the server, shaped as for llama-server (schema-
    constrained JSON output, the schema in the prompt, the small-model profile under ``--profile auto``)."""
    return get_model(
        f"openai:{MODEL_ID}", base_url=server.url + "/v1", server="llamacpp", output_mode="json_schema", timeout=60
    )
