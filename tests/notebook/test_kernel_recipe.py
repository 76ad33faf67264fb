"""A real ipykernel: Kernel → Interrupt stops a recipe map and keeps every finished row, whether the map runs in
the background (``%%agent --each ROWS --recipe``, the kernel idle) or a cell awaits it (``await recipe.map``: the
cell ends with ``MapInterrupted``, whose ``.result`` holds the finished rows)."""

from __future__ import annotations

import json

from jupyter_client.blocking.client import BlockingKernelClient

from notebook_agent.demo import PRICE_TASK
from tests.notebook.test_kernel import execute, finish, kernel, kernel_manager_interrupt, start_awaiting_cell  # noqa: F401

SETUP = """
%load_ext notebook_agent
import asyncio, json, sys
import pandas as pd
from pydantic import BaseModel
from notebook_agent import PageAgent
from notebook_agent.agent import Recipe
from notebook_agent.demo import PRICE_TASK, demo_url
url = demo_url()
class Price(BaseModel):
    name: str
    price: float
agent = PageAgent(model="demo", start_url=url, output=Price, screenshots=False)
first = await agent.run(PRICE_TASK.format(product="Ridgeline Rain Jacket"))
recipe = Recipe.from_run(first, template=PRICE_TASK)
PRICES = {"Cascade Hiking Boots": 159.0, "Lumen 400 Headlamp": 34.5, "Basecamp 28L Daypack": 79.0}
many = pd.DataFrame({"product": list(PRICES) * 20})
def kept(result):
    def answer(r):
        out = r.facts.output
        return out.model_dump() if hasattr(out, "model_dump") else out
    rows = [r for r in result.rows if r.status == "completed"]
    want = lambda r: {"name": r.values["product"], "price": PRICES[r.values["product"]]}
    wrong = [(r.values, answer(r)) for r in rows if answer(r) != want(r)]
    statuses = sorted({r.status for r in result.rows})
    return json.dumps([len(rows), not wrong, result.healed_rows, statuses]) + (chr(10) + repr(wrong) if wrong else "")
async def rows_done(n, handle):
    while handle.view.bar.value < n and not handle.done:  # a state polled, as tests/waits.py does
        await asyncio.sleep(0.02)
"""


def test_interrupt_stops_a_recipe_map_and_keeps_every_finished_row(kernel: BlockingKernelClient) -> None:  # noqa: F811
    reply, out, _ = execute(kernel, SETUP, timeout=180)
    assert reply["status"] == "ok", (reply, out)
    reply, out, _ = execute(kernel, "%%agent --each many --recipe recipe --concurrency 2 --out mapped\n" + PRICE_TASK)
    assert reply["status"] == "ok" and "Error" not in out, out
    reply, out, _ = execute(kernel, "await asyncio.wait_for(rows_done(3, mapped), 300)\nprint(mapped.done)", 320)
    assert reply["status"] == "ok" and out.strip() == "False", out
    kernel_manager_interrupt(kernel)  # the kernel is idle; the map runs in the background
    reply, out, _ = execute(kernel, "await asyncio.wait({mapped.task}, timeout=60)\nprint(kept(await mapped))", 90)
    assert reply["status"] == "ok", (reply, out)
    done, right, healed, statuses = json.loads(out.splitlines()[0])
    assert done >= 3 and right and healed == [] and "not_started" in statuses, out
    assert set(statuses) <= {"completed", "stopped", "not_started"}, out

    # a cell awaiting the map: Interrupt ends the cell with MapInterrupted, its .result the finished rows
    msg_id = start_awaiting_cell(
        kernel,
        "await recipe.map(many, agent, concurrency=2, on_event=lambda e: print('row', flush=True) "
        "if getattr(e, 'ended', False) and e.done == 3 else None)",
        timeout=300,
    )
    # wait for the third row to end (its line), then Interrupt, as a person would
    while True:
        msg = kernel.get_iopub_msg(timeout=300)
        if msg["parent_header"].get("msg_id") == msg_id and "row" in msg["content"].get("text", ""):
            break
    kernel_manager_interrupt(kernel)
    reply, _ = finish(kernel, msg_id, 120)
    assert reply["status"] == "error" and reply["ename"] == "MapInterrupted", reply
    reply, out, _ = execute(kernel, "print(kept(sys.last_value.result))")
    assert reply["status"] == "ok", (reply, out)
    done, right, healed, statuses = json.loads(out.splitlines()[0])
    assert done >= 3 and right and healed == [] and "not_started" in statuses, out
