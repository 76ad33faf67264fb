"""Per-step cost of the page agent: prompt tokens, time and memory, against baselines measured in the same run.

Figures, not asserts. Baselines:
- tokens: the fixed part of a request (system prompt + AgentOutput schema) for the nine page-agent built-ins,
  and the state message of each demo page against the raw HTML of the same page (what a naive agent sends);
- time: a full agent step (snapshot, state message, scripted model through the loop, action, screenshot off)
  against the bare Playwright action the step performs;
- memory: resident set size before and after the runs.

Run: .venv/bin/python benchmarks/agent_step.py
"""

from __future__ import annotations

import asyncio
import json
import resource
import statistics
import time

from notebook_agent.agent import PageAgent, default_system_prompt
from notebook_agent.agent.macro import agent_output, macro_spec
from notebook_agent.browser import BrowserSession
from notebook_agent.demo import DEMO_TASK, demo_model, demo_url
from notebook_agent.llm.scripted import ScriptedModel
from notebook_agent.llm.tokens import EXACT, count_tokens

PAGE_AGENT_NINE = (
    "done",
    "wait",
    "ask_user",
    "click_element_by_index",
    "input_text",
    "select_dropdown_option",
    "scroll",
    "scroll_horizontally",
    "execute_javascript",
)


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def main() -> None:
    unit = "tokens (o200k)" if EXACT else "tokens (estimated: chars/4)"
    async with BrowserSession() as browser:
        agent = PageAgent(
            model=ScriptedModel([]),
            browser=browser,
            enable_javascript=True,
            on_ask_user=lambda q, s: asyncio.sleep(0, "x"),
        )
        tools = agent.tools(browser)
        nine = [tools[n] for n in PAGE_AGENT_NINE]
        spec = macro_spec(nine)
        system = default_system_prompt()
        schema = json.dumps({"name": spec.name, "description": spec.description, "parameters": spec.parameters})
        s_tok, t_tok = count_tokens(system), count_tokens(schema)
        print(f"fixed part of a step ({unit}): system prompt {s_tok} + AgentOutput schema {t_tok} = {s_tok + t_tok}")
        all_spec = json.dumps(macro_spec(list(tools.values())).parameters)
        print(f"  with all {len(tools)} actions: schema {count_tokens(all_spec)}")

        base = demo_url()
        print("\nstate message vs raw HTML of the same page:")
        print(f"  {'page':28} {'state':>7} {'raw html':>9} {'ratio':>6}")
        for path in ("", "search.html?q=headphones", "product.html?id=aerobeat-wh", "checkout.html", "account.html"):
            await browser.page.goto(f"{base}/{path}")
            snap = await browser.snapshot()
            html = await browser.page.content()
            st, ht = count_tokens(snap.text), count_tokens(html)
            print(f"  /{path:27} {st:7} {ht:9} {st / ht:6.2f}")

        print("\nwhole demo task, offline demo model (time per step; screenshots off):")
        rss0 = rss_mb()
        per_step: list[float] = []
        for _ in range(5):
            await browser.page.goto(base)
            agent = PageAgent(model=demo_model(), browser=browser, screenshots=False, max_steps=12)
            t0 = time.perf_counter()
            result = await agent.run(DEMO_TASK)
            per_step.append((time.perf_counter() - t0) * 1000 / len(result.steps))
        print(
            f"  agent step: median {statistics.median(per_step):.1f} ms over 5 runs of {len(result.steps)} steps "
            f"(state {statistics.median(s.state_ms for s in result.steps):.1f} ms, "
            f"action {statistics.median(s.action_ms for s in result.steps):.1f} ms)"
        )

        # baseline: the same kind of work with bare Playwright (type, click), no snapshot, no model, no loop
        bare: list[float] = []
        for _ in range(5):
            await browser.page.goto(base)
            t0 = time.perf_counter()
            await browser.page.fill("input[name=q]", "wireless headphones")
            await browser.page.click("button:has-text('Search')")
            await browser.page.wait_for_load_state("domcontentloaded")
            bare.append((time.perf_counter() - t0) * 1000 / 2)
        print(f"  bare Playwright action (baseline): median {statistics.median(bare):.1f} ms")

        # overhead of the loop itself: scripted waits of 0 cost, no browser action
        await browser.page.goto(base)
        script = [agent_output("scroll", {"down": True, "pixels": 1}) for _ in range(20)]
        agent = PageAgent(model=ScriptedModel(script), browser=browser, screenshots=False, max_steps=20)
        t0 = time.perf_counter()
        result = await agent.run("scroll a little, twenty times")
        total = (time.perf_counter() - t0) * 1000
        print(f"  20 tiny scroll steps: {total / 20:.1f} ms per step (snapshot + loop + action)")
        print(
            f"\nmemory: max RSS {rss0:.0f} MB before the runs, {rss_mb():.0f} MB after (this process; "
            "Chromium runs in its own processes)"
        )


if __name__ == "__main__":
    asyncio.run(main())
