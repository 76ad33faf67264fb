"""``notebook-agent run TASK`` and ``notebook-agent demo [--lab | --serve]``: one task in a terminal, live, with
the person asked at the prompt; the demo is the same run on the bundled shop with the offline model, the shop at
one address (demo/server.py ``stable_demo``) so the run replays and exports after the command ends."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .terminal import Printer, demo_shop_for, model_for, terminal_approver, terminal_ask

if TYPE_CHECKING:
    from ..agent import PageAgentResult
    from ..agent.run_options import RunOptions
    from ..core.model import Model


def run_options(args: argparse.Namespace) -> RunOptions:
    """The run's options from the command's flags, by the parser ``%%agent`` uses (config/run_flags.py); a
    terminal's own default is the approval policy: asked at the prompt, or deny-risky without a terminal."""
    from ..config.run_flags import run_options as checked

    return checked(args).with_defaults(approve="ask-risky" if sys.stdin.isatty() else "deny-risky")


async def run_command(
    task: str, opts: RunOptions, *, model: Model | None = None, as_json: bool, runs_dir: str | None = None
) -> int:
    """Run ``task`` with ``opts``, printing its events; ``model``: a model already made (the demo's local one),
    else ``opts.model`` is resolved here. A start page on the demo shop's stable address is served again when
    nothing answers there (a demo run's page, run again)."""
    interactive = sys.stdin.isatty()
    model, label = (model, f"{model.provider}:{model.id}") if model is not None else model_for(opts.model, task)
    out = sys.stderr if as_json else sys.stdout
    print(f"model: {label}", file=out)
    with demo_shop_for(opts.url, out):
        result = await _run(task, opts, model, interactive, out, runs_dir)
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


async def _run(
    task: str, opts: RunOptions, model: Model, interactive: bool, out: TextIO, runs_dir: str | None
) -> PageAgentResult:
    from ..browser.session.browser_session import BrowserSession

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
    return result


def demo_command(args: argparse.Namespace) -> int:
    from ..demo import DEMO_TASK, stable_demo

    if args.port is not None and not args.lab:
        raise ValueError("--port is for --lab (the port JupyterLab listens on).")
    if args.lab:
        return _lab(args.port)
    if args.serve:
        return _serve(args.shop_port)
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
    url, shop, note = stable_demo(args.shop_port)  # one address, so the run replays and exports later
    if note:
        print(f"note: {note}")
    print(f"demo shop: {url}")
    print(f"task: {DEMO_TASK}")
    from ..config.run_flags import run_options as checked

    named = model if isinstance(model, str) else None
    opts = checked({"url": url, "model": named, "profile": args.profile, "headed": args.headed})
    opts = opts.with_defaults(max_steps=12, approve="ask-risky" if sys.stdin.isatty() else "deny-risky")
    made = None if model is None or isinstance(model, str) else model
    try:
        return asyncio.run(run_command(DEMO_TASK, opts, model=made, as_json=False, runs_dir=args.runs_dir))
    finally:
        if shop is not None:
            shop.stop()


def _serve(port: int | None) -> int:
    """``notebook-agent demo --serve``: the shop at its stable address until Ctrl-C (an exported demo run's
    script, a browser, another terminal's replay)."""
    import threading

    from ..demo import stable_demo

    url, shop, note = stable_demo(port)
    if shop is None:
        print(f"the demo shop already answers at {url}")
        return 0
    if note:
        print(f"note: {note}")
    print(f"demo shop: {url}  (serving until Ctrl-C)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        shop.stop()
    return 0


QUICKSTART_FOLDER = "notebook_agent_quickstart"
"""Where ``demo --lab`` puts the quickstart notebook outside a checkout (in the current folder)."""


def lab_folder(cwd: Path) -> Path:
    """The folder ``demo --lab`` opens, holding ``quickstart.ipynb``: a checkout's ``notebooks/``, else
    :data:`QUICKSTART_FOLDER` with the notebook the package ships copied into it (an edited copy is kept), so
    Lab never opens on a folder with nothing to run. Says what it did."""
    checkout = cwd / "notebooks"
    if (checkout / "quickstart.ipynb").is_file():
        return checkout
    from importlib import resources

    folder = cwd / QUICKSTART_FOLDER
    notebook = folder / "quickstart.ipynb"
    if notebook.exists():
        print(f"opening {notebook} (as you left it: delete it for a fresh copy)")
        return folder
    try:
        folder.mkdir(exist_ok=True)
        notebook.write_bytes(resources.files("notebook_agent.demo").joinpath("quickstart.ipynb").read_bytes())
    except OSError as exc:
        raise ValueError(
            f"Cannot write the quickstart notebook to {folder} ({exc.strerror or exc}): run this in a folder you "
            "can write to."
        ) from None
    print(f"copied the quickstart notebook to {notebook}")
    return folder


def _lab(port: int | None = None) -> int:
    import subprocess

    folder = lab_folder(Path.cwd())
    cmd = [sys.executable, "-m", "jupyterlab", "--notebook-dir", str(folder)]
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
