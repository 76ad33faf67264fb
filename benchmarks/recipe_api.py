"""Rows per minute of a recipe that learned the call behind its page, on the API-backed fixture sites
(tests/agent/recipes/api_sites.py): by request, by the page recipe, and by a bare Playwright loop doing the same
steps, on the same rows, with the right answers out of N for each, and whether every answer by request is the page
recipe's. Then memory over one map of ``memory_rows`` rows by request. Run from benchmarks/recipe_map.py (``--api``
sections) or alone::

    .venv/bin/python benchmarks/recipe_api.py [--rows 200] [--rounds 4] [--memory-rows 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: tests.agent.recipes

from notebook_agent import BrowserSession, PageAgent
from notebook_agent.agent import MapProgress, Recipe
from notebook_agent.llm.scripted import ScriptedModel
from tests.agent.recipes.api_recordings import RECORDINGS
from tests.agent.recipes.api_sites import PRODUCTS, Sites, api_sites

Truth = Callable[[dict[str, str]], dict[str, Any]]
#: Each site's right answer for a row, as the typed output's fields.
TRUTH: dict[str, Truth] = {
    "catalogue": lambda row: {"name": row["product"], "price": PRODUCTS[row["product"]][1]},
    "product": lambda row: {"price": PRODUCTS[row["product"]][1], "sku": PRODUCTS[row["product"]][2]},
    "order": lambda row: {"message": f"Thanks {row['name']}, plan {row['plan']}"},
}


def money(text: str) -> float:
    return float(text.rsplit("$", 1)[1].replace(",", ""))


# -- the bare Playwright loops: the same steps on the same pages, the same values read -----------------------------
async def loop_catalogue(page: Any, site: Sites, row: dict[str, str]) -> dict[str, Any]:
    await page.goto(site.url("/catalogue/"))
    await page.fill("#q", row["product"])
    await page.click("#go")
    line = await page.locator("#out li").first.inner_text()
    name, _, _ = line.rpartition(": ")
    return {"name": name, "price": money(line)}


async def loop_product(page: Any, site: Sites, row: dict[str, str]) -> dict[str, Any]:
    await page.goto(site.url("/product/"))
    await page.fill("#name", row["product"])
    await page.click("#go")
    lines = await page.locator("#out li").all_inner_texts()
    return {"price": money(lines[0]), "sku": lines[1].removeprefix("SKU: ")}


async def loop_order(page: Any, site: Sites, row: dict[str, str]) -> dict[str, Any]:
    await page.goto(site.url("/order/"))
    await page.fill("#name", row["name"])
    await page.select_option("#plan", row["plan"])
    await page.click("#go")
    return {"message": await page.locator("#out li").first.inner_text()}


LOOPS = {"catalogue": loop_catalogue, "product": loop_product, "order": loop_order}

Outcome = list[dict[str, Any] | None]
Work = Callable[[list[dict[str, str]]], Awaitable[Outcome]]


def loop_work(browser: BrowserSession, site: Sites, name: str, concurrency: int) -> Work:
    one = LOOPS[name]

    async def work(rows: list[dict[str, str]]) -> Outcome:
        out: Outcome = [None] * len(rows)
        queue = list(enumerate(rows))

        async def worker() -> None:
            fork = await browser.fork()
            page = await fork.ensure_page()
            try:
                while queue:
                    i, row = queue.pop(0)
                    try:
                        out[i] = await one(page, site, row)
                    except Exception:
                        out[i] = None
            finally:
                await fork.close()

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return out

    return work


def recipe_work(recipe: Recipe, agent: PageAgent[Any], mode: str, concurrency: int) -> Work:
    async def work(rows: list[dict[str, str]]) -> Outcome:
        result = await recipe.map(rows, agent, mode=mode, concurrency=concurrency, heal=False)
        return [r.facts.output.model_dump() if r.facts is not None and r.success else None for r in result.rows]

    return work


async def interleaved(settings: dict[str, Work], rows: list[dict[str, str]], rounds: int) -> dict[str, Any]:
    """Every setting over every row, in rounds of a share of the rows, the settings in turn within a round (a
    shared machine's drift meets each alike): per setting, its answers (in row order) and seconds."""
    size = max(1, -(-len(rows) // rounds))
    answers: dict[str, Outcome] = {name: [] for name in settings}
    seconds = dict.fromkeys(settings, 0.0)
    for start in range(0, len(rows), size):
        chunk = rows[start : start + size]
        for name, work in settings.items():
            t0 = time.perf_counter()
            answers[name] += await work(chunk)
            seconds[name] += time.perf_counter() - t0
    return {name: (answers[name], seconds[name]) for name in settings}


LABELS = {
    "loop1": "Playwright loop, sequential",
    "page1": "page recipe, concurrency 1",
    "request1": "by request, concurrency 1",
    "loop4": "Playwright loop, 4 contexts",
    "page4": "page recipe, concurrency 4",
    "request4": "by request, concurrency 4",
}


async def site_section(browser: BrowserSession, site: Sites, name: str, total: int, rounds: int) -> None:
    record, params, output, base = RECORDINGS[name]
    recipe = Recipe.from_run(await record(browser, site), params=params)
    assert recipe.call is not None, recipe.call_note
    rows = [base[i % len(base)] for i in range(total)]
    agent = PageAgent(model=ScriptedModel([]), browser=browser, output=output, screenshots=False, approval="auto")
    await recipe.map(rows[:4], agent, mode="page", concurrency=4, heal=False)  # warm: the pool, the page cache
    settings = {
        "loop1": loop_work(browser, site, name, 1),
        "page1": recipe_work(recipe, agent, "page", 1),
        "request1": recipe_work(recipe, agent, "request", 1),
        "loop4": loop_work(browser, site, name, 4),
        "page4": recipe_work(recipe, agent, "page", 4),
        "request4": recipe_work(recipe, agent, "request", 4),
    }
    figures = await interleaved(settings, rows, rounds)
    truth = [TRUTH[name](row) for row in rows]
    print(f"\n{name} ({recipe.call.describe().splitlines()[-1].split(' ', 1)[1]}), {total} rows")
    print(f"{'setting':32} {'rows/min':>10} {'right':>11} {'vs loop':>8}")
    rates = {}
    for key, (answers, seconds) in figures.items():
        rates[key] = 60 * total / seconds
        right = sum(1 for a, t in zip(answers, truth, strict=True) if a == t)
        base_rate = rates["loop1" if key.endswith("1") else "loop4"] if key in rates else rates[key]
        print(f"{LABELS[key]:32} {rates[key]:10.0f} {right:>5}/{total:<5} {rates[key] / base_rate:7.1f}×")
    same = sum(1 for a, b in zip(figures["request4"][0], figures["page4"][0], strict=True) if a == b and a is not None)
    print(
        f"by request / Playwright loop: {rates['request1'] / rates['loop1']:.1f}× sequential, "
        f"{rates['request4'] / rates['loop4']:.1f}× at 4; answers identical to the page recipe's: {same}/{total}"
    )


def resident_mb(pid: int) -> tuple[float, float]:
    import psutil

    me = psutil.Process(pid)
    children = 0.0
    for child in me.children(recursive=True):
        try:
            children += child.memory_info().rss
        except psutil.Error:
            continue
    return me.memory_info().rss / 2**20, children / 2**20


async def memory(browser: BrowserSession, site: Sites, total: int, concurrency: int = 4) -> None:
    """One map of ``total`` catalogue rows by request, this process's and the browser's memory sampled as rows end."""
    record, params, output, base = RECORDINGS["catalogue"]
    recipe = Recipe.from_run(await record(browser, site), params=params)
    agent = PageAgent(model=ScriptedModel([]), browser=browser, output=output, screenshots=False)
    rows = [base[i % len(base)] for i in range(total)]
    every = max(total // 10, 1)
    samples: list[tuple[float, float]] = []
    print(f"\nmemory over one map of {total} catalogue rows by request (concurrency {concurrency}; MB resident)")
    print(f"{'rows done':>10} {'python':>8} {'browser':>8} {'rows/min':>9}")

    def sample(event: Any) -> None:
        if isinstance(event, MapProgress) and event.ended and (event.done % every == 0 or event.done == total):
            py, br = resident_mb(os.getpid())
            samples.append((py, br))
            print(f"{event.done:>10} {py:8.0f} {br:8.0f} {event.rows_per_minute:9.0f}", flush=True)

    result = await recipe.map(rows, agent, mode="request", concurrency=concurrency, heal=False, on_event=sample)
    first, last = samples[0], samples[-1]
    right = sum(
        1 for r, row in zip(result.rows, rows, strict=True)
        if r.facts is not None and r.success and r.facts.output.model_dump() == TRUTH["catalogue"](row)
    )  # fmt: skip
    print(
        f"growth from the first sample to the last: python {last[0] - first[0]:+.0f} MB, browser "
        f"{last[1] - first[1]:+.0f} MB; right {right}/{total}; ways {result.way_counts()}"
    )


async def api_sections(rows: int, rounds: int, memory_rows: int) -> None:
    with api_sites() as site:
        async with BrowserSession() as browser:
            for name in ("catalogue", "product", "order"):
                await site_section(browser, site, name, rows, rounds)
            if memory_rows:
                await memory(browser, site, memory_rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=200, help="rows per setting and site (default 200)")
    parser.add_argument("--rounds", type=int, default=4, help="rounds the settings take turns in (default 4)")
    parser.add_argument("--memory-rows", type=int, default=10_000, help="rows of the memory run (0: skip)")
    args = parser.parse_args()
    asyncio.run(api_sections(args.rows, args.rounds, args.memory_rows))
