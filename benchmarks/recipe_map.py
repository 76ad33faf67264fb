"""Rows per minute of a recipe map, against a hand-written Playwright loop and against ``agent.map``.

Two sites, one machine, one run:

- the demo shop (``notebook_agent.demo``): the data task "Find the price of {product} on the demo shop." with a
  typed answer, recorded once with the offline demo model and made a recipe (``Recipe.from_run(run, template=...)``);
- a fixture site served here: a sign-up form (type a name, choose a plan, submit) whose thanks page says what
  was submitted, recorded once with a scripted model.

The settings take turns in ``--rounds`` rounds of a share of the rows each (on a shared machine whose load
drifts, every setting meets the same drift, so the ratios hold). Settings: the recipe map in this process at
concurrency 1, 4 and 8 (each row in a pooled context of one browser), and on a Dask ``LocalCluster`` of 2
worker processes (the cluster's start-up and each worker's first browser are paid before the rounds, reported
apart); a hand-written Playwright loop doing the same steps on the same pages (sequential, 4 contexts side by
side, and sequential with a new context per row: rows kept apart as a recipe map keeps them), reading the same
values; ``agent.map`` with the offline demo model (concurrency 4), the thing a
recipe replaces, as it is (the demo model answers in microseconds, so a row costs what a recipe's row costs:
the same pages read) and with ``--latency`` seconds before each answer (a remote model's time to first token).
Then memory over ``--memory-rows`` rows of the demo
recipe: this process's and the browser's resident memory every so many rows (flat means no row leaves anything).

Last, the API-backed fixture sites (benchmarks/recipe_api.py): a recipe that learned the call behind its page, on
the same ``--api-rows`` rows by request, by the page recipe and by a bare Playwright loop, with the right answers out
of N for each and whether every answer by request is the page recipe's; then memory over one map of
``--api-memory-rows`` rows by request.

    .venv/bin/python benchmarks/recipe_map.py [--rows 48] [--rounds 4] [--memory-rows 2000] [--no-dask]
    .venv/bin/python benchmarks/recipe_map.py --api-only [--api-rows 200] [--api-memory-rows 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import pickle
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import contextmanager
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

from pydantic import BaseModel

from notebook_agent import BrowserSession, PageAgent
from notebook_agent.agent import MapProgress, Recipe
from notebook_agent.demo import PRICE_TASK, serve_demo
from notebook_agent.llm.scripted import ScriptedModel

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: tests.agent.test_page_agent
from recipe_api import api_sections  # benchmarks/recipe_api.py: the API-backed fixture sites

from tests.agent.test_page_agent import index_of, step

PRODUCTS = [
    "Ridgeline Rain Jacket",
    "Cascade Hiking Boots",
    "Merino Trail Socks (2-pack)",
    "Basecamp 28L Daypack",
    "Lumen 400 Headlamp",
    "Insulated Steel Bottle 750 ml",
    "Pebble Wireless Earbuds",
]
NAMES = ["Ada", "Grace", "Linus", "Barbara", "Edsger", "Margaret", "Alan"]
PLANS = ["Free", "Pro", "Team"]


class Price(BaseModel):
    name: str
    price: float


class Signup(BaseModel):
    message: str


FORM = b"""<!doctype html><html><head><meta charset="utf-8"><title>Sign up</title></head><body>
<h1>Sign up</h1><form action="thanks.html" method="get">
<label>Name <input name="name"></label>
<label>Plan <select name="plan"><option>Free</option><option>Pro</option><option>Team</option></select></label>
<button type="submit">Create account</button></form></body></html>"""
THANKS = b"""<!doctype html><html><head><meta charset="utf-8"><title>Welcome</title></head><body>
<h1 id="msg">...</h1><script>const q = new URLSearchParams(location.search);
document.getElementById("msg").textContent = `Thanks ${q.get("name")}, plan ${q.get("plan")}`;</script></body></html>"""


class _Site(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_: Any) -> None:
        return None

    def do_GET(self) -> None:
        body = THANKS if self.path.startswith("/thanks.html") else FORM
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def fixture_site() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Site)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class Waiting:
    """The demo model with a fixed wait before each answer, like a remote model's time to first token."""

    def __init__(self, seconds: float) -> None:
        from notebook_agent import get_model

        self.inner = get_model("demo")
        self.seconds = seconds
        self.provider, self.id = self.inner.provider, self.inner.id

    async def stream(self, context: Any, options: Any) -> AsyncIterator[Any]:
        await asyncio.sleep(self.seconds)
        async for event in self.inner.stream(context, options):
            yield event


def signup_script() -> list[Any]:
    return [
        step("input_text", lambda c: {"index": index_of(c, r"name=name"), "text": "Ada"}),
        step("select_dropdown_option", lambda c: {"index": index_of(c, r"<select name=plan"), "text": "Pro"}),
        step("click_element_by_index", lambda c: {"index": index_of(c, r"Create account")}),
        step("done", {"text": "Signed up", "success": True, "data": {"message": "Thanks Ada, plan Pro"}}),
    ]


def line(label: str, rows: int, ok: int, seconds: float, base: float | None, extra: str = "") -> float:
    rate = 60 * rows / seconds
    ratio = f"{rate / base:6.2f}×" if base else "    1× "
    print(f"{label:44} {rows:5} {ok:5} {seconds:8.1f} {rate:9.1f} {ratio:>8}{extra}", flush=True)
    return rate


def header(title: str) -> None:
    print(f"\n{title}\n{'setting':44} {'rows':>5} {'ok':>5} {'seconds':>8} {'rows/min':>9} {'vs loop':>8}")


async def timed(work: Callable[[], Awaitable[Any]]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = await work()
    return out, time.perf_counter() - t0


# -- the hand-written loops: the same steps on the same pages, the same values read ------------------------------
async def loop_demo(
    browser: BrowserSession, shop: str, rows: list[dict[str, str]], concurrency: int, fresh: bool = False
) -> int:
    async def one(page: Any, product: str) -> bool:
        await page.goto(shop)
        await page.goto(f"{shop.rstrip('/')}/search.html?q={quote_plus(product)}")
        name = await page.get_by_role("link", name=product, exact=True).first.inner_text()
        price = await page.locator("text=/^\\$[0-9.,]+$/").first.inner_text()
        return name == product and float(price.strip("$").replace(",", "")) > 0

    return await _side_by_side(browser, rows, concurrency, lambda page, row: one(page, row["product"]), fresh)


async def loop_form(
    browser: BrowserSession, site: str, rows: list[dict[str, str]], concurrency: int, fresh: bool = False
) -> int:
    async def one(page: Any, row: dict[str, str]) -> bool:
        await page.goto(f"{site}/form.html")
        await page.fill("input[name=name]", row["name"])
        await page.select_option("select[name=plan]", row["plan"])
        await page.click("text=Create account")
        await page.wait_for_url("**/thanks.html*")
        return await page.inner_text("#msg") == f"Thanks {row['name']}, plan {row['plan']}"

    return await _side_by_side(browser, rows, concurrency, one, fresh)


async def _side_by_side(
    browser: BrowserSession, rows: list[Any], concurrency: int, one: Any, fresh: bool = False
) -> int:
    """``one(page, row)`` over ``rows`` in ``concurrency`` contexts, each reusing one page, or (``fresh``) in a
    new context for every row, as a loop must whose rows may not see each other's cookies and storage (the
    isolation a recipe map's pooled, cleaned contexts give each row)."""
    if fresh:
        return sum(await asyncio.gather(*(_fresh_rows(browser, rows[k::concurrency], one) for k in range(concurrency))))
    ok = 0
    queue = list(enumerate(rows))

    async def worker() -> None:
        nonlocal ok
        fork = await browser.fork()
        page = await fork.ensure_page()
        try:
            while queue:
                _, row = queue.pop(0)
                good = bool(await one(page, row))
                ok += good
        finally:
            await fork.close()

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return ok


async def _fresh_rows(browser: BrowserSession, rows: list[Any], one: Any) -> int:
    ok = 0
    for row in rows:
        fork = await browser.fork()
        try:
            ok += bool(await one(await fork.ensure_page(), row))
        finally:
            await fork.close()
    return ok


# -- the settings ------------------------------------------------------------------------------------------------
async def record_demo(browser: BrowserSession, shop: str) -> Recipe:
    agent = PageAgent(model="demo", browser=browser, start_url=shop, output=Price, screenshots=False)
    run = await agent.run(PRICE_TASK.format(product=PRODUCTS[0]))
    assert run.success, run.text
    return Recipe.from_run(run, template=PRICE_TASK)


async def record_form(browser: BrowserSession, site: str) -> Recipe:
    agent = PageAgent(
        model=ScriptedModel(signup_script()), browser=browser, start_url=f"{site}/form.html", output=Signup
    )
    run = await agent.run("Sign up as Ada on the Pro plan")
    assert run.success, run.text
    return Recipe.from_run(run, params={"name": "Ada", "plan": "Pro"})


def ok_rows(result: Any) -> int:
    return len(result.succeeded)


Work = Callable[[list[Any]], Awaitable[tuple[int, int]]]
"""One setting run over some rows: (rows that succeeded, tokens spent)."""


Figures = dict[str, tuple[int, int, int, float]]
"""Per setting: rows, rows that succeeded, tokens, seconds."""


async def interleaved(settings: dict[str, Work], rows: list[Any], rounds: int) -> Figures:
    """Every setting over every row, in ``rounds`` rounds of a share of the rows each, the settings one after
    another within a round: on a shared machine whose load drifts, each setting meets the same drift, so their
    ratios hold where one long run of each would not. Returns (rows, ok, tokens, seconds) per setting."""
    size = max(1, -(-len(rows) // rounds))
    totals = {name: [0, 0, 0, 0.0] for name in settings}
    for start in range(0, len(rows), size):
        chunk = rows[start : start + size]
        for name, work in settings.items():
            (ok, tokens), seconds = await timed(partial(work, chunk))
            total = totals[name]
            total[0] += len(chunk)
            total[1] += ok
            total[2] += tokens
            total[3] += seconds
    return {name: (int(t[0]), int(t[1]), int(t[2]), float(t[3])) for name, t in totals.items()}


def recipe_work(recipe: Recipe, agent: PageAgent, **options: Any) -> Work:
    async def work(rows: list[Any]) -> tuple[int, int]:
        result = await recipe.map(rows, agent, heal=False, **options)
        return ok_rows(result), sum(r.facts.tokens for r in result.rows if r.facts is not None)

    return work


def loop_work(loop: Any, concurrency: int, fresh: bool = False) -> Work:
    async def work(rows: list[Any]) -> tuple[int, int]:
        return await loop(rows, concurrency, fresh), 0

    return work


def table(title: str, figures: Figures, labels: dict[str, str]) -> dict[str, float]:
    header(title)
    base = None
    rates = {}
    for name, (rows, ok, tokens, seconds) in figures.items():
        extra = f"  tokens {tokens}" if name.startswith("recipe") else ""
        rates[name] = line(labels[name], rows, ok, seconds, base, extra)
        base = base or rates[name]
    return rates


LABELS = {
    "loop1": "Playwright loop, sequential",
    "loop4": "Playwright loop, 4 contexts",
    "loop1_fresh": "Playwright loop, new context per row",
    "recipe1": "recipe map, concurrency 1",
    "recipe4": "recipe map, concurrency 4",
    "recipe8": "recipe map, concurrency 8",
    "dask": "recipe map, LocalCluster 2 workers × 2",
    "agent_map": "agent.map, offline demo model, concurrency 4",
    "agent_map_slow": "agent.map, demo model + latency/answer, c=4",
}


async def site_settings(
    browser: BrowserSession, recipe: Recipe, rows: list[Any], loop: Any, answer_type: Any, executor: Any
) -> dict[str, Work]:
    agent = PageAgent(model=ScriptedModel([]), browser=browser, output=answer_type, screenshots=False)
    await recipe.map(rows[:4], agent, concurrency=4)  # warm: the pool's contexts, the page cache
    settings = {
        "loop1": loop_work(loop, 1),
        "loop4": loop_work(loop, 4),
        "loop1_fresh": loop_work(loop, 1, fresh=True),
        "recipe1": recipe_work(recipe, agent, concurrency=1),
        "recipe4": recipe_work(recipe, agent, concurrency=4),
        "recipe8": recipe_work(recipe, agent, concurrency=8),
    }
    if executor is not None:
        shipped = PageAgent(model="demo", output=answer_type, screenshots=False)
        await recipe.map(rows[:4], shipped, executor=executor, concurrency=4, heal=False)  # each worker's browser
        settings["dask"] = recipe_work(recipe, shipped, executor=executor, concurrency=4)
    return settings


@contextmanager
def local_cluster(skip: bool) -> Iterator[Any]:
    """A 2-worker Dask ``LocalCluster``'s executor (None with ``--no-dask``); its start is reported apart."""
    if skip:
        yield None
        return
    import distributed

    from notebook_agent.agent.batch.map_rows import close_worker_browser

    t0 = time.perf_counter()
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=2,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        env={"PYTHONPATH": os.pathsep.join(p for p in (os.getcwd(), os.environ.get("PYTHONPATH")) if p)},
    )
    client = distributed.Client(cluster)
    print(f"(cluster start: {time.perf_counter() - t0:.1f} s; each worker's first browser is paid by a warm-up)")
    try:
        yield client.get_executor()
    finally:
        client.run(close_worker_browser)
        client.close()
        cluster.close()


def resident_mb(pid: int) -> tuple[float, float]:
    """(this process, its browser processes) resident memory in MB."""
    import psutil

    me = psutil.Process(pid)
    children = 0.0
    for child in me.children(recursive=True):
        try:
            children += child.memory_info().rss
        except psutil.Error:
            continue
    return me.memory_info().rss / 2**20, children / 2**20


def _price(output: Any) -> float | None:
    value = output.get("price") if isinstance(output, dict) else getattr(output, "price", None)
    return float(value) if isinstance(value, (int, float)) else None


async def versus_model(browser: BrowserSession, shop: str, recipe: Recipe, name: str, total: int) -> None:
    """The recipe against ``agent.map`` with a real model (``--versus-model local:PATH.gguf``) on the same rows, at
    concurrency 1 each (one local server answers one request at a time), taking turns row by row so both meet the
    same load: rows/min, rows right, and the model's tokens."""
    from notebook_agent.llm import get_model

    model = get_model(name)
    agent = PageAgent(model=model, browser=browser, start_url=shop, output=Price, screenshots=False, max_steps=8)
    replayer = PageAgent(model=ScriptedModel([]), browser=browser, output=Price, screenshots=False)
    rows = [{"product": PRODUCTS[i % len(PRODUCTS)]} for i in range(total)]
    await recipe.map(rows[:1], replayer, concurrency=1, heal=False)  # warm
    spent = {"recipe": [0, 0, 0.0], "model": [0, 0, 0.0]}  # ok, tokens, seconds
    for row in rows:
        truth = None  # the price the recipe read off the page (exactly, in the isolated world)
        for kind in ("recipe", "model"):
            if kind == "recipe":
                result, seconds = await timed(partial(recipe.map, [row], replayer, concurrency=1, heal=False))
            else:
                result, seconds = await timed(partial(agent.map, PRICE_TASK, [row], concurrency=1))
            facts = result.rows[0].facts
            price = _price(facts.output) if facts is not None and facts.success else None
            truth = price if kind == "recipe" else truth
            right = price is not None and price == truth
            spent[kind][0] += int(right)
            spent[kind][1] += facts.tokens if facts is not None else 0
            spent[kind][2] += seconds
            print(f"  {kind:6} {row['product']:30} {price!s:>8} {seconds:6.1f} s", flush=True)
    print(f"\nrecipe against agent.map with {name} ({total} rows, concurrency 1 each, row by row in turn)")
    for kind, (ok, tokens, seconds) in spent.items():
        rate = 60 * total / seconds
        print(f"  {kind:6} {rate:8.2f} rows/min  {ok}/{total} right  {tokens:,} tokens  {seconds:.0f} s")
    print(f"  recipe / agent.map: {spent['model'][2] / spent['recipe'][2]:.0f}× the rows per minute")


async def kept_per_row(browser: BrowserSession, recipe: Recipe, rows: int = 60) -> None:
    """What a finished map's result holds per row (tracemalloc, the result alive), keeping every row's run against
    keeping only the exceptions' (the recipe map's default), in the same run."""
    import gc
    import tracemalloc

    agent = PageAgent(model=ScriptedModel([]), browser=browser, output=Price, screenshots=False)
    table = [{"product": PRODUCTS[i % len(PRODUCTS)]} for i in range(rows)]
    print(f"\nwhat a finished map keeps per row ({rows} rows of the demo recipe, the result alive; tracemalloc)")
    for keep in ("all", "exceptions"):
        await recipe.map(table[:4], agent, concurrency=1, heal=False, keep_runs=keep)  # warm: caches filled once
        gc.collect()
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        result = await recipe.map(table, agent, concurrency=1, heal=False, keep_runs=keep)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        size = len(pickle.dumps(result.records()))
        print(
            f"  keep_runs={keep!r:<13} {kept / rows / 1024:6.1f} KB per row kept "
            f"({len(result.succeeded)}/{rows} rows ok; the table itself pickles to {size / rows / 1024:.2f} KB per row)"
        )
        del result


async def memory(browser: BrowserSession, recipe: Recipe, total: int, concurrency: int) -> None:
    """One recipe map of ``total`` rows, as a user runs it (one call, the result holding every row), with this
    process's and the browser's resident memory sampled as rows finish: flat means no row leaves anything behind
    but its own (small) result."""
    print(f"\nmemory over one map of {total} rows of the demo recipe (concurrency {concurrency}; MB resident)")
    print(f"{'rows done':>10} {'python':>8} {'browser':>8} {'rows/min':>9}")
    agent = PageAgent(model=ScriptedModel([]), browser=browser, output=Price, screenshots=False)
    every = max(total // 10, 1)
    samples: list[tuple[float, float]] = []
    failed = 0

    def sample(event: Any) -> None:
        nonlocal failed
        if not isinstance(event, MapProgress) or not event.ended:
            return
        if not event.record.success:  # a row that failed (a timeout on a loaded machine) is said, and counted
            failed += 1
            said = event.record.facts.error if event.record.facts is not None else event.record.error
            print(f"  row {event.row} failed: {' '.join(str(said).split())[:200]}", flush=True)
        if event.done % every == 0 or event.done == total:
            py, br = resident_mb(os.getpid())
            samples.append((py, br))
            print(f"{event.done:>10} {py:8.0f} {br:8.0f} {event.rows_per_minute:9.1f}", flush=True)

    rows = [{"product": PRODUCTS[i % len(PRODUCTS)]} for i in range(total)]
    result = await recipe.map(rows, agent, concurrency=concurrency, heal=False, on_event=sample)
    first, last = samples[0], samples[-1]
    grew = f"python {last[0] - first[0]:+.0f} MB, browser {last[1] - first[1]:+.0f} MB"
    print(f"growth from the first sample to the last: {grew}; {failed} of {len(result.rows)} rows failed")


async def main(args: argparse.Namespace) -> None:
    if args.api_only:
        await api_sections(args.api_rows, args.rounds, args.api_memory_rows)
        return
    await demo_and_form(args)
    if args.api_rows:
        await api_sections(args.api_rows, args.rounds, args.api_memory_rows)


async def demo_and_form(args: argparse.Namespace) -> None:
    demo_rows = [{"product": PRODUCTS[i % len(PRODUCTS)]} for i in range(args.rows)]
    form_rows = [{"name": NAMES[i % len(NAMES)], "plan": PLANS[i % len(PLANS)]} for i in range(args.rows)]
    with serve_demo() as shop, fixture_site() as site, local_cluster(args.no_dask) as executor:
        async with BrowserSession() as browser:
            demo = await record_demo(browser, shop.url)
            form = await record_form(browser, site)
            print(f"demo recipe: {demo!r}\nform recipe: {form!r}")
            if args.versus_model:
                await versus_model(browser, shop.url, demo, args.versus_model, args.versus_rows)
                return
            if args.memory_only:
                await kept_per_row(browser, demo)
                await memory(browser, demo, args.memory_rows, args.memory_concurrency)
                return
            settings = await site_settings(
                browser, demo, demo_rows, lambda rows, c, f: loop_demo(browser, shop.url, rows, c, f), Price, executor
            )

            async def agent_map(model: Any, rows: list[Any]) -> tuple[int, int]:
                agent = PageAgent(model=model, browser=browser, start_url=shop.url, output=Price, screenshots=False)
                result = await agent.map(PRICE_TASK, rows, concurrency=4)
                return ok_rows(result), sum(r.facts.tokens for r in result.rows if r.facts is not None)

            settings["agent_map"] = lambda rows: agent_map("demo", rows)
            if args.latency:
                settings["agent_map_slow"] = lambda rows: agent_map(Waiting(args.latency), rows)
            labels = {**LABELS, "agent_map_slow": f"agent.map, demo model + {args.latency:g} s/answer, c=4"}
            figures = await interleaved(settings, demo_rows, args.rounds)
            rates = table("demo shop (price of {product})", figures, labels)
            best = max(rates["recipe1"], rates["recipe4"], rates["recipe8"])
            slow = (
                f", {best / rates['agent_map_slow']:.1f}× (model answering in {args.latency:g} s)"
                if args.latency
                else ""
            )
            print(
                f"recipe (c=1) / Playwright loop (sequential): {rates['recipe1'] / rates['loop1']:.2f}×; "
                f"/ loop with a new context per row: {rates['recipe1'] / rates['loop1_fresh']:.2f}×; "
                f"recipe (c=4) / loop (4 contexts): {rates['recipe4'] / rates['loop4']:.2f}×; "
                f"best recipe / agent.map: {best / rates['agent_map']:.1f}× (offline model){slow}"
            )
            settings = await site_settings(
                browser, form, form_rows, lambda rows, c, f: loop_form(browser, site, rows, c, f), Signup, executor
            )
            form_rates = table(
                "fixture site (sign-up form: typed name, chosen plan)",
                await interleaved(settings, form_rows, args.rounds),
                LABELS,
            )
            print(
                f"recipe (c=1) / Playwright loop (sequential): {form_rates['recipe1'] / form_rates['loop1']:.2f}×; "
                f"/ loop with a new context per row: {form_rates['recipe1'] / form_rates['loop1_fresh']:.2f}×; "
                f"recipe (c=4) / loop (4 contexts): {form_rates['recipe4'] / form_rates['loop4']:.2f}×"
            )
            if args.memory_rows:
                await kept_per_row(browser, demo)
                await memory(browser, demo, args.memory_rows, args.memory_concurrency)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=48, help="rows per setting (default 48)")
    parser.add_argument("--memory-concurrency", type=int, default=4, help="rows at a time in the memory run")
    parser.add_argument("--rounds", type=int, default=4, help="rounds the settings take turns in (default 4)")
    parser.add_argument("--memory-rows", type=int, default=2000, help="rows of the memory run (0: skip)")
    parser.add_argument(
        "--latency", type=float, default=1.0, help="seconds before each answer of the slow model (0: skip)"
    )
    parser.add_argument("--no-dask", action="store_true", help="skip the LocalCluster settings")
    parser.add_argument("--memory-only", action="store_true", help="only the memory run (--memory-rows rows)")
    parser.add_argument("--versus-model", default="", help="only: the recipe against agent.map with this model")
    parser.add_argument("--versus-rows", type=int, default=4, help="rows of the --versus-model comparison")
    parser.add_argument("--api-rows", type=int, default=200, help="rows per setting on the API sites (0: skip)")
    parser.add_argument("--api-memory-rows", type=int, default=10_000, help="rows of the by-request memory run")
    parser.add_argument("--api-only", action="store_true", help="only the API-backed sites (learned calls)")
    asyncio.run(main(parser.parse_args()))
