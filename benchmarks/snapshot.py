"""Snapshot and screenshot speed and size on generated pages of growing size.

    .venv/bin/python benchmarks/snapshot.py [--runs 5] [--quick]

For each page: number of DOM elements, snapshot time in viewport mode and full-page mode (median of --runs,
after one warm-up that makes the page script's API in each frame's isolated world), screenshot time (plain
and with highlights), characters and o200k tokens of the text, and as the floor a plain
``document.querySelectorAll('*')`` walk on the same page (in-page time, and with the round trip).
Beside it, Playwright's own ``page.aria_snapshot(mode="ai")`` (the whole page, as YAML) in time and tokens,
and the ratios of ours to it. Figures, not asserts: the machine's load shows in them.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from notebook_agent.browser import BrowserSession
from notebook_agent.llm.tokens import count_tokens

FLOOR_JS = """() => { const t = performance.now(); let n = 0;
  for (const el of document.querySelectorAll('*')) { if (el.nodeType === 1) n++; }
  return [n, performance.now() - t]; }"""

COUNT_JS = """() => { let n = 0; const walk = (root) => { for (const el of root.querySelectorAll('*')) { n++;
  if (el.shadowRoot) walk(el.shadowRoot); } }; walk(document); return n; }"""


# -- page generators -----------------------------------------------------------------------------------------
def page(title: str, body: str, script: str = "") -> str:
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body>{body}<script>{script}</script></body></html>"
    )


def small_form() -> str:
    fields = "".join(f'<label>Field {i} <input name=f{i} placeholder="Field {i}"></label><br>' for i in range(8))
    return page(
        "Small form",
        "<h1>Sign in</h1><p>Welcome back. Please enter your details.</p>"
        f"<form>{fields}<select name=c><option>One</option><option>Two</option></select>"
        "<input type=checkbox name=r> Remember me <button>Sign in</button></form>"
        "<a href='#forgot'>Forgot password?</a>",
    )


def table(rows: int) -> str:
    script = f"""
      let h = '';
      for (let i = 1; i <= {rows}; i++)
        h += `<tr><td>${{i}}</td><td>Customer ${{i}}</td><td>$${{(i * 3.7).toFixed(2)}}</td>` +
             `<td><button>Open ${{i}}</button> <a href="#o${{i}}">Details</a></td></tr>`;
      document.querySelector('tbody').innerHTML = h;"""
    return page(
        f"Table {rows}",
        "<h1>Orders</h1><table><thead><tr><th>#</th><th>Customer</th><th>Total</th>"
        "<th>Action</th></tr></thead><tbody></tbody></table>",
        script,
    )


def forms(n: int) -> str:
    script = f"""
      let h = '';
      for (let i = 0; i < {n}; i++)
        h += `<div class=row><label for=i${{i}}>Item ${{i}}</label><input id=i${{i}} name=item${{i}} value=v${{i}}>` +
             `<select name=s${{i}}><option>A</option><option selected>B</option></select>` +
             `<input type=checkbox name=c${{i}}><textarea name=t${{i}}>note</textarea></div>`;
      document.querySelector('form').innerHTML = h;"""
    return page(f"Forms {n}", "<h1>Big form</h1><form></form>", script)


def shadow(hosts: int, depth: int) -> str:
    script = f"""
      customElements.define('x-card', class extends HTMLElement {{
        connectedCallback() {{
          const d = +this.getAttribute('depth');
          const r = this.attachShadow({{mode: 'open'}});
          r.innerHTML = `<p>Level ${{d}} text</p><button>Action ${{d}}</button><input placeholder="Level ${{d}}">` +
            (d > 1 ? `<x-card depth=${{d - 1}}></x-card>` : '<slot></slot>');
        }}
      }});
      let h = '';
      for (let i = 0; i < {hosts}; i++) h += `<x-card depth={depth}><a href="#l${{i}}">Light ${{i}}</a></x-card>`;
      document.body.insertAdjacentHTML('beforeend', h);"""
    return page(f"Shadow {hosts}x{depth}", "<h1>Nested shadow roots</h1>", script)


def iframes(n: int, other: str) -> str:
    frames = "".join(
        f'<iframe src="{other if i % 2 else ""}/frame_form.html" style="width:600px;height:200px"></iframe>'
        for i in range(n)
    )
    return page(f"Iframes {n}", f"<h1>Frames</h1>{frames}")


FRAME_FORM = page(
    "Frame form",
    "<p>Payment</p><input name=card placeholder='Card number' autocomplete=cc-number>"
    "<input name=name placeholder=Name><button>Pay</button>",
)


def pages(other: str, quick: bool) -> list[tuple[str, str]]:
    out = [
        ("small form", small_form()),
        ("table 15 rows", table(15)),
        ("table 150 rows", table(150)),
        ("table 1500 rows", table(1500)),
        ("forms 200", forms(200)),
        ("shadow 50x4", shadow(50, 4)),
        ("iframes 6 (half cross-origin)", iframes(6, other)),
    ]
    if not quick:
        out += [("table 3000 rows", table(3000)), ("forms 1000", forms(1000))]
    return out


# -- measuring -----------------------------------------------------------------------------------------------
async def median_ms(fn: Callable[[], Awaitable[Any]], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        await fn()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def serve(directory: Path) -> tuple[ThreadingHTTPServer, int]:
    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="skip the largest pages")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "frame_form.html").write_text(FRAME_FORM)
        main_server, port = serve(root)
        other_server, other_port = serve(root)
        other = f"http://localhost:{other_port}"
        specs = pages(other, args.quick)
        for i, (_, html) in enumerate(specs):
            (root / f"p{i}.html").write_text(html)

        header = (
            f"{'page':<30} {'elems':>6} {'floor':>6} {'floor+rt':>8} {'snap':>7} {'full':>7} "
            f"{'shot':>6} {'hilite':>7} {'v.chars':>7} {'v.tok':>6} {'f.chars':>8} {'f.tok':>7} {'idx':>5} "
            f"{'aria':>7} {'a.tok':>7} {'snap/aria':>9} {'v.tok/a':>7} {'f.tok/a':>7}"
        )
        print("times in ms (median of", args.runs, "runs); v = viewport mode, f = full page")
        print(header)
        print("-" * len(header))
        async with BrowserSession(viewport=(1280, 800)) as browser:
            page_ = browser.page
            for i, (name, _) in enumerate(specs):
                await page_.goto(f"http://127.0.0.1:{port}/p{i}.html", wait_until="load")
                await page_.wait_for_timeout(100)
                elements = await page_.evaluate(COUNT_JS)
                await browser.snapshot()  # warm-up: makes the page API in every frame
                floor_in_page = statistics.median([(await page_.evaluate(FLOOR_JS))[1] for _ in range(args.runs)])
                floor_rt = await median_ms(lambda: page_.evaluate(FLOOR_JS), args.runs)
                snap_ms = await median_ms(browser.snapshot, args.runs)
                full_ms = await median_ms(lambda: browser.snapshot(full_page=True), max(1, args.runs // 2 + 1))
                shot_ms = await median_ms(browser.screenshot, max(1, args.runs // 2 + 1))
                hl_ms = await median_ms(lambda: browser.screenshot(highlight=True), max(1, args.runs // 2 + 1))
                view = await browser.snapshot()
                full = await browser.snapshot(full_page=True)
                aria_ms = await median_ms(lambda: page_.aria_snapshot(mode="ai"), max(1, args.runs // 2 + 1))
                aria = await page_.aria_snapshot(mode="ai")
                v_tok, f_tok, a_tok = count_tokens(view.text), count_tokens(full.text), count_tokens(aria)
                print(
                    f"{name:<30} {elements:>6} {floor_in_page:>6.1f} {floor_rt:>8.1f} {snap_ms:>7.1f} "
                    f"{full_ms:>7.1f} {shot_ms:>6.1f} {hl_ms:>7.1f} {len(view.text):>7} "
                    f"{v_tok:>6} {len(full.text):>8} {f_tok:>7} {len(full.elements):>5} "
                    f"{aria_ms:>7.1f} {a_tok:>7} {snap_ms / aria_ms:>9.2f} {v_tok / a_tok:>7.2f} {f_tok / a_tok:>7.2f}",
                    flush=True,
                )
        main_server.shutdown()
        other_server.shutdown()
    print(
        "\nfloor: querySelectorAll('*') walk inside the page / including the Playwright round trip; snap: viewport "
        "snapshot; idx: "
        "indexed elements in full-page mode (capped at 40,000 characters by default); aria: Playwright's "
        "page.aria_snapshot(mode='ai') of the whole page, a.tok its tokens; snap/aria: viewport snapshot time over "
        "aria time; v.tok/a, f.tok/a: our viewport and full-page tokens over aria's."
    )


if __name__ == "__main__":
    asyncio.run(main())
