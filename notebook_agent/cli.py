"""The ``notebook-agent`` command: the same agent from a terminal.

Each subcommand imports only what it needs, so ``--help`` and ``--version`` answer instantly.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from . import __version__

if TYPE_CHECKING:
    from .agent import AnyEvent, PageAgentResult
    from .agent.approval import ApprovalAnswer, ApprovalRequest


class _Parser(argparse.ArgumentParser):
    """argparse that never takes an option by its prefix (``--max-step 3`` is a typo, not ``--max-steps``) and
    says "did you mean --max-steps?" for a misspelt option."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def _known_options(self) -> list[str]:
        known = [s for action in self._actions for s in action.option_strings]
        for action in self._actions:  # the sub-commands' options too: the top parser reports their leftovers
            if isinstance(action, argparse._SubParsersAction):
                for sub in set(action.choices.values()):
                    known += [s for a in sub._actions for s in a.option_strings]
        return known

    def error(self, message: str) -> NoReturn:
        from .config.options import unknown_options_message

        super().error(unknown_options_message(message, self._known_options()))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="notebook-agent",
        description="An LLM browser agent for Jupyter, Python and the terminal.",
    )
    parser.add_argument("--version", action="version", version=f"notebook-agent {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    snap = sub.add_parser("snapshot", help="print what the model would see of a page")
    snap.add_argument("url")
    snap.add_argument(
        "--full-page", action="store_true", help="the whole page, not just the viewport (up to 40,000 characters)"
    )
    snap.add_argument("--json", action="store_true", help="elements, timings and a token count as JSON")

    run = sub.add_parser("run", help="run the page agent on a task")
    run.add_argument("task")
    _agent_options(run)
    run.add_argument("--trace", action="store_true", help="record a Playwright trace of the run (trace.zip)")
    run.add_argument(
        "--output",
        metavar="SCHEMA",
        default=None,
        help="the answer's type: a JSON Schema file, or module:Class (list[module:Class] for a list)",
    )
    run.add_argument("--json", action="store_true", help="print the result as JSON")

    demo = sub.add_parser("demo", help="run the demo task on the bundled demo shop")
    demo.add_argument("--lab", action="store_true", help="open JupyterLab on the quickstart notebook instead")
    demo.add_argument(
        "--port", type=int, default=None, help="with --lab: the port JupyterLab listens on (default: its own)"
    )
    demo.add_argument("--model", "-m", default=None, help="provider:model (default: NOTEBOOK_AGENT_MODEL or offline)")
    demo.add_argument(
        "--local",
        metavar="MODEL.gguf",
        default=None,
        help="drive the demo with a real model on this machine: a GGUF file (runs llama-server) or ollama:NAME",
    )
    demo.add_argument("--headed", action="store_true", help="show the browser window")

    ev = sub.add_parser("eval", help="evaluate variants (models, prompts, settings) over a task suite")
    ev.add_argument("suite", help="a YAML or JSON suite file")
    ev.add_argument("--model", "-m", action="append", default=[], help="one variant per model (repeatable)")
    ev.add_argument("--repeats", type=int, default=1)
    ev.add_argument("--concurrency", type=int, default=2)
    ev.add_argument(
        "--var",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="fill {NAME} in the suite ({demo} is the bundled demo shop)",
    )
    ev.add_argument("--cdp-url", default=None, help="run in a remote Chromium (DevTools URL)")
    ev.add_argument("--json", action="store_true", help="print every run as JSON")

    sub.add_parser("doctor", help="show which browser and model would be used")
    sub.add_parser("models", help="the model providers: API keys set, packages installed, local servers")
    return parser


def _agent_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--url", "-u", default=None, help="open this URL first")
    p.add_argument(
        "--model", "-m", default=None, help="provider:model (default NOTEBOOK_AGENT_MODEL); 'demo' = offline"
    )
    p.add_argument("--max-steps", default="20", help="model calls at most, 1 or more (default 20)")
    p.add_argument("--approve", default=None, help="auto, ask-risky (default on a terminal), ask-all, deny-risky")
    p.add_argument("--headed", action="store_true", help="show the browser window")
    p.add_argument("--vision", action="store_true", help="also send a screenshot to the model each step")
    p.add_argument("--js", action="store_true", help="enable the execute_javascript action")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        if args.command == "snapshot":
            from .snapshot_cli import snapshot_command

            return snapshot_command(args.url, full_page=args.full_page, as_json=args.json)
        if args.command == "run":
            return asyncio.run(_run(args.task, args, as_json=args.json))
        if args.command == "demo":
            return _demo(args)
        if args.command == "eval":
            return _eval(args)
        if args.command == "doctor":
            return _doctor()
        if args.command == "models":
            from .llm.availability import check_models, models_table

            print(models_table(check_models()))
            return 0
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        from .core.errors import error_message, says_what_to_do

        if says_what_to_do(exc):
            print(f"error: {error_message(exc)}", file=sys.stderr)
            return 2
        raise
    parser.error(f"unknown command {args.command!r}")  # pragma: no cover
    return 2


def _model_for(name: str | None, task: str) -> tuple[Any, str]:
    from .config.models import choose_model

    model, note = choose_model(name, task)
    return model, note or f"{model.provider}:{model.id}"


async def _terminal_approver(request: ApprovalRequest) -> ApprovalAnswer:
    from .agent.approval import ApprovalAnswer

    print(f"\n  ✋ approve {request.action} {json.dumps(request.args)}? ({request.reason})")
    answer = await asyncio.to_thread(input, "     [y]es / [n]o (then a reason): ")
    answer = answer.strip()
    if answer.lower() in ("y", "yes"):
        return ApprovalAnswer(True)
    reason = answer[1:].strip(" :,-") if answer[:1].lower() == "n" else answer
    return ApprovalAnswer(False, reason or None)


async def _terminal_ask(question: str, signal: Any) -> str:
    print(f"\n  ❓ {question}")
    return (await signal.race(asyncio.to_thread(input, "     answer: "))).strip()


async def _run(task: str, args: argparse.Namespace, *, as_json: bool) -> int:
    from .agent import PageAgent
    from .browser.session import BrowserSession
    from .config import options

    # the same checks (and messages) as %%agent and %agent config
    max_steps = options.max_steps(args.max_steps)
    start_url = None if args.url is None else options.url(args.url)
    if args.model is not None:
        options.model(args.model)
    answer_type = options.output_from_file_or_module(args.output) if args.output else None
    interactive = sys.stdin.isatty()
    policy = options.approve(args.approve or ("ask-risky" if interactive else "deny-risky"))
    model, label = _model_for(args.model, task)
    out = sys.stderr if as_json else sys.stdout
    print(f"model: {label}", file=out)
    async with BrowserSession(headless=not args.headed) as browser:
        agent = PageAgent(
            model=model,
            browser=browser,
            max_steps=max_steps,
            approval=policy,
            approver=_terminal_approver if interactive else None,
            on_ask_user=_terminal_ask if interactive else None,
            enable_javascript=args.js,
            vision=args.vision,
            screenshots=False,
            start_url=start_url,
            trace=args.trace,
            output=answer_type,
        )
        result: PageAgentResult | None = None
        printer = _Printer(out)
        ticker = asyncio.create_task(printer.tick())
        try:
            async for event in agent.stream(task):
                printer.event(event)
                if event.type == "run_finished":
                    result = event.result
        finally:
            ticker.cancel()
    assert result is not None
    if result.trace_path:
        print(f"trace: {result.trace_path}  (open it with: playwright show-trace {result.trace_path})", file=out)
    if as_json:
        from .agent.runs import result_to_dict

        print(json.dumps(result_to_dict(result), indent=2, ensure_ascii=False))
    elif result.output is not None:
        from .agent.data import to_json

        print(f"output ({result.output_type}):\n{json.dumps(to_json(result.output), indent=2, ensure_ascii=False)}")
    return 0 if result.success else 1


class _Printer:
    """Prints a run's events; while the model is being waited on it says so, and for how long (on a terminal
    the line counts up each second; otherwise the time is printed once the model answered)."""

    def __init__(self, out: Any) -> None:
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
            _print_event(event, self.out)
            print("  waiting for the model…", end="" if self.live else "\n", file=self.out, flush=True)
            return
        if event.type in ("model_output", "run_finished") and self.waiting_since is not None:
            seconds = time.monotonic() - self.waiting_since
            self.waiting_since = None
            if self.live:
                print("\r\x1b[K", end="", file=self.out)
            said = "answered in" if event.type == "model_output" else "no answer after"
            print(f"  model:  {said} {seconds:.1f} s", file=self.out)
        _print_event(event, self.out)


def _print_event(event: AnyEvent, out: Any) -> None:
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
        tokens = r.usage.tokens
        cost = f", ${r.usage.cost.total:.4f}" if r.usage.cost.total else ""
        mode = f" · output: {r.output_mode}" if r.output_mode else ""
        print(
            f"\n{r.status}: success={r.success} · {r.steps_text()} · {tokens} tokens{cost} · {r.duration_s:.1f}s{mode}",
            file=out,
        )
        print(r.text, file=out)


def _demo(args: argparse.Namespace) -> int:
    from .demo import DEMO_TASK, demo_url

    if args.port is not None and not args.lab:
        raise ValueError("--port is for --lab (the port JupyterLab listens on).")
    if args.lab:
        return _lab(args.port)
    model = args.model
    if args.local:
        if model:
            raise ValueError("--local and --model both name a model; give one of them.")
        model = args.local if args.local.startswith("ollama:") else f"local:{args.local}"
    url = demo_url()
    print(f"demo shop: {url}")
    print(f"task: {DEMO_TASK}")
    ns = argparse.Namespace(
        url=url,
        model=model,
        max_steps=12,
        approve="ask-risky" if sys.stdin.isatty() else "deny-risky",
        headed=args.headed,
        vision=False,
        js=False,
        trace=False,
    )
    return asyncio.run(_run(DEMO_TASK, ns, as_json=False))


def _lab(port: int | None = None) -> int:
    import subprocess
    from pathlib import Path

    here = Path.cwd() / "notebooks"
    folder = here if here.is_dir() else Path.cwd()
    cmd = [sys.executable, "-m", "jupyterlab", "--notebook-dir", str(folder)]
    if (folder / "quickstart.ipynb").exists():
        cmd += ["--LabApp.default_url=/lab/tree/quickstart.ipynb"]
    if port is not None:
        cmd += [f"--ServerApp.port={port}", "--ServerApp.port_retries=0"]
    if os.geteuid() == 0:
        cmd.append("--allow-root")
    print("starting JupyterLab:", " ".join(cmd))
    try:
        return subprocess.call(cmd)
    except FileNotFoundError:
        print("JupyterLab is not installed: pip install 'notebook-agent[lab]'", file=sys.stderr)
        return 2


def _eval(args: argparse.Namespace) -> int:
    from pathlib import Path

    from .agent.evaluate import Variant, evaluate, load_suite

    variables: dict[str, str] = {}
    for item in args.var:
        name, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"--var takes NAME=VALUE, got {item!r}")
        variables[name] = value
    suite_path = Path(args.suite)
    if not suite_path.is_file():
        raise ValueError(f"There is no suite file {args.suite!r}: give the path of a YAML or JSON suite.")
    if "{demo}" in suite_path.read_text(encoding="utf-8") and "demo" not in variables:
        from .demo import demo_url

        variables["demo"] = demo_url()
    suite = load_suite(args.suite, variables)
    variants = [Variant(name=m, model=m) for m in args.model] or suite.variants or [Variant("default")]

    def progress(kind: str, job: Any, row: Any) -> None:
        if row is not None:
            mark = "pass" if row.passed else "FAIL"
            print(
                f"  {mark} {row.variant:16} {row.task:16} #{row.repeat} {row.steps} steps {row.seconds:.1f}s "
                + ("; ".join(row.failures) if row.failures else ""),
                file=sys.stderr,
            )

    from .config.models import variant_model

    run = evaluate(
        suite,
        variants,
        repeats=args.repeats,
        concurrency=args.concurrency,
        cdp_url=args.cdp_url,
        on_progress=progress,
        model_factory=variant_model,
    )
    report = asyncio.run(run)
    if args.json:
        print(json.dumps({"suite": report.suite, "summary": report.summary(), "runs": report.records()}, indent=2))
    else:
        print(f"\n{report.suite}: {len(report.rows)} runs")
        print(f"{'variant':20} {'success':>8} {'steps':>6} {'tokens':>8} {'cost $':>8} {'time s':>7}")
        for row in report.summary():
            print(
                f"{row['variant']:20} {row['success_rate']:8.0%} {row['mean_steps']:6.1f} "
                f"{row['mean_tokens']:8.0f} {row['total_cost']:8.4f} {row['mean_seconds']:7.1f}"
            )
    return 0


def _doctor() -> int:
    from .browser.launch import BrowserNotFoundError, find_browser

    ok = True
    try:
        print(f"browser: {find_browser()}")
    except BrowserNotFoundError as exc:
        ok = False
        print(f"browser: NOT FOUND\n{exc}")
    name = os.environ.get("NOTEBOOK_AGENT_MODEL")
    if not name:
        print("model:   none configured (the offline demo model is used); set NOTEBOOK_AGENT_MODEL=provider:model")
    else:
        from .llm import get_model
        from .llm.errors import ModelConfigError

        try:
            m = get_model(name)
            print(f"model:   {m.provider}:{m.id}")
        except ModelConfigError as exc:
            ok = False
            print(f"model:   {name}: {exc}")
    return 0 if ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
