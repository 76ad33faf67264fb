"""What reading the painted layer (browser/page/painted.py) costs per picture: a screenshot with nothing to hide,
and one with a value to hide with the painted-layer check off (the DOM mask alone, as before) and on, measured in
the same run on a page that does not show the value, one that paints it in every way the check finds (generated
content, a closed shadow root, text-transform, a spaced copy, a canvas, a canvas-made image, a frame of another
site's process... here the same origin, so in-process) and the 3,000-row table.

A page with nothing to hide pays nothing: the check runs only while a value is live, so "none" is the same code
path whether the check exists or not. Figures, not asserts. Run:
.venv/bin/python benchmarks/mask_picture.py [--repeats N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from snapshot import serve, table  # benchmarks/snapshot.py: page generators, a local server

from notebook_agent.browser import BrowserSession
from notebook_agent.browser.page import mask as mask_module
from notebook_agent.browser.page.painted import Box

VALUES = ["HarborLights-42"]

PAINTED = """<!doctype html><html><head><title>Painted</title><style>
  body { margin: 0; font: 24px/1.5 sans-serif; } #after::after { content: attr(data-x); }
  #upper { text-transform: uppercase; }
</style></head><body>
<p>generated <span id=after data-x="HarborLights-42"></span></p>
<p>upper <span id=upper>harborlights-42</span></p>
<p>spaced H a r b o r L i g h t s - 4 2</p>
<p>halves <span>Harbor</span> <span>Lights-42</span></p>
<p>closed <span id=closed></span></p>
<canvas id=c width=400 height=40></canvas> <img id=made alt="">
<iframe src="frame.html" width=600 height=120></iframe>
<script>
  document.getElementById("closed").attachShadow({ mode: "closed" }).innerHTML = "<b>HarborLights-42</b>";
  const g = document.getElementById("c").getContext("2d");
  g.font = "24px sans-serif"; g.fillText("HarborLights-42", 4, 28);
  document.getElementById("made").src = document.getElementById("c").toDataURL();
</script></body></html>"""

FRAME = "<!doctype html><p>in a frame: <b>HARBORLIGHTS-42</b></p>"

ARTICLE = "<!doctype html><title>Article</title>" + "".join(
    f"<h2>Section {k}</h2><p>{'Lorem ipsum dolor sit amet, consectetur adipiscing elit. ' * 12}</p>" for k in range(40)
)


async def _no_painted_layer(page: object, values: Sequence[str]) -> list[Box]:
    return []


async def shot_ms(browser: BrowserSession, values: list[str] | None) -> float:
    t0 = time.perf_counter()
    if values is None:
        await browser.screenshot()
    else:
        with browser.hiding(values):
            await browser.screenshot()
    return (time.perf_counter() - t0) * 1000


async def measure(browser: BrowserSession, repeats: int) -> dict[str, float]:
    """Median ms of a screenshot with nothing to hide, with a value and the check off, and with it on."""
    times: dict[str, list[float]] = {"none": [], "off": [], "on": []}
    real = mask_module.painted_boxes
    for _ in range(repeats):
        times["none"].append(await shot_ms(browser, None))
        mask_module.painted_boxes = _no_painted_layer
        try:
            times["off"].append(await shot_ms(browser, VALUES))
        finally:
            mask_module.painted_boxes = real
        times["on"].append(await shot_ms(browser, VALUES))
    return {k: statistics.median(v) for k, v in times.items()}


async def main(repeats: int) -> None:
    pages = {"article, no value shown": ARTICLE, "value painted 7 ways": PAINTED, "3,000 rows": table(3000)}
    browser = BrowserSession(viewport=(1280, 800))
    await browser.start()
    print(f"screenshot (PNG, 1280x800) with nothing to hide, and hiding a value, median of {repeats} (ms):")
    print(f"  {'page':26} {'none':>7} {'off':>7} {'on':>7} {'on-off':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "frame.html").write_text(FRAME, encoding="utf-8")
        server, port = serve(root)
        try:
            for k, (name, html) in enumerate(pages.items()):
                (root / f"p{k}.html").write_text(html, encoding="utf-8")
                await browser.ensure_page()
                await browser.page.goto(f"http://127.0.0.1:{port}/p{k}.html")
                await measure(browser, 1)  # warm up
                got = await measure(browser, repeats)
                print(
                    f"  {name:26} {got['none']:7.1f} {got['off']:7.1f} {got['on']:7.1f} {got['on'] - got['off']:7.1f}"
                )
        finally:
            server.shutdown()
            await browser.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=10, help="screenshots of each kind (default 10)")
    asyncio.run(main(parser.parse_args().repeats))
