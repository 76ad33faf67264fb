"""The demo: a small local shop to drive (Northwind Outfitters) and an offline model that needs no API key.

``demo_url()`` serves the shop on 127.0.0.1 (one shared server per process); ``serve_demo()`` starts a private
one; ``stable_demo()`` is the terminal's, at one address (``http://127.0.0.1:8765/``) so its runs replay later.
``demo_model()`` plays :data:`DEMO_TASK` and ``demo_model("delete_account")`` plays :data:`DELETE_TASK`;
:data:`PRICE_TASK` and :data:`CATALOG_TASK` are the data tasks (a typed answer, an exact table; see
:mod:`.data_tasks`); ``demo_model_for(task)`` picks one by the task text. The model registry knows this model
as ``demo`` (``get_model("demo")``, ``PageAgent(model="demo")``, ``--model demo``), through :func:`demo_model_named`.

The shop is served by ``server`` from ``site/``; the model's tasks are ``model``'s (the shop) and ``data_tasks``'
(typed answers, tables), reading the state message with ``state``.
"""

from .data_tasks import CATALOG_TASK, PRICE_TASK
from .model import (
    DELETE_TASK,
    DEMO_TASK,
    UNKNOWN_TASK_TEXT,
    any_task_demo_model,
    demo_model,
    demo_model_for,
    demo_model_named,
    task_kind_for,
)
from .server import DemoServer, demo_url, serve_demo, stable_demo

__all__ = [
    "CATALOG_TASK",
    "DELETE_TASK",
    "DEMO_TASK",
    "PRICE_TASK",
    "UNKNOWN_TASK_TEXT",
    "DemoServer",
    "any_task_demo_model",
    "demo_model",
    "demo_model_for",
    "demo_model_named",
    "demo_url",
    "serve_demo",
    "stable_demo",
    "task_kind_for",
]
