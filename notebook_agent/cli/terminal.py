"""What every terminal command shares: choosing the model, asking a person at the prompt, printing a run's
page events as they happen (and, while the model is waited on, for how long), and the demo shop served again
where a run recorded by ``notebook-agent demo`` left it."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol, TextIO

if TYPE_CHECKING:
    from ..agent import AnyEvent
    from ..agent.safety.approval import ApprovalAnswer, ApprovalRequest
    from ..core.abort import AbortSignal
    from ..core.model import Model


class Commands(Protocol):
    """Where a sub-command adds its parser (argparse's sub-parsers action, of any parser class)."""

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser: ...


def model_for(name: str | None, task: str) -> tuple[Model, str]:
    from ..config.models import choose_model

    model, note = choose_model(name, task)
    return model, note or f"{model.provider}:{model.id}"


@contextlib.contextmanager
def demo_shop_for(url: str | None, out: TextIO) -> Iterator[bool]:
    """For a command about to start at ``url``: when it is a page of the demo shop's stable address
    (demo/server.py) and nothing answers there, the shop is served there again for the command's life. Yields
    whether the demo shop answers at ``url`` (served here or already), so a replay of a demo run may open it:
    the terminal knows that site, a run file did not choose it."""
    from ..demo.server import answers_as_demo, demo_port, on_stable_address, serve_again

    server = serve_again(url)
    if server is not None:
        print(f"demo shop: served again at {server.url} while this command runs (its run was recorded there)", file=out)
    try:
        yield server is not None or (on_stable_address(url) and answers_as_demo(demo_port()) is True)
    finally:
        if server is not None:
            server.stop()


async def terminal_approver(request: ApprovalRequest) -> ApprovalAnswer:
    from ..agent.safety.approval import ApprovalAnswer

    print(f"\n  ✋ approve {request.action} {json.dumps(request.args)}? ({request.reason})")
    answer = await asyncio.to_thread(input, "     [y]es / [n]o (then a reason): ")
    answer = answer.strip()
    if answer.lower() in ("y", "yes"):
        return ApprovalAnswer(True)
    reason = answer[1:].strip(" :,-") if answer[:1].lower() == "n" else answer
    return ApprovalAnswer(False, reason or None)


async def terminal_ask(question: str, signal: AbortSignal) -> str:
    print(f"\n  ❓ {question}")
    return (await signal.race(asyncio.to_thread(input, "     answer: "))).strip()


class Printer:
    """Prints a run's events; while the model is being waited on it says so, and for how long (on a terminal
    the line counts up each second; otherwise the time is printed once the model answered)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.live = bool(getattr(out, "isatty", lambda: False)())
        self.waiting_since: float | None = None

    async def tick(self) -> None:
        while True:
            await asyncio.sleep(1.0)
            if self.live and self.waiting_since is not None:
                seconds = time.monotonic() - self.waiting_since
                print(f"\r  waiting for the model · {seconds:.0f} s", end="", file=self.out, flush=True)

    def event(self, event: AnyEvent) -> None:
        if event.type == "step_started":
            self.waiting_since = time.monotonic()
            print_event(event, self.out)
            print("  waiting for the model…", end="" if self.live else "\n", file=self.out, flush=True)
            return
        if event.type in ("model_output", "run_finished") and self.waiting_since is not None:
            seconds = time.monotonic() - self.waiting_since
            self.waiting_since = None
            if self.live:
                print("\r\x1b[K", end="", file=self.out)
            said = "answered in" if event.type == "model_output" else "no answer after"
            print(f"  model:  {said} {seconds:.1f} s", file=self.out)
        print_event(event, self.out)


def print_event(event: AnyEvent, out: TextIO) -> None:
    if event.type == "step_started":
        print(f"\n── step {event.step}/{event.max_steps}", file=out)
    elif event.type == "model_output":
        s = event.step
        if s.evaluation_previous_goal:
            print(f"  eval:   {s.evaluation_previous_goal}", file=out)
        if s.next_goal:
            print(f"  goal:   {s.next_goal}", file=out)
        if s.output_error:
            print(f"  invalid output: {s.output_error}", file=out)
    elif event.type == "action_started":
        print(f"  action: {event.action} {json.dumps(event.args, ensure_ascii=False)}", file=out)
    elif event.type == "action_finished":
        mark = "✗" if event.step.is_error else "✓"
        print(f"  {mark} {event.step.result}", file=out)
    elif event.type == "approval_answered":
        verdict = "approved" if event.answer.approved else "denied"
        print(
            f"  ✋ {verdict} ({event.answer.by}){': ' + event.answer.reason if event.answer.reason else ''}", file=out
        )
    elif event.type == "run_finished":
        r = event.result
        mode = f" · output: {r.output_mode}" if r.output_mode else ""
        print(f"\n{r.status}: success={r.success} · {r.steps_text()} · {r.ledger.text()}{mode}", file=out)
        print(r.text, file=out)
