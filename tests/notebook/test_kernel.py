"""A real ipykernel: %%agent returns at once, Interrupt cancels a cell awaiting a run, and the browser survives;
an Approve click while a cell awaits the run (received on ipykernel >= 7.4, explained in the panel before).

``scripts/test.sh`` runs this module in the main venv and again in ``.venv-floor`` (the oldest ipykernel the
package supports), so both sides of the version split are exercised."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from jupyter_client.blocking.client import BlockingKernelClient
from jupyter_client.manager import KernelManager

from notebook_agent.demo import DELETE_TASK, DEMO_TASK
from notebook_agent.notebook.kernel import blocked_wait_message, clicks_blocked_while_awaiting


@pytest.fixture(scope="module")
def kernel() -> Iterator[BlockingKernelClient]:
    km = KernelManager(kernel_name="python3")
    env = {k: v for k, v in os.environ.items() if k != "NOTEBOOK_AGENT_MODEL" and not k.endswith("_API_KEY")}
    km.start_kernel(env=env)
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    try:
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def execute(kc: BlockingKernelClient, code: str, timeout: float = 60) -> tuple[dict[str, Any], str, float]:
    """Run code; returns the reply content, the text it printed, and the seconds until the reply.

    ipykernel 6 aborts the execute requests that arrive in a window after an error reply (its stop-on-error
    queue flush; measured on 6.17.1 and 6.31.0, lasting until a later turn of its loop). A person never types
    that fast, a test does: an aborted request is sent again, after a pause, until the window has passed.
    """
    for _ in range(50):
        reply, out, took = _execute_once(kc, code, timeout)
        if reply["status"] != "aborted":
            break
        time.sleep(0.1)
    return reply, out, took


def _execute_once(kc: BlockingKernelClient, code: str, timeout: float) -> tuple[dict[str, Any], str, float]:
    t0 = time.monotonic()
    reply, out = finish(kc, kc.execute(code), timeout)
    return reply, out, time.monotonic() - t0


def start_awaiting_cell(kc: BlockingKernelClient, code: str, timeout: float = 60) -> str:
    """Send a cell that awaits (``code``) and return its id once the kernel runs it: the cell prints a line just
    before its ``await``, and the interrupt a test sends next can only land after that line arrived, so in the
    await (a fixed pause before it only guessed the kernel had started the cell). stop_on_error=False: no abort
    of the request after the error the interrupt gives."""
    msg_id = kc.execute(f"print({AWAITING!r}, flush=True)\n{code}", stop_on_error=False)
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream" and AWAITING in msg["content"]["text"]:
            return msg_id
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            raise AssertionError(f"the cell ended before it awaited: {code!r}")


AWAITING = "cell: awaiting"


def finish(kc: BlockingKernelClient, msg_id: str, timeout: float = 60) -> tuple[dict[str, Any], str]:
    """Wait for a sent cell to end: its reply content and what it printed."""
    out: list[str] = []
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    while True:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"], "".join(out)


def test_interrupt_cancels_an_awaiting_cell_and_the_browser_survives(kernel: BlockingKernelClient) -> None:
    reply, _, _ = execute(
        kernel, "%load_ext notebook_agent\nfrom notebook_agent.demo import demo_url\nurl = demo_url()"
    )
    assert reply["status"] == "ok"
    reply, _, took = execute(kernel, f"%%agent --model demo --approve ask-all --url {{url}}\n{DEMO_TASK}")
    assert reply["status"] == "ok"
    print(f"%%agent cell returned in {took * 1000:.0f} ms")
    reply, out, _ = execute(kernel, "req = await agent_run.wait_for_approval(60)\nprint('asked', req.action)")
    assert "asked input_text" in out, out

    # a cell blocked on the run (nobody clicks Approve), then the notebook's Interrupt
    msg_id = start_awaiting_cell(kernel, "result = await agent_run")
    t0 = time.monotonic()
    kernel_manager_interrupt(kernel)
    while True:
        reply_msg = kernel.get_shell_msg(timeout=30)
        if reply_msg["parent_header"].get("msg_id") == msg_id:
            break
    print(f"interrupt -> cell released in {(time.monotonic() - t0) * 1000:.0f} ms")
    content = reply_msg["content"]
    assert content["status"] == "error"
    if kernel_blocks_clicks(kernel)[1]:
        # An older kernel: the interrupt released only the cell (the panel asks for it, so that the Approve
        # click can arrive); the run still waits for a person, and Stop ends it.
        # one line saying the run keeps waiting, not a bare CancelledError traceback
        assert content["ename"] == "RunInterrupted" and len(content["traceback"]) == 1, content
        assert "agent_run keeps waiting for your click" in content["traceback"][0], content["traceback"]
        reply, out, _ = execute(
            kernel, "print('waiting', agent_run.done, agent_run.pending_approval is not None)\nagent_run.stop()"
        )
        assert "waiting False True" in out, (reply, out)
    else:
        # one line, not asyncio's CancelledError traceback
        assert content["ename"] == "RunInterrupted", content
        assert len(content["traceback"]) == 1, content["traceback"]
        assert (
            "Interrupted: agent_run was stopped; 0 finished steps kept in agent_run.result" in (content["traceback"][0])
        )

    # the run was stopped, and the kernel's browser is alive and reused
    reply, out, _ = execute(
        kernel,
        "import asyncio\nfrom notebook_agent.notebook.runtime import STATE\n"
        "await asyncio.wait({agent_run.task}, timeout=5)\n"
        "print('done', agent_run.done, agent_run.view.status.value)\n"
        "print('alive', await STATE.browser.page.evaluate('1 + 1'))",
    )
    assert reply["status"] == "ok", reply
    assert "done True" in out and "stopped" in out and "alive 2" in out, out
    reply, out, _ = execute(kernel, f"%%agent --model demo --approve auto --url {{url}} --out again\n{DEMO_TASK}")
    reply, out, _ = execute(kernel, "r = await again\nprint(r.status, r.success)")
    assert "completed True" in out, out


def kernel_manager_interrupt(kc: BlockingKernelClient) -> None:
    """What the notebook's Interrupt button does: SIGINT to the kernel (its process group for ipykernel)."""
    km = kc.parent
    assert isinstance(km, KernelManager)
    km.interrupt_kernel()


_PANEL_IDS = """
import json
from notebook_agent.notebook.kernel import blocked_wait_message
def _in(root, cls):
    out = [root] if cls in root._dom_classes else []
    for child in getattr(root, "children", ()):
        out += _in(child, cls)
    return out
panel, = _in(gated.view.root, "na-approval")
approve, = _in(panel, "na-approve")
warning, = _in(panel, "na-wait-warning")
print(json.dumps({"approve": approve.model_id, "warning": warning.model_id}))
"""


def wait_for_iopub(kc: BlockingKernelClient, predicate: Any, timeout: float = 60) -> dict[str, Any]:
    """The first iopub message that satisfies ``predicate`` (others are dropped)."""
    deadline = time.monotonic() + timeout
    while True:
        msg = kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
        if predicate(msg):
            return msg


def widget_value_update(comm_id: str) -> Any:
    def match(msg: dict[str, Any]) -> bool:
        data = msg["content"].get("data", {}) if msg["msg_type"] == "comm_msg" else {}
        return (
            msg["content"].get("comm_id") == comm_id
            and data.get("method") == "update"
            and ("value" in data.get("state", {}))
        )

    return match


def click(kc: BlockingKernelClient, model_id: str) -> None:
    """What the ipywidgets front end sends when a Button is clicked."""
    msg = kc.session.msg("comm_msg", {"comm_id": model_id, "data": {"method": "custom", "content": {"event": "click"}}})
    kc.shell_channel.send(msg)


def kernel_blocks_clicks(kc: BlockingKernelClient) -> tuple[str, bool]:
    """The kernel's ipykernel version, and whether a click cannot reach it while a cell awaits (jupyter_client
    opens no subshells, like VS Code or a JupyterLab before 4.4)."""
    reply, out, _ = execute(kc, "import ipykernel\nprint(ipykernel.__version__)")
    assert reply["status"] == "ok", reply
    version = out.strip()
    return version, clicks_blocked_while_awaiting(version, subshells=0)


def test_approve_while_a_cell_awaits_the_run(kernel: BlockingKernelClient) -> None:
    reply, out, _ = execute(
        kernel, "%load_ext notebook_agent\nfrom notebook_agent.demo import demo_url\nurl = demo_url()"
    )
    assert reply["status"] == "ok", reply
    version, blocked = kernel_blocks_clicks(kernel)
    print(f"ipykernel {version}: clicks blocked while a cell awaits = {blocked}")
    execute(kernel, f"%%agent --model demo --approve ask-risky --url {{url}} --out gated\n{DELETE_TASK}")
    reply, out, _ = execute(kernel, "req = await gated.wait_for_approval(60)\nprint('asked', req.action)")
    assert "asked click_element_by_index" in out, (reply, out)
    reply, out, _ = execute(kernel, _PANEL_IDS)
    assert reply["status"] == "ok", reply
    ids = json.loads(out.strip().splitlines()[-1])

    awaiting = kernel.execute("result = await gated\nprint('result', result.status, result.success)")
    if not blocked:
        # ipykernel >= 7.4: the click is handled while the cell waits, so the cell ends with the result
        click(kernel, ids["approve"])
        reply, out = finish(kernel, awaiting)
        assert reply["status"] == "ok" and "result completed True" in out, (reply, out)
        reply, out, _ = execute(kernel, "print(repr(warning.value), gated.view.blocked_version)")
        assert out.strip() == "'' None", out  # nothing to explain on this kernel
        return

    # an older kernel: the panel explains why the click cannot arrive, with this kernel's version
    update = wait_for_iopub(kernel, widget_value_update(ids["warning"]))
    shown = update["content"]["data"]["state"]["value"]
    assert blocked_wait_message(version, "click") in shown.replace("&#x27;", "'"), shown
    # as the panel says: interrupt the waiting cell; that releases the cell, and the run keeps waiting
    kernel_manager_interrupt(kernel)
    while True:
        reply_msg = kernel.get_shell_msg(timeout=30)
        if reply_msg["parent_header"].get("msg_id") == awaiting:
            break
    assert reply_msg["content"]["status"] == "error"
    released = reply_msg["content"]
    assert released["ename"] == "RunInterrupted" and len(released["traceback"]) == 1, released
    assert "Interrupted: this cell stopped waiting; gated keeps waiting for your click" in released["traceback"][0]
    cleared = wait_for_iopub(kernel, widget_value_update(ids["warning"]))
    assert cleared["content"]["data"]["state"]["value"] == ""
    reply, out, _ = execute(kernel, "print('waiting', gated.done, gated.pending_approval is not None)")
    assert "waiting False True" in out, (reply, out)
    # now the click arrives, and the run finishes
    click(kernel, ids["approve"])
    reply, out, _ = execute(kernel, "result = await gated\nprint('result', result.status, result.success)")
    assert "result completed True" in out, (reply, out)


INTERLEAVE = """
import asyncio
order = []
while not (run_a.done and run_b.done):
    for run in (run_a, run_b):
        if run.done:
            continue
        if run.pending_approval is None:
            try:
                await run.wait_for_approval(60)
            except RuntimeError:
                continue
        order.append(run.name)
        run.approve()
        await asyncio.sleep(0)
a, b = await run_a, await run_b
print("status", a.status, b.status)
print("order", order[:4])
print("a pages", sorted({s.url.rsplit('/', 1)[-1].split('?')[0] for s in a.steps}))
print("b pages", sorted({s.url.rsplit('/', 1)[-1] for s in b.steps}))
print("b tab", run_b.view.where.value)
"""


def test_two_overlapping_runs_act_only_on_their_own_tabs(kernel: BlockingKernelClient) -> None:
    from notebook_agent.demo import DELETE_TASK

    reply, _, _ = execute(
        kernel, "%load_ext notebook_agent\nfrom notebook_agent.demo import demo_url\nurl = demo_url()"
    )
    assert reply["status"] == "ok"
    reply, _, _ = execute(kernel, f"%%agent --model demo --approve ask-all --url {{url}} --out run_a\n{DEMO_TASK}")
    assert reply["status"] == "ok"
    reply, _, _ = execute(
        kernel, f"%%agent --model demo --approve ask-all --url {{url}}/account.html --out run_b\n{DELETE_TASK}"
    )
    assert reply["status"] == "ok"
    reply, out, _ = execute(kernel, INTERLEAVE, timeout=120)
    assert reply["status"] == "ok", reply
    assert "status completed completed" in out, out
    assert "order ['run_a', 'run_b', 'run_a', 'run_b']" in out, out
    assert "account" not in out.split("a pages", 1)[1].split("\n", 1)[0], out
    assert "b pages ['account-deleted.html', 'account.html']" in out, out
    assert "its own tab" in out and "run_a is using" in out, out


SILENT = """
import asyncio
from notebook_agent.agent import PageAgent
from notebook_agent.notebook.runtime import STATE, watch

class SilentModel:
    provider, id = "test", "silent"
    def __init__(self):
        self.asked = asyncio.Event()
    async def stream(self, context, options):
        self.asked.set()
        await asyncio.Event().wait()  # never answers
        yield None

silent = SilentModel()
quiet_run = watch(PageAgent(model=silent, browser=await STATE.get_browser()), "wait for a model that never answers")
"""


def test_interrupt_with_the_kernel_idle_stops_a_run_waiting_on_a_silent_model(kernel: BlockingKernelClient) -> None:
    reply, _, _ = execute(kernel, "%load_ext notebook_agent")
    assert reply["status"] == "ok"
    reply, _, _ = execute(kernel, SILENT)
    assert reply["status"] == "ok", reply
    reply, out, _ = execute(kernel, "await silent.asked.wait()\nprint('asked', quiet_run.done)")
    assert "asked False" in out, out
    # the kernel is idle (no cell runs), the run waits on the model: Interrupt
    t0 = time.monotonic()
    kernel_manager_interrupt(kernel)
    deadline = time.monotonic() + 60  # a bound, so a run that is not stopped fails instead of hanging
    while time.monotonic() < deadline:  # the view's status label turns to "stopped" (a widget update on iopub)
        msg = kernel.get_iopub_msg(timeout=30)
        state = msg["content"].get("data", {}).get("state", {}) if msg["msg_type"] == "comm_msg" else {}
        if "stopped" in str(state.get("value", "")):
            break
    else:
        pytest.fail("Interrupt with the kernel idle did not stop the run")
    print(f"interrupt (kernel idle) -> run stopped in {(time.monotonic() - t0) * 1000:.0f} ms")
    reply, out, _ = execute(
        kernel, "r = await quiet_run\nprint(r.status, '|', r.error, '|', quiet_run.view.status.value)"
    )
    assert reply["status"] == "ok", reply
    assert "stopped | Stopped by Kernel → Interrupt |" in out, out


def test_interrupting_an_unrelated_cell_also_stops_the_runs(kernel: BlockingKernelClient) -> None:
    """A cell busy with something else while a run works in the background: Interrupt stops both (ipykernel
    still cancels its cell, and our handler, chained in front of its own, stops the run)."""
    reply, _, _ = execute(kernel, "%load_ext notebook_agent")
    reply, _, _ = execute(kernel, SILENT.replace("quiet_run", "quiet2").replace("silent", "silent2"))
    assert reply["status"] == "ok", reply
    reply, out, _ = execute(kernel, "await silent2.asked.wait()\nprint('asked', quiet2.done)")
    assert "asked False" in out, out
    started = "cell-started"
    msg_id = kernel.execute(f"print({started!r}, flush=True)\nawait asyncio.Event().wait()")
    while True:  # wait until the unrelated cell runs (its output), then Interrupt
        msg = kernel.get_iopub_msg(timeout=30)
        if msg["parent_header"].get("msg_id") == msg_id and started in msg["content"].get("text", ""):
            break
    kernel_manager_interrupt(kernel)
    while True:
        reply_msg = kernel.get_shell_msg(timeout=30)
        if reply_msg["parent_header"].get("msg_id") == msg_id:
            break
    assert reply_msg["content"]["status"] == "error"  # ipykernel's own handling of the cell is unchanged
    reply, out, _ = execute(  # a bound on the wait, so a run that was not stopped fails here instead of hanging
        kernel,
        "await asyncio.wait({quiet2.task}, timeout=30)\n"
        "print(quiet2.done, '|', quiet2.agent.last_result.error if quiet2.done else '')",
    )
    assert reply["status"] == "ok", reply
    assert "True | Stopped by Kernel → Interrupt" in out, out
