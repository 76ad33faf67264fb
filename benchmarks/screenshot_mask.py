"""What painting hidden values over costs per screenshot, now that the page matches every spelling that reads the
same (core/text/lookalike.py's rule): the 3,000-row table, in ASCII and with non-ASCII text in every row (each
character then goes through the page's normalisation), against the same screenshot with nothing to hide,
measured in the same run.

Figures, not asserts. Run: .venv/bin/python benchmarks/screenshot_mask.py [--repeats N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot import serve, table  # benchmarks/snapshot.py: page generators, a local server

from notebook_agent.browser import BrowserSession
from notebook_agent.core.text.lookalike import CaseInsensitive

VALUES = ["S3cr3t-Value-42", CaseInsensitive("Ada.Lovelace@Example.org")]


async def measure(browser: BrowserSession, repeats: int) -> dict[str, float]:
    """Median ms of a screenshot with nothing to hide, and with the values to paint over."""
    plain: list[float] = []
    hidden: list[float] = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        await browser.screenshot()
        plain.append((time.perf_counter() - t0) * 1000)
        with browser.hiding(VALUES):
            t0 = time.perf_counter()
            await browser.screenshot()
            hidden.append((time.perf_counter() - t0) * 1000)
    return {"plain": statistics.median(plain), "hidden": statistics.median(hidden)}


async def main(repeats: int) -> None:
    # non-ASCII in every row: accents, full-width letters, a zero-width space (the page normalises them all)
    wide = (
        "<script>for (const td of document.querySelectorAll('td:nth-child(2)'))"
        " td.textContent += ' Müller ｆｕｌｌ\\u200bwidth';</script>"
    )
    pages = {
        "3,000 rows, ASCII": table(3000),
        "3,000 rows, non-ASCII": table(3000).replace("</body>", wide + "</body>"),
    }
    browser = BrowserSession(viewport=(1280, 800))
    await browser.start()
    print(f"screenshot with values to paint over vs with none, median of {repeats} (ms):")
    print(f"  {'page':24} {'none':>7} {'hidden':>7} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        server, port = serve(root)
        try:
            for k, (name, html) in enumerate(pages.items()):
                (root / f"p{k}.html").write_text(html, encoding="utf-8")
                await browser.ensure_page()
                await browser.page.goto(f"http://127.0.0.1:{port}/p{k}.html")
                await measure(browser, 1)  # warm up (the fold table is built once per process)
                got = await measure(browser, repeats)
                print(f"  {name:24} {got['plain']:7.1f} {got['hidden']:7.1f} {got['hidden'] / got['plain']:6.2f}")
        finally:
            server.shutdown()
            await browser.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=10, help="screenshots of each kind (default 10)")
    asyncio.run(main(parser.parse_args().repeats))
