"""The offline demo model's data tasks: a typed answer, an exact table, and one task over many rows, with no key.

- :data:`PRICE_TASK` ("Find the price of {product} on the demo shop."): search for the product and report its
  price; with ``output=`` the answer goes in ``done``'s ``data``, its fields filled by name (name, price).
  Made for ``agent.map(PRICE_TASK, products)``.
- :data:`CATALOG_TASK`: open the price list, read it with ``extract_table`` and answer with the table by
  name (``done(table="t1", columns=...)``), so not one cell is retyped; without ``output=`` it reports what it
  read.

Like the other demo rules they decide from the state message alone, the way a real model reads it.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote_plus, urljoin, urlsplit

from .state import PageState, listed_products

PRICE_TASK = "Find the price of {product} on the demo shop."
CATALOG_TASK = "Read the demo shop's price list: every product with its name, category and price."

_WANTED = re.compile(r"price of\s+(?P<name>.+?)\s*(?:\bon\b|\bin\b|\bat\b|\bfrom\b)?\s*(?:the\s+)?demo shop", re.I)
_TABLE_NAME = re.compile(r"\b(t\d+)\b")
# the price list's columns (prices.html), by the words a schema's field may use for them
_COLUMNS = (
    (("name", "product", "title", "item"), "Product"),
    (("category", "kind", "type"), "Category"),
    (("price", "cost", "amount"), "Price"),
    (("rating", "stars", "score"), "Rating"),
    (("url", "link", "href"), "Product link"),
)


def is_price_task(task: str) -> bool:
    return _WANTED.search(task) is not None


def is_catalog_task(task: str) -> bool:
    low = task.lower()
    return "price list" in low or ("every product" in low and "demo shop" in low)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}/"


def _field_value(field: str, record: dict[str, Any]) -> Any:
    key = field.casefold()
    for words, column in _COLUMNS:
        if any(w in key for w in words):
            return record.get(column)
    return None


def fill(schema: dict[str, Any] | None, record: dict[str, Any]) -> Any:
    """An answer in ``schema``'s shape from what the page showed (``record`` by price-list column names)."""
    if not schema:
        return None
    if schema.get("type") == "array":
        item = fill(schema.get("items") if isinstance(schema.get("items"), dict) else None, record)
        return [item] if item is not None else []
    props = schema.get("properties")
    if not isinstance(props, dict):
        return record.get("Price")
    out: dict[str, Any] = {}
    for name, sub in props.items():
        value = _field_value(name, record)
        kind = sub.get("type") if isinstance(sub, dict) else None
        if kind == "array":
            value = fill(sub, record)
        if value is not None:
            out[name] = value
    return out


def columns_for(schema: dict[str, Any] | None) -> dict[str, str]:
    """``done``'s ``columns``: which price-list column fills each field of one row of ``schema``."""
    if not schema:
        return {}
    items = schema.get("items") if schema.get("type") == "array" else None
    if items is None:  # an object with one list field
        lists = [
            s for s in (schema.get("properties") or {}).values() if isinstance(s, dict) and s.get("type") == "array"
        ]
        items = lists[0].get("items") if lists else None
    out: dict[str, str] = {}
    for name in (items or {}).get("properties") or {}:
        for words, column in _COLUMNS:
            if any(w in name.casefold() for w in words):
                out[name] = column
                break
    return out


def price_step(state: PageState) -> tuple[str, str, str, dict[str, Any]]:
    """(evaluation, next goal, action, args) for one step of :data:`PRICE_TASK`."""
    m = _WANTED.search(state.task)
    wanted = m.group("name").strip(" .\"'") if m else ""
    if not wanted:
        return (
            "I cannot tell which product to look up.",
            "Stop.",
            "done",
            {
                "text": "The task does not name a product (write: Find the price of NAME on the demo shop).",
                "success": False,
            },
        )
    if state.page == "search.html" and state.query.get("q", "").casefold().strip() == wanted.casefold():
        products = listed_products(state)
        exact = [p for p in products if p.name.casefold() == wanted.casefold()]
        close = exact or [p for p in products if wanted.casefold() in p.name.casefold()]
        if not close:
            return (
                f"The search shows no product called {wanted}.",
                "Report that it is not sold.",
                "done",
                {
                    "text": f"The demo shop has no product called {wanted}.",
                    "success": False,
                },
            )
        found = close[0]
        record = {"Product": found.name, "Price": found.price}
        args: dict[str, Any] = {"text": f"{found.name} costs ${found.price:,.2f}.", "success": True}
        if state.answer_schema is not None:
            args["data"] = fill(state.answer_schema, record)
        return f"Success: the search lists {found.name} at ${found.price:,.2f}.", "Report the price.", "done", args
    target = urljoin(_origin(state.url or "http://127.0.0.1/"), "search.html?q=" + quote_plus(wanted))
    return (
        "Nothing done yet." if state.last is None else "Not on the results yet.",
        (f"Search the shop for {wanted}."),
        "go_to_url",
        {"url": target},
    )


def catalog_step(state: PageState) -> tuple[str, str, str, dict[str, Any]]:
    """(evaluation, next goal, action, args) for one step of :data:`CATALOG_TASK`."""
    last = state.last
    if last is not None and last.action == "extract_table" and not last.result.startswith("Error"):
        found = _TABLE_NAME.search(last.result)
        name = found.group(1) if found else "t1"
        args: dict[str, Any] = {"text": f"Read the price list (table {name}).", "success": True}
        if state.answer_schema is not None and state.answer_takes_table:
            args.update(table=name, columns=columns_for(state.answer_schema))
        elif state.answer_schema is not None:
            args["data"] = fill(state.answer_schema, {})
        return f"Success: {last.result.splitlines()[0][:120]}", "Answer with the table.", "done", args
    if state.page != "prices.html":
        return (
            "Nothing done yet.",
            "Open the price list.",
            "go_to_url",
            {"url": urljoin(_origin(state.url), "prices.html")},
        )
    header = next((i for i, line in enumerate(state.lines) if "Product | Category" in line), None)
    first = next((e for e in state.elements if e.tag == "a" and header is not None and e.line > header), None)
    if first is None:
        return (
            "The price list shows no products.",
            "Stop.",
            "done",
            {"text": "The price list is empty.", "success": False},
        )
    return "Success: the price list is open.", "Read the whole table exactly.", "extract_table", {"index": first.index}
