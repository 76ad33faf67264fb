"""The page agent driven by a real small model on this machine: how often it succeeds, and what a step costs.

Runs ``benchmarks/local_suite.yaml`` (the demo shop's two tasks and six fixture tasks: a sign-in, a contact
form, a search, navigation over several pages, a select, a checkbox list) with a GGUF model on the managed
llama-server, ``--repeats`` times, and prints per task and per variant:

- success: the suite's checks passed (page text, URL, answer, storage), and how often the agent *claimed*
  success (a model that says "done" without doing it shows up as claimed > passed);
- valid output: steps whose output parsed into an action, and which output path was used;
- steps, prompt tokens per step (evaluated and served from the server's prompt cache), completion tokens
  per step, model seconds per step.

The baseline in the same run is the default prompt profile against the small-model one (``--profiles``,
agent/prompt/profiles.py), on the same server and tasks; ``--peer browser-use`` adds browser-use's agent on the same
server (same model, context, threads and prompt cache), interleaved task by task, judged by the same checks on
its final page (it runs in its own environment, ``.venv-peer``: ``scripts/setup_peer.sh``, see
``benchmarks/peer/browser_use_task.py``); ``--modes json_schema,tools`` also compares the output paths
(schema-constrained decoding, the default for local models, against a forced tool call). Variants run
interleaved task by task. Figures, not asserts: a model's choices vary with the machine's load only through
time, not the answer (temperature 0), but they do vary between model builds.

Run: .venv/bin/python benchmarks/local_model.py [--model PATH.gguf|hf:OWNER/REPO/FILE.gguf] [--repeats K]
                                                [--modes json_schema,tools] [--profiles default,small]
                                                [--peer browser-use] [--tasks id,id] [--threads N]
                                                [--context N] [--json FILE]
The default model is Qwen2.5-Coder-1.5B-Instruct Q4_K_M (``python scripts/fetch_test_model.py 1.5b``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot import serve  # benchmarks/snapshot.py: a quiet static server on 127.0.0.1

from notebook_agent.agent.evaluate import (
    EvalReport,
    EvalRow,
    Job,
    Suite,
    SuiteTask,
    Variant,
    check_failures,
    evaluate,
    load_suite,
)
from notebook_agent.agent.runs.result import PageAgentResult
from notebook_agent.agent.runs.run_file import save_run
from notebook_agent.browser import BrowserSession
from notebook_agent.browser.session.launch import find_browser
from notebook_agent.demo import demo_url
from notebook_agent.llm import get_model
from notebook_agent.llm.local.llama_server import cache_root, default_threads, get_server
from notebook_agent.llm.local.model_files import ModelFileError, model_file

HERE = Path(__file__).resolve().parent
PEER_PYTHON = HERE.parent / ".venv-peer" / "bin" / "python"
DEFAULT_MODEL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
DEAD = ("no element [", "is no longer on the page", "belongs to a tab that is no longer current")


def run_figures(result: PageAgentResult) -> dict[str, Any]:
    steps = result.steps
    n = max(1, len(steps))
    return {
        "steps": len(steps),
        "valid": sum(s.action is not None and s.output_error is None for s in steps),
        # actions on an element the page does not have (an index from an older state, or never there)
        "dead": sum(s.is_error and any(g in s.result for g in DEAD) for s in steps),
        "output_mode": result.output_mode or "-",
        "prompt_evaluated": sum(s.usage.input for s in steps) / n,
        "prompt_cached": sum(s.usage.cache_read for s in steps) / n,
        "completion": sum(s.usage.output for s in steps) / n,
        "model_s": sum(s.model_ms for s in steps) / n / 1000,
        "actions": [
            f"{s.action or 'INVALID'}{json.dumps(s.args, ensure_ascii=False) if s.args else ''}" for s in steps
        ],
        "answer": result.text,
    }


def run_peer(task: SuiteTask, repeat: int, *, base_url: str, model: str, max_steps: int) -> tuple[EvalRow, dict]:
    """One browser-use run of ``task`` on the same server, in .venv-peer (its pinned dependencies clash with
    ours), judged here by the suite's checks on what it read from its final page."""
    request: dict[str, Any] = {
        "task": task.task,
        "url": task.url,
        "base_url": base_url,
        "model": model,
        "max_steps": task.max_steps or max_steps,
        "executable_path": find_browser(),
        "js": task.check.js,
    }
    request["max_failures"] = 5  # browser-use's own default (the harness lowers it for a quick end on a dead server)
    request["llm_timeout"] = 900  # a CPU model writing browser-use's longest outputs: no call is cut short
    started = time.perf_counter()
    # its own process group, so a timeout takes its Chromium down with it
    proc = subprocess.Popen(
        [str(PEER_PYTHON), str(HERE / "peer" / "browser_use_task.py")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(json.dumps(request), timeout=max(600, 400 * request["max_steps"]))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        stdout, stderr = proc.communicate()
    seconds = time.perf_counter() - started
    found = [line for line in stdout.splitlines() if line.startswith("PEER-RESULT ")]
    if not found:
        out: dict[str, Any] = {"error": f"no result (exit {proc.returncode}): {stderr[-600:]}", "steps": []}
    else:
        out = json.loads(found[-1].removeprefix("PEER-RESULT "))
    answer = str(out.get("answer") or "")
    failures = check_failures(
        task.check,
        url=str(out.get("final_url") or ""),
        text=str(out.get("final_text") or ""),
        answer=answer,
        js=out.get("js_ok") if isinstance(out.get("js_ok"), (bool, str)) else False,
    )
    if out.get("error"):
        failures.append(f"run error: {out['error']}")
    steps = out.get("steps") or []
    n = max(1, len(steps))
    prompt = sum(int(s.get("prompt_tokens") or 0) for s in steps)
    cached = sum(int(s.get("cached_tokens") or 0) for s in steps)
    figures = {
        "steps": len(steps),
        "valid": sum(bool(s.get("valid")) for s in steps),
        "dead": 0,  # not told apart in browser-use's results
        "output_mode": "browser-use",
        "prompt_evaluated": (prompt - cached) / n,
        "prompt_cached": cached / n,
        "completion": sum(int(s.get("completion_tokens") or 0) for s in steps) / n,
        "model_s": sum(float(s.get("model_s") or 0) for s in steps) / n,
        "actions": [" + ".join(s.get("actions") or ["INVALID"]) for s in steps],
        "answer": answer,
    }
    row = EvalRow(
        variant="browser-use",
        task=task.id,
        repeat=repeat,
        passed=not failures,
        status="error" if out.get("error") else "completed",
        agent_success=bool(out.get("success_claimed")),
        steps=len(steps),
        tokens=prompt + sum(int(s.get("completion_tokens") or 0) for s in steps),
        cost=0.0,
        seconds=seconds,
        run_id=f"peer-{task.id}-{repeat}",
        failures=failures,
    )
    return row, figures


def summarise(rows: list[tuple[EvalRow, dict[str, Any]]]) -> dict[str, Any]:
    steps = sum(f["steps"] for _, f in rows)
    weights = [max(1, f["steps"]) for _, f in rows]

    def per_step(key: str) -> float:
        return sum(f[key] * w for (_, f), w in zip(rows, weights, strict=True)) / max(1, sum(weights))

    return {
        "runs": len(rows),
        "passed": sum(r.passed for r, _ in rows),
        "claimed": sum(r.agent_success for r, _ in rows),
        "valid_steps": sum(f["valid"] for _, f in rows),
        "dead": sum(f["dead"] for _, f in rows),
        "steps": steps,
        "mean_steps": statistics.fmean(f["steps"] for _, f in rows),
        "prompt_evaluated": per_step("prompt_evaluated"),
        "prompt_cached": per_step("prompt_cached"),
        "completion": per_step("completion"),
        "model_s": per_step("model_s"),
        "seconds": sum(r.seconds for r, _ in rows),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--model",
        default=str(cache_root() / "models" / DEFAULT_MODEL),
        help="a .gguf file, or hf:OWNER/REPO/FILE.gguf (downloaded once into the Hugging Face cache)",
    )
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--modes", default="json_schema", help="output paths to compare (json_schema,tools)")
    parser.add_argument("--profiles", default="default,small", help="prompt profiles to compare (default,small)")
    parser.add_argument("--tasks", default="", help="task ids to run (default: all)")
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--threads", type=int, default=None, help=f"llama-server threads (default {default_threads()})")
    parser.add_argument("--context", type=int, default=16384, help="llama-server context (tokens) for every system")
    parser.add_argument(
        "--peer", default="", choices=["", "browser-use"], help="also run browser-use on the same server and tasks"
    )
    parser.add_argument(
        "--peer-repeats", type=int, default=None, help="the peer's repeats (default --repeats; its steps are slow)"
    )
    parser.add_argument("--json", default=None, help="also write every run's figures to this file")
    parser.add_argument("--runs-dir", default=None, help="save every run here (open with %%agent runs / load_run)")
    args = parser.parse_args()

    try:
        model_path = model_file(args.model)
    except ModelFileError as exc:
        print(exc)
        return 2
    if not model_path.is_file():
        print(f"no model at {model_path}: run python scripts/fetch_test_model.py 1.5b, or pass --model")
        return 2
    if args.peer and not PEER_PYTHON.is_file():
        print(f"--peer browser-use needs its own environment: run scripts/setup_peer.sh (creates {PEER_PYTHON})")
        return 2
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    site, port = serve(HERE / "local_site")
    try:
        suite = load_suite(
            HERE / "local_suite.yaml", {"site": f"http://127.0.0.1:{port}", "demo": demo_url().rstrip("/")}
        )
        if args.tasks:
            wanted = set(args.tasks.split(","))
            suite.tasks = [t for t in suite.tasks if t.id in wanted]
        profiles = [p.strip() for p in args.profiles.split(",") if p.strip()]
        variants = [
            Variant(name=f"{m}/{p}", model=f"local:{model_path}", max_steps=args.max_steps, approval="auto", profile=p)
            for m in modes
            for p in profiles
        ]

        def model_for(variant: Variant, task: SuiteTask) -> Any:
            # One managed server per model file in this process: every variant and run shares it (and its cache).
            mode = variant.name.split("/")[0]
            return get_model(f"local:{model_path}", output_mode=mode, threads=args.threads, context=args.context)

        print(
            f"model {model_path.name} · threads {args.threads or default_threads()} · {os.cpu_count()} cores · "
            f"{platform.platform()} · {time.strftime('%Y-%m-%d')}"
        )
        print(
            f"{len(suite.tasks)} tasks × {len(variants)} variants × {args.repeats} repeats, max {args.max_steps} steps"
            f", context {args.context}"
            + (f"; browser-use × {args.peer_repeats or args.repeats} repeats" if args.peer else "")
        )

        current = {"repeat": 1}  # evaluate() runs one repeat at a time here: its own count is always 1

        def progress(kind: str, job: Job, row: EvalRow | None) -> None:
            if row is not None:
                mark = "pass" if row.passed else "FAIL"
                print(
                    f"  {job.variant.name:20} {job.task.id:16} #{current['repeat']} {mark} {row.steps} steps "
                    f"{row.seconds:.0f}s {'; '.join(row.failures)[:120]}",
                    flush=True,
                )

        server = get_server(model_path, threads=args.threads, context=args.context)
        peer_rows: list[tuple[EvalRow, dict[str, Any]]] = []

        async def interleaved() -> EvalReport:
            # task by task, each repeat: our variants, then the peer, so load and cache state fall alike on all
            report = EvalReport(suite.name, [])
            browser = BrowserSession()
            await browser.start()
            try:
                for repeat in range(1, args.repeats + 1):
                    current["repeat"] = repeat
                    for task in suite.tasks:
                        part = await evaluate(
                            Suite(suite.name, [task]),
                            variants,
                            concurrency=1,
                            browser=browser,
                            model_factory=model_for,
                            on_progress=progress,
                        )
                        for row in part.rows:
                            row.repeat = repeat
                        report.rows += part.rows
                        report.results += part.results
                        if args.peer and repeat <= (args.peer_repeats or args.repeats):
                            row, figures = await asyncio.to_thread(
                                run_peer,
                                task,
                                repeat,
                                base_url=server.base_url,
                                model=model_path.stem,
                                max_steps=args.max_steps,
                            )
                            peer_rows.append((row, figures))
                            print(
                                f"  {'browser-use':20} {task.id:16} #{repeat} {'pass' if row.passed else 'FAIL'} "
                                f"{row.steps} steps {row.seconds:.0f}s {'; '.join(row.failures)[:120]}",
                                flush=True,
                            )
            finally:
                await browser.close()
            return report

        started = time.perf_counter()
        report = asyncio.run(interleaved())
        wall = time.perf_counter() - started
    finally:
        site.shutdown()

    by_id = {r.run_id: r for r in report.results}
    if args.runs_dir:
        for result in report.results:
            save_run(result, args.runs_dir)
    rows = [(row, run_figures(by_id[row.run_id])) for row in report.rows if row.run_id in by_id] + peer_rows
    print("\nper run (actions in order):")
    for row, f in rows:
        line = f"{row.variant:20} {row.task:16} #{row.repeat} {'pass' if row.passed else 'FAIL'} [{f['output_mode']}]"
        print(f"  {line} {' → '.join(f['actions'])}"[:400])
    print(
        f"\n{'variant':20} {'passed':>8} {'claimed':>8} {'valid out':>10} {'dead idx':>8} {'steps':>6} "
        f"{'prompt tok/step':>16} {'cached':>7} {'compl.':>7} {'model s/step':>13} {'s/step':>7}"
    )
    summary = {}
    for name in dict.fromkeys(r.variant for r, _ in rows):
        s = summarise([(r, f) for r, f in rows if r.variant == name])
        summary[name] = s
        print(
            f"{name:20} {s['passed']:>4}/{s['runs']:<3} {s['claimed']:>4}/{s['runs']:<3} "
            f"{s['valid_steps']:>5}/{s['steps']:<4} {s['dead']:>8} {s['mean_steps']:>6.1f} "
            f"{s['prompt_evaluated'] + s['prompt_cached']:>16.0f} {s['prompt_cached']:>7.0f} {s['completion']:>7.0f} "
            f"{s['model_s']:>13.1f} {s['seconds'] / max(1, s['steps']):>7.1f}"
        )
    print(f"\nwall time {wall:.0f}s")
    if args.json:
        runs = [
            {"variant": r.variant, "task": r.task, "repeat": r.repeat, "passed": r.passed, "claimed": r.agent_success}
            | {"failures": r.failures, **f}
            for r, f in rows
        ]
        Path(args.json).write_text(json.dumps({"summary": summary, "runs": runs}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
