"""A real ipykernel: ``%%agent --output NAME`` takes the type from the notebook and gives the answer typed."""

from __future__ import annotations

import json

from jupyter_client.blocking.client import BlockingKernelClient

from notebook_agent.demo import PRICE_TASK
from tests.notebook.test_kernel import execute, kernel  # noqa: F401


def test_output_names_a_type_of_the_notebook(kernel: BlockingKernelClient) -> None:  # noqa: F811
    reply, _, _ = execute(
        kernel,
        "%load_ext notebook_agent\nfrom notebook_agent.demo import demo_url\nurl = demo_url()\n"
        "from pydantic import BaseModel\nclass Price(BaseModel):\n    name: str\n    price: float\n",
    )
    assert reply["status"] == "ok"
    task = PRICE_TASK.format(product="Lumen 400 Headlamp")
    reply, out, _ = execute(kernel, f"%%agent --model demo --url {{url}} --output list[Price] -o typed\n{task}")
    assert reply["status"] == "ok" and "Error" not in out, out
    reply, out, _ = execute(
        kernel,
        "r = await typed\nimport json\n"
        "print(json.dumps([p.model_dump() for p in r.output]), type(r.output[0]).__name__)",
        timeout=120,
    )
    assert reply["status"] == "ok", out
    data, kind = out.rsplit(" ", 1)
    assert json.loads(data) == [{"name": "Lumen 400 Headlamp", "price": 34.5}] and kind.strip() == "Price"
    # a name the notebook does not have is one sentence, and nothing runs
    reply, out, _ = execute(kernel, f"%%agent --model demo --url {{url}} --output list[Prise]\n{task}")
    assert reply["status"] == "ok"
    assert out.strip() == "%%agent: --output list[Prise]: 'Prise' is not defined in the notebook. Did you mean Price?"


def test_each_maps_the_task_over_a_dataframe(kernel: BlockingKernelClient) -> None:  # noqa: F811
    reply, _, _ = execute(
        kernel,
        "%load_ext notebook_agent\nfrom notebook_agent.demo import demo_url\nurl = demo_url()\nimport pandas as pd\n"
        "products = pd.DataFrame({'product': ['Lumen 400 Headlamp', 'Wireless Charging Pad']})",
    )
    assert reply["status"] == "ok"
    reply, out, _ = execute(
        kernel,
        "%%agent --model demo --url {url} --each products --concurrency 2 -o priced\n"
        "Find the price of {product} on the demo shop.",
    )
    assert reply["status"] == "ok" and "Error" not in out, out
    reply, out, _ = execute(
        kernel,
        "m = await priced\nimport json\n"
        "print(json.dumps(m.to_pandas()[['product', 'status', 'answer']].values.tolist()))",
        timeout=120,
    )
    assert reply["status"] == "ok", out
    assert json.loads(out) == [
        ["Lumen 400 Headlamp", "completed", "Lumen 400 Headlamp costs $34.50."],
        ["Wireless Charging Pad", "completed", "Wireless Charging Pad costs $25.00."],
    ]
