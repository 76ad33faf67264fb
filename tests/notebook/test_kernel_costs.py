"""A real ipykernel: a ``%%agent --each`` map of more than twenty rows with no budget runs its first five rows,
then its view says what the whole map would cost at their rate with Continue / Stop, answered by a click on the
view's button or from code by the handle (``wait_for_estimate()``, ``proceed()``, ``stop()``). The demo model is
priced with ``set_prices`` so its counted tokens cost something."""

from __future__ import annotations

import json

from jupyter_client.blocking.client import BlockingKernelClient

from tests.notebook.test_kernel import execute, kernel  # noqa: F401

SETUP = """
%load_ext notebook_agent
from notebook_agent import set_prices
from notebook_agent.demo import demo_url
url = demo_url()
set_prices("demo", input=1.0, output=4.0)
import json, pandas as pd
rows = pd.DataFrame({"product": ["Lumen 400 Headlamp", "Wireless Charging Pad", "Cascade Hiking Boots"] * 7})
"""

MAP = "%%agent --model demo --url {{url}} --each rows -o {out}\nFind the price of {{product}} on the demo shop."


def test_a_big_map_asks_after_its_first_rows_and_is_answered_by_a_button_or_by_code(
    kernel: BlockingKernelClient,  # noqa: F811
) -> None:
    reply, out, _ = execute(kernel, SETUP)
    assert reply["status"] == "ok", out
    reply, out, _ = execute(kernel, MAP.format(out="asked"))
    assert reply["status"] == "ok" and "Error" not in out, out
    reply, out, _ = execute(
        kernel,
        "estimate = await asked.wait_for_estimate(timeout=240)\n"
        "box = asked.view.ask_box.children\n"
        "said, (go, stop) = box[0].value, box[1].children\n"
        "print(json.dumps([estimate.text(), estimate.sampled, estimate.rows, go.description, stop.description,"
        " 'for 21 rows at the first 5 rows' in said and 'Go on with the rest?' in said]))\n"
        "stop.click()  # the view's Stop button",
        timeout=300,
    )
    assert reply["status"] == "ok", out
    text, sampled, total, go, stop, shown = json.loads(out)
    assert text.startswith("≈ $") and "for 21 rows at the first 5 rows' rate (≈ " in text
    assert (sampled, total, go, stop, shown) == (5, 21, "Continue", "Stop", True)
    reply, out, _ = execute(
        kernel,
        "m = await asked\nprint(json.dumps([m.counts.succeeded, m.counts.not_started, m.note,"
        " m.ledger.calls, m.ledger.cost is not None and m.ledger.cost > 0]))",
        timeout=240,
    )
    assert reply["status"] == "ok", out
    succeeded, not_started, note, calls, priced = json.loads(out)
    assert (succeeded, not_started, priced) == (5, 16, True) and calls >= 5
    assert note.startswith("Stopped after the first 5 rows: ≈ $")

    reply, out, _ = execute(kernel, MAP.format(out="whole"))
    assert reply["status"] == "ok" and "Error" not in out, out
    reply, out, _ = execute(
        kernel,
        "estimate = await whole.wait_for_estimate(timeout=240)\nwhole.proceed()\nm = await whole\n"
        "print(json.dumps([m.counts.succeeded, m.note, estimate.cost, m.ledger.cost]))",
        timeout=400,
    )
    assert reply["status"] == "ok", out
    succeeded, note, estimated, actual = json.loads(out)
    assert succeeded == 21 and note == "" and actual > 0
    print(f"estimate after 5 of 21 demo rows: ${estimated:.4f}, the whole map: ${actual:.4f}")
    assert abs(estimated - actual) / actual < 0.25
