"""``notebook-agent run TASK`` and ``notebook-agent demo [--lab]``: one task in a terminal, live, with the
person asked at the prompt; the demo is the same run on the bundled shop with the offline model."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from typing import TYPE_CHECKING

from .terminal import Printer, model_for, terminal_approver, terminal_ask

if TYPE_CHECKING:
    from ..agent import PageAgentResult


async def run_command(task: str, args: argparse.Namespace, *, as_json: bool) -> int:
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
    return asyncio.run(run_command(DEMO_TASK, ns, as_json=False))


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
