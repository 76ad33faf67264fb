"""Per-step cost of the page agent: prompt tokens, time and memory, against baselines measured in the same run.

Figures, not asserts. Baselines:
- tokens: the fixed part of a request (system prompt + AgentOutput schema) for the nine page-agent built-ins;
  the fixed part as a run sends it, per profile with every capability on (JavaScript, ask_user, a typed answer),
  against every action offered (the actions a request does not call for included) and the previous release's
  figure; and the state message of each demo page against the raw HTML of the same page (what a naive agent
  sends);
- time: a full agent step (snapshot, state message, scripted model through the loop, action, screenshot off)
  against the bare Playwright action the step performs;
- memory: resident set size before and after the runs.

- tracing: the same steps with OpenTelemetry tracing off, on (spans to a local OTLP receiver that answers at once)
  and on with the prompts captured: the step's time each way, and the time the run spends making spans.

Run: .venv/bin/python benchmarks/agent_step.py [--step | --fixed | --tracing] [--repeats N]  (--step: only the step
against a bare click; --fixed: only the fixed prompt figures; --tracing: only the cost of tracing (needs the [otel]
extra); --repeats: how many times each page's clicks are measured, 3 unless given)
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot import serve, small_form, table  # benchmarks/snapshot.py: page generators, a local server

from notebook_agent.agent import PageAgent, default_system_prompt
from notebook_agent.agent.prompt.agent_output import agent_output, macro_spec
from notebook_agent.agent.runs.result import PageStep
from notebook_agent.browser import BrowserSession
from notebook_agent.browser.actions import builtin_names
from notebook_agent.demo import DEMO_TASK, demo_model, demo_url
from notebook_agent.llm.scripted import ScriptedModel
from notebook_agent.llm.tokens import EXACT, count_tokens

PAGE_AGENT_NINE = tuple(builtin_names()[:9])  # the actions page-agent itself has, in the same order

#: The fixed prompt as sent with every capability, on the plain form, in the previous release (o200k).
PREVIOUS_FIXED = {"default": 1720, "small": 1314}


class Contact(BaseModel):  # a typed answer (output=) for the fixed-prompt figures
    name: str
    email: str


class Row(BaseModel):
    customer: str
    total: float


async def fixed_prompt_as_sent(browser: BrowserSession) -> None:
    """The fixed part of a request as a run sends it (its system prompt and AgentOutput schema, read from the
    step's recorded request), per profile, with JavaScript, ask_user and a typed answer on: on a plain form
    (the request names no address and no data), and on a table page asked for its rows (``list[Row]``). The
    baseline is the same run offering every action (as if the request called for all of them)."""
    print("\nfixed prompt as sent, every capability on (tokens: system prompt + AgentOutput schema):")
    print(f"  {'profile':8} {'page':22} {'sent':>6} {'system':>7} {'schema':>7} {'all offered':>12} {'before':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "form.html").write_text(small_form())
        (root / "table.html").write_text(table(50))
        server, port = serve(root)
        cases = (
            ("plain form", "form.html", "Sign in as ada with the password in field 2", Contact),
            ("table, rows asked for", "table.html", "List the customers and totals of the table", list[Row]),
        )
        try:
            for profile in ("default", "small"):
                for name, page, task, output in cases:
                    figures = []
                    for every in (False, True):
                        url = f"http://127.0.0.1:{port}/{page}"
                        await browser.page.goto("about:blank" if every else url)
                        agent = PageAgent(
                            model=ScriptedModel([agent_output("done", {"text": "ok", "success": False})]),
                            browser=browser,
                            profile=profile,
                            enable_javascript=True,
                            on_ask_user=lambda q, s: asyncio.sleep(0, "x"),
                            output=output,
                            screenshots=False,
                            max_steps=1,
                        )
                        # every action: no start page (nothing to judge the request by) and a request for data
                        result = await agent.run(task + " at " + url if every else task)
                        request = result.steps[0].request
                        assert request is not None
                        figures.append(
                            (count_tokens(request.system_prompt), count_tokens(json.dumps(request.tools[0])))
                        )
                    (s, t), (s_all, t_all) = figures
                    before = PREVIOUS_FIXED[profile] if name == "plain form" else ""
                    print(f"  {profile:8} {name:22} {s + t:6} {s:7} {t:7} {s_all + t_all:12} {before:>7}")
        finally:
            server.shutdown()


STEP_PAGES = (
    ("small form", small_form),
    ("table 1500 rows", lambda: table(1500)),
    ("table 3000 rows", lambda: table(3000)),
)
STEPS = 20
MODEL_S = 0.3  # the "+model" column: a model that answers in 300 ms (a fast hosted one; local ones take seconds)
# one checkbox per step: the loop guard refuses a run that keeps clicking one element
CHECKBOXES = "".join(
    f"<p><input type=checkbox id=c{i} name=c{i}><label for=c{i}>Option {i}</label></p>" for i in range(STEPS)
)


async def step_against_bare(browser: BrowserSession, steps: int = STEPS, repeats: int = 3) -> None:
    """A scripted run clicking ``steps`` checkboxes in turn (snapshot, state message, loop, action, view
    screenshot; no model latency) against ``page.click`` on the same checkboxes of the same page. Each page is
    measured ``repeats`` times with the bare clicks and every variant interleaved, so a slow spell of the
    machine falls on all of them alike; the figures are medians over every step of every repeat."""
    print(f"\nstep vs bare Playwright click, {steps} clicks on checkboxes x {repeats} repeats (median ms per step):")
    print(
        f"  {'page':18} {'bare':>6} {'step':>6} {'ratio':>6} {'step+shot':>9} {'ratio':>6} {'step+hide':>9} "
        f"{'ratio':>6} {'+model':>9} {'ratio':>6} {'state':>6} {'action':>7} {'shot':>6} {'shot+h':>6}"
    )
    variants = ("plain", "shot", "hide", "think")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server, port = serve(root)
        try:
            for k, (name, make) in enumerate(STEP_PAGES):
                html = make().replace("<body>", "<body>" + CHECKBOXES, 1)
                (root / f"s{k}.html").write_text(html)
                url = f"http://127.0.0.1:{port}/s{k}.html"
                page = browser.page
                await page.goto(url)
                by_id = {e.attributes.get("id"): i for i, e in (await browser.snapshot()).elements.items()}
                indices = [by_id[f"c{i}"] for i in range(steps)]
                bare: list[float] = []
                per_step: dict[str, list[float]] = {v: [] for v in variants}
                step_records: dict[str, list[PageStep]] = {v: [] for v in variants}
                for _ in range(repeats):
                    await page.goto(url)
                    for i in range(steps):
                        t0 = time.perf_counter()
                        await page.click(f"#c{i}")
                        bare.append((time.perf_counter() - t0) * 1000)
                    for variant in variants:
                        await page.goto(url)
                        script = [agent_output("click_element_by_index", {"index": index}) for index in indices]
                        script.append(agent_output("done", {"text": "ok", "success": True}))
                        # "think": a model that takes MODEL_S to answer (one fragment), the picture on
                        thinking: dict[str, Any] = {"chunk": 1 << 20, "delay": MODEL_S} if variant == "think" else {}
                        agent = PageAgent(
                            model=ScriptedModel(script, **thinking),
                            browser=browser,
                            screenshots=variant != "plain",
                            max_steps=steps + 1,
                        )
                        # "hide": a run's secret painted over in every picture (searched for in every frame)
                        with browser.hiding(["S3cr3t-Value-42"] if variant == "hide" else None):
                            result = await agent.run("tick every checkbox")
                        assert result.status == "completed", result.error
                        # the time from one step's start to the next's: the step's whole cost, and for "think"
                        # without the model's answer (the agent's own time)
                        st = result.steps
                        for a, nxt in itertools.pairwise(st):
                            took = (nxt.started_at - a.started_at) * 1000
                            per_step[variant].append(took - (a.model_ms if variant == "think" else 0.0))
                        step_records[variant].extend(st)
                b = statistics.median(bare)
                med = {v: statistics.median(per_step[v]) for v in variants}
                st_ms = statistics.median(s.state_ms for s in step_records["plain"])
                act = statistics.median(s.action_ms for s in step_records["plain"] if s.action != "done")
                shot_ms = statistics.median(s.screenshot_ms for s in step_records["shot"] if s.screenshot_ms)
                hide_ms = statistics.median(s.screenshot_ms for s in step_records["hide"] if s.screenshot_ms)
                print(
                    f"  {name:18} {b:6.1f} {med['plain']:6.1f} {med['plain'] / b:6.2f} {med['shot']:9.1f} "
                    f"{med['shot'] / b:6.2f} {med['hide']:9.1f} {med['hide'] / b:6.2f} {med['think']:9.1f} "
                    f"{med['think'] / b:6.2f} {st_ms:6.1f} {act:7.1f} {shot_ms:6.1f} {hide_ms:6.1f}",
                    flush=True,
                )
        finally:
            server.shutdown()
    print(
        "  (step = from one step's start to the next's; ratio = step / bare; step+hide: with a secret to\n"
        "   paint over in every picture; +model: with the picture and a model that takes "
        f"{MODEL_S * 1000:.0f} ms to answer,\n"
        "   the step without that time; state, action, shot, shot+h (the screenshot itself, off the critical\n"
        "   path): medians)"
    )


class Receiver(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that takes every export and answers at once (an empty ExportTraceServiceResponse)."""

    spans_bytes = 0

    def do_POST(self) -> None:
        Receiver.spans_bytes += len(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


async def tracing_cost(browser: BrowserSession, steps: int = STEPS, repeats: int = 3) -> None:
    """The checkbox run of :func:`step_against_bare` on the small form (screenshots off, so the step is at its
    cheapest and tracing's share at its largest) with tracing off, on, and on with the prompts and page text
    captured; the variants interleaved ``repeats`` times. ``spans``: the time the run itself spends in the tracing
    consumer per step (making spans; sending them is on the exporter's thread), measured around each call; ``cpu``:
    this process's CPU time per step, the run and the sending of its spans included (Chromium's is not), which a
    busy machine disturbs less than the step's wall time."""
    from notebook_agent.agent.otel.export import flush
    from notebook_agent.agent.otel.run_spans import RunSpans

    spent: list[float] = []
    handle = RunSpans.handle

    def timed(self: RunSpans, event: Any) -> None:
        t0 = time.perf_counter()
        handle(self, event)
        spent.append(time.perf_counter() - t0)

    RunSpans.handle = timed  # type: ignore[method-assign]
    receiver = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = f"http://127.0.0.1:{receiver.server_address[1]}"
    variants = {"off": (False, ""), "on": (True, ""), "on+content": (True, "true")}
    per_step: dict[str, list[float]] = {v: [] for v in variants}
    in_spans: dict[str, list[float]] = {v: [] for v in variants}
    cpu: dict[str, list[float]] = {v: [] for v in variants}
    print(f"\ntracing: {steps} clicks on checkboxes x {repeats} repeats, small form, screenshots off (ms per step):")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "s.html").write_text(small_form().replace("<body>", "<body>" + CHECKBOXES, 1))
        server, port = serve(root)
        url = f"http://127.0.0.1:{port}/s.html"
        try:
            await browser.page.goto(url)
            by_id = {e.attributes.get("id"): i for i, e in (await browser.snapshot()).elements.items()}
            script = [agent_output("click_element_by_index", {"index": by_id[f"c{i}"]}) for i in range(steps)]
            script.append(agent_output("done", {"text": "ok", "success": True}))
            for _ in range(repeats):
                for name, (on, content) in variants.items():
                    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = content
                    await browser.page.goto(url)
                    agent = PageAgent(
                        model=ScriptedModel(list(script)),
                        browser=browser,
                        screenshots=False,
                        max_steps=steps + 1,
                        tracing=on,
                    )
                    spent.clear()
                    cpu0 = time.process_time()
                    result = await agent.run("tick every checkbox")
                    await asyncio.to_thread(flush)  # its spans sent: the next variant starts with nothing queued
                    cpu[name].append((time.process_time() - cpu0) * 1000 / len(result.steps))
                    assert result.status == "completed", result.error
                    pairs = itertools.pairwise(result.steps)
                    per_step[name] += [(b.started_at - a.started_at) * 1000 for a, b in pairs]
                    in_spans[name].append(sum(spent) * 1000 / len(result.steps))
        finally:
            server.shutdown()
            receiver.shutdown()
            RunSpans.handle = handle  # type: ignore[method-assign]
    off, cpu_off = statistics.median(per_step["off"]), statistics.median(cpu["off"])
    heads = ("step", 7), ("vs off", 8), ("cpu", 6), ("+cpu", 6), ("of step", 8), ("spans", 6), ("of step", 8)
    print(f"  {'tracing':12} " + " ".join(f"{h:>{w}}" for h, w in heads))
    for name in variants:
        step_ms, spans_ms, cpu_ms = (statistics.median(x[name]) for x in (per_step, in_spans, cpu))
        print(
            f"  {name:12} {step_ms:7.1f} {step_ms / off - 1:+8.1%} {cpu_ms:6.2f} {cpu_ms - cpu_off:+6.2f} "
            f"{(cpu_ms - cpu_off) / off:+8.2%} {spans_ms:6.3f} {spans_ms / off:8.2%}"
        )
    print(
        "  (step: median ms from one step's start to the next's; cpu: median ms of this process's CPU per step,\n"
        "   sending the spans included, and what tracing adds to it as a share of the untraced step; spans: median\n"
        f"   ms per step the run spent making spans, and its share; {Receiver.spans_bytes / 1024:.0f} KB of spans sent)"
    )


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def main(args: argparse.Namespace) -> None:
    unit = "tokens (o200k)" if EXACT else "tokens (estimated: chars/4)"
    async with BrowserSession() as browser:
        repeats = args.repeats
        if args.step:  # only the step comparison
            await step_against_bare(browser, repeats=repeats)
            return
        if args.tracing:  # only the cost of tracing
            await tracing_cost(browser, repeats=repeats)
            return
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
        await fixed_prompt_as_sent(browser)
        if args.fixed:
            return

        base = demo_url()
        print("\nstate (page part) vs raw HTML and Playwright's aria_snapshot(mode='ai') of the same page (tokens):")
        print(f"  {'page':28} {'state':>7} {'raw html':>9} {'ratio':>6} {'aria ai':>8} {'ratio':>6}")
        for path in ("", "search.html?q=headphones", "product.html?id=aerobeat-wh", "checkout.html", "account.html"):
            await browser.page.goto(f"{base}/{path}")
            snap = await browser.snapshot()
            html = await browser.page.content()
            aria = await browser.page.aria_snapshot(mode="ai")
            st, ht, at = count_tokens(snap.text), count_tokens(html), count_tokens(aria)
            print(f"  /{path:27} {st:7} {ht:9} {st / ht:6.2f} {at:8} {st / at:6.2f}")

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
        await step_against_bare(browser, repeats=repeats)
        print(
            f"\nmemory: max RSS {rss0:.0f} MB before the runs, {rss_mb():.0f} MB after (this process; "
            "Chromium runs in its own processes)"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--step", action="store_true", help="only the step against a bare click")
    only.add_argument("--fixed", action="store_true", help="only the fixed prompt figures")
    only.add_argument("--tracing", action="store_true", help="only the cost of OpenTelemetry tracing per step")
    parser.add_argument("--repeats", type=int, default=3, help="times each page's clicks are measured (default 3)")
    asyncio.run(main(parser.parse_args()))
