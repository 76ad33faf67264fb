"""What ``extract_table`` saves on the 1,500-row fixture table: time to read it, and tokens the model reads.

Figures, not asserts. For tests/browser/pages/table_1500.html (served on 127.0.0.1 for the run):
- seconds to read the table through the action (median of --runs; snapshot not included) and through
  ``read_table`` directly, rows × columns, and whether the rows equal the source data (make_tables.py);
- tokens of the action's result (what the model reads) against the tokens the model would spend retyping the
  table as JSON (a list of row objects, and a list of row arrays, the baselines), and the ratios.

Run: .venv/bin/python benchmarks/extract_table.py [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.browser.make_tables: the fixture's data
sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot import serve  # benchmarks/snapshot.py: a quiet local server

from notebook_agent.browser import BrowserSession
from notebook_agent.browser.extract.tables import read_table
from notebook_agent.llm.tokens import EXACT, count_tokens
from tests.browser.make_tables import PAGE, expected


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    server, port = serve(PAGE.parent)
    browser = BrowserSession(viewport=(1280, 800))
    try:
        await browser.start()
        page = await browser.ensure_page()
        url = f"http://127.0.0.1:{port}/{PAGE.name}"
        await page.goto(url, wait_until="load")
        snap = await browser.snapshot()
        index = next(i for i, e in snap.elements.items() if e.text.startswith("Product 0001"))

        action_s, direct_s = [], []
        result = None
        for _ in range(args.runs):
            t0 = time.perf_counter()
            result = await browser.act({"extract_table": {"index": index}})
            action_s.append(time.perf_counter() - t0)
            cell = await page.query_selector("td")
            assert cell is not None
            t0 = time.perf_counter()
            await read_table(page.main_frame, cell)
            direct_s.append(time.perf_counter() - t0)
        assert result is not None and not result.is_error, result and result.text_content
        table = result.details["table"]

        seen = count_tokens(result.text_content)
        records = count_tokens(json.dumps(table.records(), ensure_ascii=False))
        arrays = count_tokens(json.dumps([table.columns, *table.rows], ensure_ascii=False))
        exact = table.rows == expected(url)
        print(f"extract_table on {PAGE.name} ({'exact o200k counts' if EXACT else 'estimated tokens: chars / 4'})")
        print(f"  rows × columns            {len(table.rows)} × {len(table.columns)}  (equal to the source: {exact})")
        print(f"  seconds, the action       {statistics.median(action_s):.3f}  (median of {args.runs})")
        print(f"  seconds, read_table       {statistics.median(direct_s):.3f}")
        print(f"  tokens the model reads    {seen}")
        print(f"  tokens to retype: JSON objects {records}  ratio {records / seen:.0f}×")
        print(f"  tokens to retype: JSON arrays  {arrays}  ratio {arrays / seen:.0f}×")
        print("\nWhat the model reads:\n" + result.text_content)
    finally:
        await browser.close()
        server.shutdown()
        server.server_close()


if __name__ == "__main__":
    asyncio.run(main())
