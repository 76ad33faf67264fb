"""``notebook-agent run TASK`` and ``notebook-agent demo [--lab]``: one task in a terminal, live, with the
person asked at the prompt; the demo is the same run on the bundled shop with the offline model."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from .terminal import Printer, model_for, terminal_approver, terminal_ask

if TYPE_CHECKING:
    from ..agent import PageAgentResult
    from ..agent.run_options import RunOptions


def run_options(args: argparse.Namespace) -> RunOptions:
    """The run's options from the command's flags, by the parser ``%%agent`` uses (config/run_flags.py); a
    terminal's own default is the approval policy: asked at the prompt, or deny-risky without a terminal."""
    from ..config.run_flags import run_options as checked

    return checked(args).with_defaults(approve="ask-risky" if sys.stdin.isatty() else "deny-risky")


async def run_command(
    task: str, opts: RunOptions, *, model: Any = None, as_json: bool, runs_dir: str | None = None
) -> int:
    """Run ``task`` with ``opts``, printing its events; ``model``: a model already made (the demo's local one),
    else ``opts.model`` is resolved here."""
    from ..browser.session.browser_session import BrowserSession

    interactive = sys.stdin.isatty()
    model, label = (model, f"{model.provider}:{model.id}") if model is not None else model_for(opts.model, task)
    out = sys.stderr if as_json else sys.stdout
    print(f"model: {label}", file=out)
    async with BrowserSession(headless=not opts.headed) as browser:
        agent = opts.make_agent(
            model,
            browser=browser,
            approver=terminal_approver if interactive else None,
            on_ask_user=terminal_ask if interactive else None,
            screenshots=False,
            runs_dir=runs_dir,
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
    saved = os.path.join(runs_dir, f"{result.run_id}.jsonl") if runs_dir else None
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


def demo_command(args: argparse.Namespace) -> int:
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
    from ..config.run_flags import run_options as checked

    named = model if isinstance(model, str) else None
    opts = checked({"url": url, "model": named, "profile": args.profile, "headed": args.headed})
    opts = opts.with_defaults(max_steps=12, approve="ask-risky" if sys.stdin.isatty() else "deny-risky")
    made = None if model is None or isinstance(model, str) else model
    return asyncio.run(run_command(DEMO_TASK, opts, model=made, as_json=False, runs_dir=args.runs_dir))


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
