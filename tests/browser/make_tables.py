"""The 1,500-row table fixture (pages/table_1500.html) and the data it shows, made deterministically.

The page is committed; ``test_extract.py`` checks it still equals :func:`render` and that what the reader
extracts equals :func:`expected` cell for cell. Regenerate with ``.venv/bin/python tests/browser/make_tables.py``.

The data is made to catch a reader that retypes or parses: names with accents, CJK, apostrophes, ampersands
and irregular whitespace or inline markup in the HTML; prices shown like "$1,234.50"; dates; a link column
with relative hrefs (extracted as absolute URLs).
"""

from __future__ import annotations

import html
import random
from datetime import date, timedelta
from pathlib import Path
from urllib.parse import urljoin

ROWS = 1500
COLUMNS = ["Name", "Price", "Quantity", "Date", "Product", "Product link"]
PAGE = Path(__file__).parent / "pages" / "table_1500.html"

FIRST = ["Zoë", "Björn", "Łukasz", "José", "Ægir", "Nguyễn", "李", "Ada", "Grace", "Amélie", "Søren", "Ines"]
LAST = ["Müller", "O'Brien", "Smith & Sons", "Çelik", "Novák", "王", "Lovelace", "Hopper", "Dvořák", "Ngô"]


def source() -> list[tuple[str, str, str, str, str, str]]:
    """The rows as the page shows them: name, price, quantity, date, product, product href (relative)."""
    rnd = random.Random(ROWS)
    out = []
    start = date(2020, 1, 1)
    for i in range(1, ROWS + 1):
        name = f"{rnd.choice(FIRST)} {rnd.choice(LAST)}"
        price = f"${rnd.randint(50, 9_999_999) / 100:,.2f}"
        quantity = str(rnd.randint(0, 5000))
        day = (start + timedelta(days=rnd.randint(0, 1500))).isoformat()
        out.append((name, price, quantity, day, f"Product {i:04d}", f"/products/{i}?ref=t&n={i % 7}"))
    return out


def expected(base: str) -> list[list[str]]:
    """What an exact reader extracts from the page served at ``base`` (the link made absolute)."""
    return [[n, p, q, d, prod, urljoin(base, href)] for n, p, q, d, prod, href in source()]


def _name_cell(name: str, i: int) -> str:
    first, last = (html.escape(part, quote=False) for part in name.split(" ", 1))
    if i % 3 == 0:
        return f"<b>{first}</b> {last}"
    if i % 3 == 1:
        return f"  {first}\n      {last} "
    return f"{first}&nbsp;{last}" if i % 30 == 2 else f"{first} {last}"


def render() -> str:
    rows = []
    for i, (name, price, quantity, day, product, href) in enumerate(source()):
        rows.append(
            f"<tr><td>{_name_cell(name, i)}</td><td>{price}</td><td>{quantity}</td><td>{day}</td>"
            f'<td><a href="{html.escape(href)}">{product}</a></td></tr>'
        )
    return (
        "<!doctype html>\n<html><head><meta charset=utf-8><title>Orders 1500</title>\n"
        "<style>td, th { padding: 2px 6px; }</style></head>\n<body>\n<h1>Orders</h1>\n"
        "<table id=orders><caption>Orders</caption>\n"
        "<thead><tr><th>Name</th><th>Price</th><th>Quantity</th><th>Date</th><th>Product</th></tr></thead>\n"
        "<tbody>\n" + "\n".join(rows) + "\n</tbody></table>\n</body></html>\n"
    )


if __name__ == "__main__":
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE} ({PAGE.stat().st_size} bytes)")
