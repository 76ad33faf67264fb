"""MiniWoB++ tasks (the public ``miniwob`` package) run by the real page agent, as the field reports agents.

Each episode: the task page from the ``miniwob`` wheel, served on 127.0.0.1 (``miniwob_site.py``), opened in the
agent's browser with ``?seed=N``, which seeds and starts the episode as the package's own environment does
(``Math.seedrandom``, ``core.startEpisodeReal``); the agent (``PageAgent`` on its real browser session) is given
MiniWoB's instruction (the page's ``#query``) as its task and runs until ``done`` or ``--max-steps``; then the
task's own reward is read from the page (``WOB_RAW_REWARD_GLOBAL``, kept for the first completed episode).

Models:
- ``--model oracle`` (default): a perfect scripted model (``miniwob_oracle.py``, plans in ``miniwob_plans.py``)
  behind an OpenAI-compatible server on 127.0.0.1, reached over the Chat Completions wire like llama-server. It
  reads only the state message the agent sends and answers with the right action, so its failures are the
  agent's: what the snapshot shows, what the actions can do, what the guards allow.
- ``--model local:PATH.gguf`` (or any name ``get_model`` accepts): a real model; with ``--peer browser-use``
  browser-use runs the same episodes on the same server, interleaved per episode (``benchmarks/peer``, as in
  ``local_model.py``; its own environment ``.venv-peer``, ``scripts/setup_peer.sh``).

Per task and overall: pass rate (first completed episode's reward > 0), mean first-episode reward, how often
the claimed success (done's ``success``) agrees with the reward, episodes started again after the first ended
(an agent that acts after success resets the task), steps, seconds per step, prompt tokens per step as sent,
and the share of them served from the prompt cache. Figures, not asserts.

Run: .venv/bin/python benchmarks/miniwob.py [--model oracle|local:PATH.gguf] [--peer browser-use]
                                            [--tasks a,b,c] [--seeds N] [--max-steps N] [--profile auto]
                                            [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from miniwob_oracle import oracle_model, start_oracle
from miniwob_plans import PLANS
from miniwob_site import READ_JS, READY_JS, serve, task_names, task_url

from notebook_agent.agent import PageAgent
from notebook_agent.agent.evaluate import Check, SuiteTask
from notebook_agent.agent.runs.result import PageAgentResult
from notebook_agent.browser import BrowserSession
from notebook_agent.llm import get_model

# The tasks the oracle covers: the ones a browser agent that reads the DOM should do (no canvas drawing, no
# drags), from the easiest clicks to forms, widgets and multi-page searches.
DEFAULT_TASKS = tuple(PLANS)
PASS_JS = "() => !!(window.__wob && window.__wob.first && window.__wob.first.raw > 0)"


def episode_figures(result: PageAgentResult, read: dict[str, Any], seconds: float) -> dict[str, Any]:
    steps = result.steps
    n = max(1, len(steps))
    first = read.get("first") or {}
    first_raw = float(first.get("raw") or 0.0) if first else 0.0
    prompt = sum(s.usage.input + s.usage.cache_read for s in steps)
    cached = sum(s.usage.cache_read for s in steps)
    return {
        "passed": first_raw > 0,
        "first_reward": first_raw,
        "ended": bool(first),
        "reason": str(first.get("reason") or "") if first else "",
        "restarts": max(0, int(read.get("started") or 0) - 1),
        "claimed": bool(result.success),
        "status": result.status,
        "steps": len(steps),
        "seconds": seconds,
        "s_per_step": seconds / n,
        "prompt_per_step": prompt / n,
        "cached_share": cached / prompt if prompt else 0.0,
        "answer": result.text,
        "error": result.error or "",
        "actions": [
            {"action": s.action or "INVALID", "args": s.args, "result": s.result[:300], "error": s.is_error}
            | ({"output_error": s.output_error} if s.output_error else {})
            for s in steps
        ],
    }


async def run_ours(
    browser: BrowserSession, model: Any, task: str, url: str, *, max_steps: int, profile: str, states: bool = False
) -> dict[str, Any]:
    await browser.page.goto(url)
    await browser.page.wait_for_function(READY_JS, timeout=10_000)
    utterance = str((await browser.page.evaluate(READ_JS)).get("utterance") or "")
    agent = PageAgent(model=model, browser=browser, max_steps=max_steps, screenshots=False, profile=profile)
    started = time.perf_counter()
    result = await agent.run(utterance)
    seconds = time.perf_counter() - started
    read = await browser.page.evaluate(READ_JS)
    figures = {"utterance": utterance} | episode_figures(result, read, seconds)
    if states:  # what the model read each step, to see why it chose what it chose
        figures["states"] = [s.request.state for s in result.steps if s.request is not None]
    return figures


def run_peer_episode(task: str, url: str, utterance: str, *, base_url: str, model: str, max_steps: int) -> dict:
    """browser-use on the same episode (same URL and seed, its own browser), judged by the page's reward."""
    from local_model import run_peer

    suite_task = SuiteTask(id=task, task=utterance, url=url, check=Check(js=PASS_JS), max_steps=max_steps)
    row, f = run_peer(suite_task, 1, base_url=base_url, model=model, max_steps=max_steps)
    n = max(1, f["steps"])
    prompt = f["prompt_evaluated"] + f["prompt_cached"]
    return {
        "utterance": utterance,
        "passed": row.passed,
        "first_reward": 1.0 if row.passed else 0.0,  # the peer reports the check, not the number
        "ended": row.passed,
        "reason": "",
        "restarts": 0,
        "claimed": row.agent_success,
        "status": row.status,
        "steps": f["steps"],
        "seconds": row.seconds,
        "s_per_step": row.seconds / n,
        "prompt_per_step": prompt,
        "cached_share": f["prompt_cached"] / prompt if prompt else 0.0,
        "answer": f["answer"],
        "error": "; ".join(row.failures),
        "actions": [{"action": a} for a in f["actions"]],
    }


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    steps = sum(r["steps"] for r in runs)
    weights = [max(1, r["steps"]) for r in runs]

    def per_step(key: str) -> float:
        return sum(r[key] * w for r, w in zip(runs, weights, strict=True)) / max(1, sum(weights))

    return {
        "episodes": len(runs),
        "passed": sum(r["passed"] for r in runs),
        "pass_rate": sum(r["passed"] for r in runs) / max(1, len(runs)),
        "first_reward": statistics.fmean(r["first_reward"] for r in runs) if runs else 0.0,
        "agree": sum(r["claimed"] == r["passed"] for r in runs),
        "restarts": sum(r["restarts"] > 0 for r in runs),
        "mean_steps": steps / max(1, len(runs)),
        "s_per_step": sum(r["seconds"] for r in runs) / max(1, steps),
        "prompt_per_step": per_step("prompt_per_step"),
        "cached_share": per_step("cached_share"),
    }


def print_table(runs: list[dict[str, Any]]) -> dict[str, Any]:
    head = (
        f"{'agent':12} {'task':28} {'pass':>7} {'reward':>7} {'agree':>7} {'reset':>5} {'steps':>6} "
        f"{'s/step':>7} {'tok/step':>9} {'cached':>7}"
    )
    print("\n" + head)
    summary: dict[str, Any] = {}
    for agent in dict.fromkeys(r["agent"] for r in runs):
        mine = [r for r in runs if r["agent"] == agent]
        summary[agent] = {"tasks": {}}
        for task in dict.fromkeys(r["task"] for r in mine):
            s = summarise([r for r in mine if r["task"] == task])
            summary[agent]["tasks"][task] = s
            print(_row(agent, task, s))
        s = summarise(mine)
        summary[agent]["overall"] = s
        print(_row(agent, "ALL", s))
    return summary


def _row(agent: str, task: str, s: dict[str, Any]) -> str:
    return (
        f"{agent:12} {task:28} {s['passed']:>3}/{s['episodes']:<3} {s['first_reward']:>7.2f} "
        f"{s['agree']:>3}/{s['episodes']:<3} {s['restarts']:>5} {s['mean_steps']:>6.1f} {s['s_per_step']:>7.2f} "
        f"{s['prompt_per_step']:>9.0f} {s['cached_share']:>7.0%}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="oracle", help="oracle (default), local:PATH.gguf or provider:model")
    parser.add_argument("--peer", default="", choices=["", "browser-use"], help="also run browser-use")
    parser.add_argument("--tasks", default="", help=f"comma-separated task names (default: the {len(PLANS)} planned)")
    parser.add_argument("--seeds", type=int, default=1, help="episodes per task (seeds 1..N)")
    parser.add_argument("--max-steps", type=int, default=15)
    parser.add_argument("--profile", default="auto", help="the agent's prompt profile (auto, default, small)")
    parser.add_argument("--threads", type=int, default=None, help="llama-server threads for local: models")
    parser.add_argument("--context", type=int, default=16384, help="llama-server context for local: models")
    parser.add_argument("--json", default=None, help="write every episode and the summary to this file")
    parser.add_argument("--states", action="store_true", help="keep each step's state message in --json")
    parser.add_argument("--summarise", default=None, help="print the table of a --json file (a run stopped early)")
    args = parser.parse_args(argv)
    if args.summarise:
        print_table(json.loads(Path(args.summarise).read_text(encoding="utf-8"))["runs"])
        return 0
    path = args.model.removeprefix("local:")
    if args.model.startswith("local:") and not path.startswith("hf:") and not Path(path).is_file():
        print(f"no model file at {path}: give --model local:PATH.gguf (an existing file)")
        return 2
    return asyncio.run(run(args))


async def run(args: argparse.Namespace) -> int:
    oracle = args.model == "oracle"
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()] or list(DEFAULT_TASKS)
    known = set(task_names())
    unknown = [t for t in tasks if t not in known]
    if unknown:
        print(f"unknown MiniWoB++ task(s): {', '.join(unknown)} (the package has {len(known)}, e.g. click-button)")
        return 2
    unplanned = [t for t in tasks if t not in PLANS]
    if oracle and unplanned:
        print(f"the oracle has no plan for: {', '.join(unplanned)} (planned: {', '.join(PLANS)})")
        return 2
    if args.seeds < 1 or args.max_steps < 1:
        print("--seeds and --max-steps are whole numbers from 1")
        return 2
    peer_base = peer_model = ""
    if args.peer:
        from local_model import PEER_PYTHON

        if oracle:
            print("--peer runs browser-use against a real model: give --model local:PATH.gguf")
            return 2
        if not PEER_PYTHON.is_file():
            print(f"--peer browser-use needs its own environment: run scripts/setup_peer.sh (creates {PEER_PYTHON})")
            return 2

    oracle_server = None
    if oracle:
        oracle_server, responder = start_oracle()
        model = oracle_model(oracle_server)
    else:
        model = (
            get_model(args.model, threads=args.threads, context=args.context)
            if args.model.startswith(("local:", "hf:"))
            else get_model(args.model)
        )
        if args.peer:
            from notebook_agent.llm.local.llama_server import get_server

            path = args.model.removeprefix("local:")
            peer_base, peer_model = (
                get_server(path, threads=args.threads, context=args.context).base_url,
                Path(path).stem,
            )
    site, base = serve()
    print(
        f"MiniWoB++ · model {args.model} · profile {args.profile} · {len(tasks)} tasks × {args.seeds} seeds · "
        f"max {args.max_steps} steps · {os.cpu_count()} cores · {platform.platform()} · {time.strftime('%Y-%m-%d')}"
    )
    runs: list[dict[str, Any]] = []
    browser = BrowserSession()
    await browser.start()
    started = time.perf_counter()
    try:
        for seed in range(1, args.seeds + 1):
            for task in tasks:
                url = task_url(base, task, seed)
                if oracle:
                    responder.begin(PLANS[task])
                try:
                    ours = await run_ours(
                        browser, model, task, url, max_steps=args.max_steps, profile=args.profile, states=args.states
                    )
                except Exception as exc:  # a harness failure on one episode is data, the rest still runs
                    ours = {"error": f"harness: {type(exc).__name__}: {exc}"} | _empty()
                if oracle:
                    ours["oracle"] = list(responder.log)
                runs.append({"agent": "ours", "task": task, "seed": seed} | ours)
                _progress(runs[-1])
                await _keep(args.json, runs)
                if args.peer:
                    peer = await asyncio.to_thread(
                        run_peer_episode,
                        task,
                        url,
                        ours.get("utterance", ""),
                        base_url=peer_base,
                        model=peer_model,
                        max_steps=args.max_steps,
                    )
                    runs.append({"agent": "browser-use", "task": task, "seed": seed} | peer)
                    _progress(runs[-1])
                    await _keep(args.json, runs)
    finally:
        await browser.close()
        site.shutdown()
        if oracle_server is not None:
            oracle_server.stop()
    wall = time.perf_counter() - started
    summary = print_table(runs)
    print(f"\nwall time {wall:.0f}s")
    if args.json:
        text = json.dumps({"summary": summary, "runs": runs}, indent=1, ensure_ascii=False)
        await asyncio.to_thread(Path(args.json).write_text, text)
    return 0


async def _keep(path: str | None, runs: list[dict[str, Any]]) -> None:
    """Every episode so far, written after each one: a run stopped early (a time budget, a crash) keeps what it
    measured, and ``--summarise FILE`` prints its table."""
    if path:
        text = json.dumps({"runs": runs}, indent=1, ensure_ascii=False)
        await asyncio.to_thread(Path(path).write_text, text)


def _empty() -> dict[str, Any]:
    return {
        "passed": False,
        "first_reward": 0.0,
        "ended": False,
        "reason": "",
        "restarts": 0,
        "claimed": False,
        "status": "error",
        "steps": 0,
        "seconds": 0.0,
        "s_per_step": 0.0,
        "prompt_per_step": 0.0,
        "cached_share": 0.0,
        "answer": "",
        "actions": [],
    }


def _progress(r: dict[str, Any]) -> None:
    mark = "pass" if r["passed"] else "FAIL"
    why = "" if r["passed"] else f" {r['status']}: {(r.get('error') or r.get('answer') or '')[:140]}"
    print(f"  {r['agent']:12} {r['task']:28} seed {r['seed']} {mark} {r['steps']} steps {r['seconds']:.1f}s{why}")


if __name__ == "__main__":
    raise SystemExit(main())
