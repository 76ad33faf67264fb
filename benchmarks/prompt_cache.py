"""How much of each step's request a prompt cache can reuse: the state message's order against the old one.

A provider's prompt cache (llama-server's slot cache, OpenAI's automatic caching, Anthropic's breakpoints)
reuses the longest prefix a request shares with an earlier one. For each step of real runs (the offline demo
model on the demo shop's tasks, real Chromium) this prints the request's prompt tokens (system prompt, the
AgentOutput schema and the state message, o200k) and the tokens it shares as a prefix with the previous
step's request, for the state message as it is built now and, as the baseline in the same run, for the order
it had before (step counter and time before the history; the last result whole and earlier ones clipped, so
an entry changed after it was sent). Tokens a cache reuses are not re-read: on llama-server a step's prompt
time is about proportional to the tokens it has to process (see benchmarks/local_model.py for seconds).

Run: .venv/bin/python benchmarks/prompt_cache.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Sequence
from datetime import datetime

from notebook_agent.agent import PageAgent, PageAgentResult
from notebook_agent.agent.prompt.state_message import HISTORY_RESULT_CHARS, clip, format_args, state_message
from notebook_agent.agent.runs.result import PageStep
from notebook_agent.browser import BrowserSession
from notebook_agent.demo import CATALOG_TASK, DEMO_TASK, PRICE_TASK, demo_url
from notebook_agent.llm.tokens import count_tokens


def old_order(task: str, step: PageStep, max_steps: int, history: Sequence[PageStep | str], page: str) -> str:
    """The state message in the order it had before (the baseline): step info first, last result whole."""
    lines = ["<agent_state>", "<user_request>", task, "</user_request>", "<step_info>"]
    lines += [f"Step {step.index} of {max_steps}. Current time: {datetime.now():%Y-%m-%d %H:%M}", "</step_info>"]
    lines += ["</agent_state>", "", "<agent_history>"]
    done = [h for h in history if not isinstance(h, PageStep) or h.index < step.index]
    last = next((h for h in reversed(done) if isinstance(h, PageStep)), None)
    for item in done:
        if isinstance(item, str):
            lines.append(f"<sys>{item}</sys>")
            continue
        lines += [f"<step_{item.index}>", f"Evaluation of Previous Step: {item.evaluation_previous_goal}"]
        lines += [f"Memory: {item.memory}", f"Next Goal: {item.next_goal}"]
        lines += [f"Action: {item.action} {format_args(item.args)}"]
        lines += [f"Action Results: {item.result if item is last else clip(item.result, HISTORY_RESULT_CHARS)}"]
        lines.append(f"</step_{item.index}>")
    lines += ["</agent_history>", "", "<browser_state>", page, "</browser_state>"]
    return "\n".join(lines)


def shared_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


def page_of(state: str) -> str:
    return state.split("<browser_state>\n", 1)[1].rsplit("\n</browser_state>", 1)[0]


def requests(result: PageAgentResult) -> list[tuple[str, str]]:
    """(request now, request in the old order) per step: fixed part + state message, rebuilt from the run."""
    out = []
    history: list[PageStep | str] = []
    for step in result.steps:
        assert step.request is not None
        fixed = step.request.system_prompt + json.dumps(step.request.tools)
        history.extend(step.observations)
        page = page_of(step.request.state)
        now = state_message(result.task, step, 20, history, page)
        old = old_order(result.task, step, 20, history, page)
        out.append((fixed + now, fixed + old))
        history.append(step)
    return out


async def main() -> None:
    tasks = [
        ("cheapest headphones", DEMO_TASK),
        ("price list", CATALOG_TASK),
        ("one price", PRICE_TASK.format(product="Lumen 400 Headlamp")),
    ]
    print(f"{'task':22} {'step':>4} {'prompt':>7} {'cached now':>11} {'share':>6} {'cached before':>14} {'share':>6}")
    totals = {"prompt": 0, "now": 0, "before": 0}
    async with BrowserSession() as browser:
        for name, task in tasks:
            result = await PageAgent(model="demo", browser=browser, start_url=demo_url(), screenshots=False).run(task)
            pairs = requests(result)
            for k, (now, old) in enumerate(pairs):
                prompt = count_tokens(now)
                cached_now = count_tokens(shared_prefix(now, pairs[k - 1][0])) if k else 0
                cached_old = count_tokens(shared_prefix(old, pairs[k - 1][1])) if k else 0
                totals["prompt"] += prompt if k else 0
                totals["now"] += cached_now
                totals["before"] += cached_old
                print(
                    f"{name:22} {k + 1:>4} {prompt:>7,} {cached_now:>11,} {cached_now / prompt:>6.0%} "
                    f"{cached_old:>14,} {cached_old / prompt:>6.0%}"
                )
    print(
        f"\nsteps after the first: {totals['now'] / totals['prompt']:.0%} of prompt tokens reusable now, "
        f"{totals['before'] / totals['prompt']:.0%} in the old order "
        f"({totals['now'] - totals['before']:,} more tokens a cache need not re-read)."
    )


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    asyncio.run(main())
