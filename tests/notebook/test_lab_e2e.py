"""End to end in a real JupyterLab 4 and a real Chromium: the notebook UI as a person uses it.

``test_widget_round_trip`` shows that the harness works with plain ipywidgets (Button, Text, Label, a background
task awaiting a click). ``test_agent_approve_and_deny`` runs ``%%agent`` with the offline demo model on the
demo shop's delete-account task, clicks Approve in one run and Deny (with a reason) in another, and checks what
the page shows and what the model was told. Timings are printed (figures, not asserts): run with ``-s``.
``NA_LAB_ARTIFACTS=/some/dir`` keeps the screenshots; on failure every cell's output and the console are printed.

Typing into a widget Text is done with ``fill`` (one input event, so one state sync sent before the click). Typing
key by key and clicking within a kernel round trip of the last key can let the click overtake the Text's last
syncs: ipywidgets buffers a model's state updates while one is unanswered, but sends a Button's click at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.notebook.lab_harness import LabNotebook

pytestmark = pytest.mark.lab
expect.set_options(timeout=15_000)  # JupyterLab on a loaded 2-core machine: 5 s is not always enough

OpenNotebook = Callable[[str, list[str]], LabNotebook]

WIDGET_CELLS = [
    # 0: a button whose handler reads a Text and writes a Label.
    """\
import asyncio, threading
import ipywidgets as w
label = w.Label("not clicked"); label.add_class("probe-label")
text = w.Text(placeholder="type"); text.add_class("probe-text")
button = w.Button(description="Approve"); button.add_class("probe-button")
def on_click(_b):
    label.value = f"clicked on {threading.current_thread().name} text={text.value!r}"
button.on_click(on_click)
w.VBox([label, text, button])""",
    # 1: a background task on the kernel loop waits for a click after the cell has gone idle (the agent's way).
    """\
loop = asyncio.get_running_loop()
fut = loop.create_future()
status = w.Label("waiting"); status.add_class("probe-status")
go = w.Button(description="Resume"); go.add_class("probe-resume")
go.on_click(lambda _b: loop.call_soon_threadsafe(lambda: fut.done() or fut.set_result("resumed")))
async def waiter():
    status.value = f"task {await fut}"
task = asyncio.ensure_future(waiter())
w.VBox([status, go])""",
    # 2: the kernel-side state after the clicks.
    "print('LABEL:', label.value); print('STATUS:', status.value)",
]


def test_widget_round_trip(open_notebook: OpenNotebook) -> None:
    t0 = time.perf_counter()
    nb = open_notebook("widgets.ipynb", WIDGET_CELLS)
    timings = {"open notebook + kernel idle": nb.open_s}

    timings["run cell 0"] = nb.run_cell(0)
    nb.assert_no_error(0)
    nb.wait_visible(".probe-button")
    assert nb.text(".probe-label") == "not clicked"
    # Type, then click at once: the Text's sync must reach the kernel before the click event.
    nb.widget(".probe-text input").fill("hello lab")
    t = time.perf_counter()
    nb.widget(".probe-button").click()
    nb.wait_text(".probe-label", "clicked on")
    timings["click -> label (kernel round trip)"] = time.perf_counter() - t
    assert "text='hello lab'" in nb.text(".probe-label"), nb.text(".probe-label")

    timings["run cell 1"] = nb.run_cell(1)
    nb.assert_no_error(1)
    assert nb.kernel_status() == "idle"
    assert nb.text(".probe-status") == "waiting"
    t = time.perf_counter()
    nb.widget(".probe-resume").click()
    nb.wait_text(".probe-status", "task resumed")
    timings["click -> background task resumed"] = time.perf_counter() - t

    nb.run_cell(2)
    out = nb.output_text(2)
    assert "LABEL: clicked on" in out and "hello lab" in out, out
    assert "STATUS: task resumed" in out, out
    nb.screenshot("widgets")
    timings["whole test"] = time.perf_counter() - t0
    _print_timings("widget round trip", timings)


REASON = "Not today: keep my account, I still have store credit"

AGENT_CELLS = [
    "%load_ext notebook_agent",
    "from notebook_agent.demo import DELETE_TASK, demo_url\nurl = demo_url()\nprint('DEMO', url)",
    # 2: run 1, approved. The magic line expands {url}; the body is the task.
    "%%agent --model demo --approve ask-risky --url {url} --out run1\nOpen my account page and delete my account.",
    "result1 = await run1\n"
    "print('RUN1', result1.status, result1.success)\n"
    "print('APPROVAL1', [s.approval for s in result1.steps if s.approval])",
    # 4: run 2, denied with a reason. The body's {DELETE_TASK} is filled from the namespace.
    "%%agent --model demo --approve ask-risky --url {url} --out run2\n"
    "# the same task, from the demo package\n"
    "{DELETE_TASK}",
    "result2 = await run2\n"
    "print('RUN2', result2.status, result2.success)\n"
    "print('BLOCKED:', [s.result for s in result2.steps if s.approval][0])",
]

# Conditions on one run view (a `.na-run` element), checked in the page.
_JS_STEP = "(run) => !!run.querySelector('.na-step')"
_JS_SCREENSHOT = """(run) => [...run.querySelectorAll('img.na-screenshot, .na-screenshot img')].some(
  (i) => /^(blob|data):/.test(i.src) && i.naturalWidth > 0 && getComputedStyle(i).display !== 'none')"""
_JS_LIVE = """(run) => [...run.querySelectorAll('img.na-live, .na-live img')].some(
  (i) => /^(blob|data):/.test(i.src) && i.naturalWidth > 0 && getComputedStyle(i).display !== 'none')"""
_JS_APPROVAL = "(run) => !!run.querySelector('.na-approval .na-approve')"
_JS_FINISHED = "(run) => { const r = run.querySelector('.na-result'); return !!r && r.textContent.trim() !== ''; }"


def _wait_in_run(nb: LabNotebook, run: Any, condition: str, what: str, timeout: float = 30.0) -> None:
    """Wait for ``condition`` on the run view; fail at once (with what the view shows) if the run ends first."""
    handle = run.element_handle()
    either = f"(run) => ({condition})(run) || ({_JS_FINISHED})(run)"
    nb.page.wait_for_function(either, arg=handle, timeout=timeout * 1000)
    if not nb.page.evaluate(condition, handle):
        steps = "\n".join(run.locator(".na-step").all_inner_texts())
        pytest.fail(f"the run finished before {what}:\n{run.locator('.na-result').inner_text()}\n--- steps\n{steps}")


def _wait_run_view(nb: LabNotebook, run: Any, timings: dict[str, float], label: str, t_run: float) -> None:
    """From a just-started %%agent cell to its approval panel: step cards, a screenshot, Approve/Deny."""
    _wait_in_run(nb, run, _JS_STEP, "a step card appeared")
    timings[f"{label}: run cell -> first step card"] = time.perf_counter() - t_run
    # the latest picture is in the header (its card shows it once a newer one arrives): one of the two
    _wait_in_run(nb, run, f"(run) => ({_JS_SCREENSHOT})(run) || ({_JS_LIVE})(run)", "a screenshot rendered")
    timings[f"{label}: run cell -> first screenshot"] = time.perf_counter() - t_run
    _wait_in_run(nb, run, _JS_APPROVAL, "the approval panel appeared")
    timings[f"{label}: run cell -> approval panel"] = time.perf_counter() - t_run
    expect(run.locator(".na-status")).to_contain_text("waiting for approval")
    approval = run.locator(".na-approval")
    expect(approval).to_be_visible()
    expect(approval).to_contain_text("Delete account")
    expect(approval.locator(".na-approve")).to_be_visible()
    expect(approval.locator(".na-deny")).to_be_visible()
    expect(approval.locator(".na-deny-reason input")).to_be_visible()


def test_agent_approve_and_deny(open_notebook: OpenNotebook) -> None:
    t0 = time.perf_counter()
    nb = open_notebook("agent.ipynb", AGENT_CELLS)
    timings = {"open notebook + kernel idle": nb.open_s}
    for i in (0, 1):
        nb.run_cell(i)
        nb.assert_no_error(i)
    demo = nb.output_text(1).strip()
    assert demo.startswith("DEMO http://127.0.0.1:"), demo
    demo_url = demo.split()[1]

    # -- run 1: Approve ---------------------------------------------------------------------------------
    t_run = time.perf_counter()
    timings["run 1: %%agent cell returns"] = nb.run_cell(2)
    nb.assert_no_error(2)
    run1 = nb.widget(".na-run").nth(0)
    _wait_run_view(nb, run1, timings, "run 1", t_run)
    _wait_in_run(nb, run1, _JS_LIVE, "the live picture rendered")  # one live picture in the header
    assert run1.locator(".na-step").count() >= 2, "the account page is opened before the delete click"
    # --url {url} was expanded: the agent started on the demo shop and is now on its account page.
    expect(run1.locator(".na-approval")).to_contain_text(demo_url.rstrip("/") + "/account.html")
    assert nb.kernel_status() == "idle", "the %%agent cell returns at once; the run goes on in the background"
    nb.screenshot("run1-approval")
    crop_shown = run1.locator(".na-approval .na-approval-crop").count() > 0  # a figure, not an assert

    t = time.perf_counter()
    run1.locator(".na-approve").click()
    run1.locator(".na-approval").wait_for(state="detached", timeout=30_000)
    timings["run 1: Approve click -> panel gone"] = time.perf_counter() - t
    # the finished run's output is its static record (a widget view would not survive the kernel)
    record1 = nb.cell(2).locator(".na-record")
    expect(record1).to_contain_text("completed", timeout=30_000)
    timings["run 1: Approve click -> record of the completed run"] = time.perf_counter() - t
    expect(record1).to_contain_text("completed · success")
    expect(record1).to_contain_text("Your account has been deleted")
    expect(record1).to_contain_text("approved by user")
    expect(nb.cell(2).locator(".na-run")).to_have_count(0)
    nb.screenshot("run1-completed", ".na-record")

    nb.run_cell(3)
    out = nb.output_text(3)
    assert "RUN1 completed True" in out, out
    assert "'decision': 'approved'" in out and "'by': 'user'" in out, out

    # -- run 2: Deny with a reason ------------------------------------------------------------------------
    t_run = time.perf_counter()
    timings["run 2: %%agent cell returns"] = nb.run_cell(4)
    nb.assert_no_error(4)
    run2 = nb.cell(4).locator(".na-run")
    expect(run2.locator(".na-head")).to_contain_text("Open my account page and delete my account.")
    _wait_run_view(nb, run2, timings, "run 2", t_run)
    run2.locator(".na-deny-reason input").fill(REASON)
    nb.screenshot("run2-deny-reason", ".na-approval")
    t = time.perf_counter()
    run2.locator(".na-deny").click()
    run2.locator(".na-approval").wait_for(state="detached", timeout=30_000)
    timings["run 2: Deny click -> panel gone"] = time.perf_counter() - t
    record2 = nb.cell(4).locator(".na-record")
    expect(record2).to_contain_text("did not delete", timeout=30_000)
    timings["run 2: Deny click -> final record"] = time.perf_counter() - t
    expect(record2).to_contain_text("failed · no success")
    expect(record2).to_contain_text(REASON)
    expect(record2).to_contain_text(f"denied by user: {REASON}")
    nb.screenshot("run2-finished", ".na-record >> nth=1")

    nb.run_cell(5)
    out = nb.output_text(5)
    assert "RUN2 failed False" in out, out
    blocked = next((ln for ln in out.splitlines() if ln.startswith("BLOCKED:")), "")
    assert REASON in blocked, out
    timings["whole test"] = time.perf_counter() - t0
    _print_timings("agent approve / deny", timings)
    print(f"  approval panel shows the element crop: {crop_shown}")


THINK_CELLS = [
    "%load_ext notebook_agent",
    # 1: a model that writes its reflection, then stops until the test opens the gate, then writes the action
    """\
import asyncio
from notebook_agent.agent import PageAgent
from notebook_agent.core.messages import Usage
from notebook_agent.core.model import AssistantStreamBuilder
from notebook_agent.demo import demo_url
from notebook_agent.notebook.runtime import STATE, watch

gate = asyncio.Event()

class GatedModel:
    provider, id = "test", "gated"
    calls = 0

    async def stream(self, context, options):
        self.calls += 1
        b = AssistantStreamBuilder(api="test", provider="test", model="gated")
        for ev in b.start():
            yield ev
        if self.calls == 1:
            head = ('{"evaluation_previous_goal": "Nothing done yet", "memory": "The shop is open", '
                    '"next_goal": "Scroll down to see the products", ')
            for ev in b.tool_call_delta("c", id="call_1", name="AgentOutput", arguments=head):
                yield ev
            await gate.wait()  # the reflection is out; the action is not written yet
            tail = '"action": {"scroll": {"down": true}}}'
        else:
            tail = ('{"evaluation_previous_goal": "Scrolled", "memory": "done", "next_goal": "Finish", '
                    '"action": {"done": {"text": "Saw the products", "success": true}}}')
        for ev in b.tool_call_delta("c", id=f"call_{self.calls}", name="AgentOutput", arguments=tail):
            yield ev
        for ev in b.end_block("c"):
            yield ev
        b.set_usage(Usage())
        for ev in b.finish():
            yield ev

agent = PageAgent(model=GatedModel(), browser=await STATE.get_browser(), start_url=demo_url())
think = watch(agent, "Look at the products of the demo shop")""",
    "gate.set()",
    "r = await think\nprint('THINK', r.status, len(r.steps))",
]


def test_watching_the_agent_think_and_the_saved_record(open_notebook: OpenNotebook, lab_server: Any) -> None:
    import nbformat

    nb = open_notebook("think.ipynb", THINK_CELLS)
    nb.run_cell(0)
    nb.run_cell(1)
    nb.assert_no_error(1)
    run = nb.widget(".na-run").nth(0)
    card = run.locator(".na-step").nth(0)
    # the reflection is in the current card while the model still writes (the action has not run)
    expect(card.locator(".na-streaming")).to_contain_text("Scroll down to see the products")
    expect(card.locator(".na-streaming")).to_contain_text("Nothing done yet")
    expect(card.locator(".na-step-header")).to_contain_text("Step 1/20 · Scroll down to see the products")
    assert card.locator(".na-result-text").inner_text().strip() == ""  # no action result yet
    align = card.locator(".na-step-header").evaluate("(b) => getComputedStyle(b).textAlign")
    assert align in ("left", "start"), align
    nb.screenshot("think-reflection", ".na-run")

    nb.run_cell(2)  # open the gate: the action is written and runs
    # the finished run's output is its static record, pictures included, and no widget view is left
    record = nb.cell(1).locator(".na-record")
    expect(record).to_contain_text("completed", timeout=30_000)
    expect(record).to_contain_text("2 steps")
    nb.page.wait_for_function(
        "(r) => [...r.querySelectorAll('img')].some((i) => /^data:/.test(i.src) && i.naturalWidth > 0)",
        arg=record.element_handle(),
        timeout=15_000,
    )
    expect(nb.cell(1).locator(".na-run")).to_have_count(0)
    nb.run_cell(3)
    assert "THINK completed 2" in nb.output_text(3), nb.output_text(3)

    # save from JupyterLab, then read the file with no kernel: the view's output carries the static record
    nb.page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    path = lab_server.root / "think.ipynb"
    deadline = time.monotonic() + 30
    record = ""
    while not record and time.monotonic() < deadline:  # the save is asynchronous: poll the file, not the clock
        saved = nbformat.read(path, as_version=4)
        record = "".join(
            o.get("data", {}).get("text/html", "") for o in saved.cells[1].get("outputs", []) if "data" in o
        )
        if not record:
            nb.page.wait_for_timeout(200)
    assert "na-record" in record and "Scroll down to see the products" in record, record[:500]
    assert "Saw the products" in record and 'src="data:image/jpeg;base64,' in record
    # nothing in the file needs the kernel: reopened, it shows no "Error displaying widget: model not found"
    views = [o for c in saved.cells for o in c.get("outputs", []) if "data" in o]
    assert not [o for o in views if "application/vnd.jupyter.widget-view+json" in o["data"]]


def _print_timings(title: str, timings: dict[str, float]) -> None:
    print(f"\n[{title}] timings")
    for name, seconds in timings.items():
        print(f"  {name:45} {seconds * 1000:8.0f} ms")


PRICE_CELLS = [
    "%load_ext notebook_agent",
    "from dataclasses import replace\nfrom notebook_agent.demo import DEMO_TASK, demo_url\nurl = demo_url()",
    "%%agent --model demo --approve auto --url {url}\n{DEMO_TASK}",
    # the result as Markdown (a cell's last value), with two prices in what it shows
    "r = await agent_run\nreplace(r, steps=r.steps[:3], status='stopped', error='AeroBeat $89.00; Summit $149.00')",
]
PRICES = "AeroBeat Wireless Headphones $89.00; Summit ANC Wireless Headphones $149.00"
"""What the demo model remembers on its third step: two prices, which MathJax read as a formula."""


def test_prices_in_a_saved_record_show_as_prices(open_notebook: OpenNotebook) -> None:
    """The quickstart's record: a memory with two ``$`` is text in JupyterLab (MathJax typeset every HTML and
    Markdown output, so "$89.00; Summit ... $149.00" became "89.00; *SummitANC...* 149.00")."""
    nb = open_notebook("prices.ipynb", PRICE_CELLS)
    for i in (0, 1):
        nb.run_cell(i)
        nb.assert_no_error(i)
    nb.run_cell(2)
    record = nb.cell(2).locator(".na-record")
    expect(record).to_contain_text("completed", timeout=60_000)
    nb.run_cell(3, timeout=60)
    expect(nb.cell(3).locator(".jp-OutputArea")).to_contain_text("Summit $149.00")
    nb.page.wait_for_timeout(500)  # MathJax typesets after rendering: give it its turn before looking
    assert PRICES in " ".join(record.inner_text().split()), record.inner_text()[:2000]
    for cell in (2, 3):
        assert nb.cell(cell).locator("mjx-container").count() == 0, nb.output_text(cell)[:2000]
    assert "AeroBeat $89.00; Summit $149.00" in nb.output_text(3)
    nb.screenshot("prices-record", ".na-record")
