"""A real ipykernel whose event loop refuses subprocesses, as a Windows kernel's selector loop does: ``%%agent``
still runs, with the browser on a thread of its own.

The kernel is started through a kernelspec whose command installs :class:`tests.refusing_loop.RefusingPolicy`
before ipykernel creates its loop. The first test proves that kernel really refuses (a subprocess, and the
browser in the in-loop mode, both fail there); the second runs the demo tasks end to end: an approval
answered by a click on the widget's Approve button (a comm message, as the front end sends it), an Interrupt
of a cell awaiting a run, and a further run on the same browser.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

from notebook_agent.demo import DELETE_TASK, DEMO_TASK
from tests.notebook.test_kernel import execute, kernel_manager_interrupt, start_awaiting_cell
from tests.refusing_loop import KERNEL_CODE

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BlockingKernelClient]:
    specs = tmp_path_factory.mktemp("kernels")
    (specs / "refusing").mkdir()
    argv = [sys.executable, "-c", KERNEL_CODE, "-f", "{connection_file}"]
    spec = {"argv": argv, "display_name": "refusing subprocesses", "language": "python"}
    (specs / "refusing" / "kernel.json").write_text(json.dumps(spec), encoding="utf-8")
    km = KernelManager(kernel_name="refusing", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(specs)]))
    env = {k: v for k, v in os.environ.items() if k != "NOTEBOOK_AGENT_MODEL" and not k.endswith("_API_KEY")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    km.start_kernel(env=env, cwd=str(ROOT))
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    try:
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def click(kc: BlockingKernelClient, model_id: str) -> None:
    """What the front end sends when a Button is clicked."""
    content = {"comm_id": model_id, "data": {"method": "custom", "content": {"event": "click"}}}
    kc.shell_channel.send(kc.session.msg("comm_msg", content))


FIND_BUTTON = """
def _with_class(x, cls, found):
    if cls in getattr(x, "_dom_classes", ()):
        found.append(x)
    for child in getattr(x, "children", ()):
        _with_class(child, cls, found)
    return found
print("crops", len(_with_class(agent_run.view.root, "na-approval-crop", [])))
print("button", _with_class(agent_run.view.root, "na-approve", [])[0].model_id)
"""


def test_the_kernels_loop_refuses_subprocesses(kernel: BlockingKernelClient) -> None:
    """The control: in this kernel a subprocess cannot start, so neither can an in-loop browser."""
    code = (
        "import asyncio, sys\n"
        "print('loop', type(asyncio.get_running_loop()).__name__)\n"
        "try:\n"
        "    await asyncio.create_subprocess_exec(sys.executable, '-c', '')\n"
        "except NotImplementedError:\n"
        "    print('subprocess refused')\n"
        "from notebook_agent.browser import BrowserSession\n"
        "try:\n"
        "    await BrowserSession(threaded=False).start()\n"
        "except NotImplementedError:\n"
        "    print('in-loop browser refused')\n"
    )
    reply, out, _ = execute(kernel, code)
    assert reply["status"] == "ok", reply
    assert "loop RefusingEventLoop" in out and "subprocess refused" in out and "in-loop browser refused" in out, out


def test_agent_runs_with_approval_interrupt_and_a_second_run(kernel: BlockingKernelClient) -> None:
    reply, _, _ = execute(
        kernel, "%load_ext notebook_agent\nfrom notebook_agent.demo import demo_url\nurl = demo_url()"
    )
    assert reply["status"] == "ok", reply

    # 1. a risky click asks; the person clicks Approve in the widget; the run completes
    reply, _, _ = execute(kernel, f"%%agent --model demo --approve ask-risky --url {{url}}\n{DELETE_TASK}")
    assert reply["status"] == "ok", reply
    reply, out, _ = execute(kernel, "req = await agent_run.wait_for_approval(60)\nprint('asked', req.action)")
    assert "asked click_element_by_index" in out, (reply, out)
    reply, out, _ = execute(kernel, FIND_BUTTON)
    assert reply["status"] == "ok", reply
    assert "crops 1" in out, out  # the target's picture was taken on the browser thread for the person
    click(kernel, out.split("button", 1)[1].strip())
    reply, out, _ = execute(
        kernel,
        "from notebook_agent.notebook.runtime import STATE\n"
        "r = await agent_run\n"
        "print('run', r.status, r.success, [s.approval['decision'] for s in r.steps if s.approval])\n"
        "print('threaded', STATE.browser.is_threaded)\n"
        "print('deleted', 'deleted' in (await STATE.browser.call(lambda: STATE.browser.page.content())).lower())",
    )
    assert reply["status"] == "ok", reply
    assert "run completed True ['approved']" in out and "threaded True" in out and "deleted True" in out, out

    # 2. a cell blocked on a run that waits for an approval nobody gives, then the notebook's Interrupt
    reply, _, _ = execute(kernel, f"%%agent --model demo --approve ask-all --url {{url}}\n{DEMO_TASK}")
    reply, out, _ = execute(kernel, "req = await agent_run.wait_for_approval(60)\nprint('asked', req.action)")
    assert "asked" in out, (reply, out)
    # stop_on_error=False (in start_awaiting_cell): otherwise the kernel aborts the requests that arrive just
    # after this cell's error
    msg_id = start_awaiting_cell(kernel, "result = await agent_run")
    kernel_manager_interrupt(kernel)
    while True:
        reply_msg = kernel.get_shell_msg(timeout=30)
        if reply_msg["parent_header"].get("msg_id") == msg_id:
            break
    assert reply_msg["content"]["status"] == "error"
    assert reply_msg["content"]["ename"] == "RunInterrupted"  # one line, not a traceback
    reply, out, _ = execute(
        kernel,
        "await asyncio.wait({agent_run.task}, timeout=10)\n"
        "print('done', agent_run.done, agent_run.view.status.value)\n"
        "print('alive', await STATE.browser.call(lambda: STATE.browser.page.evaluate('1 + 1')))",
    )
    assert reply["status"] == "ok", reply
    assert "done True" in out and "stopped" in out and "alive 2" in out, out

    # 3. the same browser (still on its thread) serves the next run
    reply, _, _ = execute(kernel, f"%%agent --model demo --approve auto --url {{url}} --out again\n{DEMO_TASK}")
    reply, out, _ = execute(kernel, "r = await again\nprint('run', r.status, r.success, STATE.browser.is_threaded)")
    assert "run completed True True" in out, out
