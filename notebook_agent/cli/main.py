"""The ``notebook-agent`` command: the same agent from a terminal.

Each subcommand imports only what it needs, so ``--help`` and ``--version`` answer instantly.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from .. import __version__
from .terminal import Printer, model_for, terminal_approver, terminal_ask

if TYPE_CHECKING:
    from ..agent import PageAgentResult


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
        from ..config.options import unknown_options_message

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
    run.add_argument("--runs-dir", default="agent_runs", help="save the run here (default agent_runs)")

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
        help="drive the demo with a real model on this machine: a GGUF file or hf:OWNER/REPO/FILE.gguf (fetched "
        "once from the Hugging Face Hub), run on llama-server; or ollama:NAME",
    )
    demo.add_argument("--threads", type=int, default=None, help="with --local MODEL.gguf: llama-server's threads")
    demo.add_argument("--context", type=int, default=None, help="with --local MODEL.gguf: context size in tokens")
    demo.add_argument("--server-port", type=int, default=None, help="with --local MODEL.gguf: llama-server's port")
    demo.add_argument("--shop-port", type=int, default=None, help="the demo shop's port (default: a free one)")
    demo.add_argument("--headed", action="store_true", help="show the browser window")
    demo.add_argument("--profile", default=None, help="prompt profile: auto (small for a local model), default, small")
    demo.add_argument("--runs-dir", default="agent_runs", help="save the run here (default agent_runs)")

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

    mp = sub.add_parser("map", help="run one task for every row of a table (CSV, JSON Lines, parquet)")
    mp.add_argument(
        "task", nargs="?", default=None, help="the task, {column} filled from each row ({{ and }} for literal braces)"
    )
    mp.add_argument("--recipe", default=None, metavar="RUN", help="replay RUN per row with its values, no model call")
    mp.add_argument("--no-heal", action="store_true", help="with --recipe: fail a row whose page differs, saying why")
    mp.add_argument("--runs-dir", default="agent_runs", help="where --recipe RUN is looked up (default agent_runs)")
    mp.add_argument("--rows", required=True, metavar="ROWS", help="the input table: .csv, .jsonl, .json or .parquet")
    mp.add_argument("--out", required=True, metavar="OUT", help="the table written: .csv, .jsonl, .json or .parquet")
    mp.add_argument("--concurrency", type=int, default=4, help="rows at a time (default 4)")
    mp.add_argument("--isolation", choices=("tab", "context"), default="tab", help="each row's own tab or context")
    mp.add_argument("--url", "-u", default=None, help="open this URL first; {column} is filled from each row")
    mp.add_argument("--model", "-m", default=None, help="provider:model (default NOTEBOOK_AGENT_MODEL or demo)")
    mp.add_argument("--max-steps", default="20", help="model calls at most per row (default 20)")
    mp.add_argument("--approve", default=None, help="auto or deny-risky (default): rows run unattended")
    mp.add_argument("--output", metavar="SCHEMA", default=None, help="the answer's type, as for run (one column each)")
    mp.add_argument("--headed", action="store_true", help="show the browser window")
    mp.add_argument("--vision", action="store_true", help="also send a screenshot to the model each step")
    mp.add_argument("--js", action="store_true", help="enable the execute_javascript action")
    mp.add_argument("--profile", default=None, help="prompt profile: auto (small for a local model), default, small")
    mp.add_argument(
        "--raw-cells",
        action="store_true",
        help="write CSV cells starting with = + - @ as they are (default: a ' in front, so no spreadsheet runs them)",
    )

    from .replay import add_parser as add_replay

    add_replay(sub)
    from .export import add_parser as add_export

    add_export(sub)
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
    p.add_argument("--profile", default=None, help="prompt profile: auto (small for a local model), default, small")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    try:
        if args.command == "snapshot":
            from .snapshot import snapshot_command

            return snapshot_command(args.url, full_page=args.full_page, as_json=args.json)
        if args.command == "run":
            return asyncio.run(_run(args.task, args, as_json=args.json))
        if args.command == "demo":
            return _demo(args)
        if args.command == "eval":
            return _eval(args)
        if args.command == "map":
            from .map import map_command

            return map_command(args)
        if args.command == "replay":
            from .replay import replay_command

            return replay_command(args)
        if args.command == "export":
            from .export import export_command

            return export_command(args)
        if args.command == "doctor":
            return _doctor()
        if args.command == "models":
            from ..llm.availability import check_models, models_table

            print(models_table(check_models()))
            return 0
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        from ..core.errors import error_message, says_what_to_do

        if says_what_to_do(exc):
            print(f"error: {error_message(exc)}", file=sys.stderr)
            return 2
        raise
    parser.error(f"unknown command {args.command!r}")  # pragma: no cover
    return 2


async def _run(task: str, args: argparse.Namespace, *, as_json: bool) -> int:
    from ..agent import PageAgent
    from ..browser.session.browser_session import BrowserSession
    from ..config import options

    # the same checks (and messages) as %%agent and %agent config
    max_steps = options.max_steps(args.max_steps)
    start_url = None if args.url is None else options.url(args.url)
    if isinstance(args.model, str):
        options.model(args.model)
    answer_type = options.output_from_file_or_module(args.output) if getattr(args, "output", None) else None
    profile = options.profile(getattr(args, "profile", None))
    interactive = sys.stdin.isatty()
    policy = options.approve(args.approve or ("ask-risky" if interactive else "deny-risky"))
    model, label = (
        (args.model, f"{args.model.provider}:{args.model.id}")
        if not isinstance(args.model, (str, type(None)))
        else model_for(args.model, task)
    )
    out = sys.stderr if as_json else sys.stdout
    print(f"model: {label}", file=out)
    async with BrowserSession(headless=not args.headed) as browser:
        agent = PageAgent(
            model=model,
            browser=browser,
            max_steps=max_steps,
            approval=policy,
            approver=terminal_approver if interactive else None,
            on_ask_user=terminal_ask if interactive else None,
            enable_javascript=args.js,
            vision=args.vision,
            screenshots=False,
            start_url=start_url,
            trace=args.trace,
            output=answer_type,
            runs_dir=getattr(args, "runs_dir", None),
            profile=profile,
        )
        result: PageAgentResult | None = None
        printer = Printer(out)
        ticker = asyncio.create_task(printer.tick())
        try:
            async for event in agent.stream(task):
                printer.event(event)
                if event.type == "run_finished":
                    result = event.result
        finally:
            ticker.cancel()
    assert result is not None
    saved = os.path.join(args.runs_dir, f"{result.run_id}.jsonl") if getattr(args, "runs_dir", None) else None
    if saved is not None and await asyncio.to_thread(os.path.isfile, saved):  # not when it could not be written
        print(f"run saved: {saved}", file=out)
    if result.trace_path:
        print(f"trace: {result.trace_path}  (open it with: playwright show-trace {result.trace_path})", file=out)
    if as_json:
        from ..agent.runs.run_file import result_to_dict

        print(json.dumps(result_to_dict(result), indent=2, ensure_ascii=False))
    elif result.output is not None:
        from ..agent.runs.run_data import to_json

        print(f"output ({result.output_type}):\n{json.dumps(to_json(result.output), indent=2, ensure_ascii=False)}")
    return 0 if result.success else 1


def _demo(args: argparse.Namespace) -> int:
    from ..demo import DEMO_TASK, demo_url, serve_demo

    if args.port is not None and not args.lab:
        raise ValueError("--port is for --lab (the port JupyterLab listens on).")
    if args.lab:
        return _lab(args.port)
    model = args.model
    server = {k: v for k, v in (("threads", args.threads), ("context", args.context), ("port", args.server_port)) if v}
    if server and not (args.local and not args.local.startswith("ollama:")):
        raise ValueError(
            "--threads, --context and --server-port are for --local MODEL.gguf (the llama-server it runs)."
        )
    if args.local:
        if model:
            raise ValueError("--local and --model both name a model; give one of them.")
        model = args.local if args.local.startswith("ollama:") else f"local:{args.local}"
    if server:
        from ..llm import get_model

        model = get_model(model, **server)  # the server is started with them (model names cannot carry them)
    url = serve_demo(args.shop_port).url if args.shop_port else demo_url()
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
        output=None,
        runs_dir=args.runs_dir,
        profile=args.profile,
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

    from ..agent.evaluate import Variant, evaluate, load_suite

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
        from ..demo import demo_url

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

    from ..config.models import variant_model

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
    from ..browser.session.launch import BrowserNotFoundError, find_browser

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
        from ..llm import get_model
        from ..llm.errors import ModelConfigError

        try:
            m = get_model(name)
            print(f"model:   {m.provider}:{m.id}")
        except ModelConfigError as exc:
            ok = False
            print(f"model:   {name}: {exc}")
    return 0 if ok else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
