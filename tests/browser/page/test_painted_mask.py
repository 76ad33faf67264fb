"""A hidden value is painted over where the page paints it, not only where its DOM holds it: text drawn on a
canvas, CSS generated content, a closed shadow root, ``text-transform: uppercase`` of another case, a spaced or
halved copy, an image the page made from a canvas, and the same inside a frame of another site.

Each picture is taken through the run's path (the step's picture, the approval crop, the view's PNG) and read
back: every probe's box reads magenta (the mask's colour) all over, and where tesseract is installed, OCR of the
saved picture does not find the value, though it does in the picture taken without hiding it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from notebook_agent.agent.runs.result import PageStep
from notebook_agent.agent.step.screenshots import StepScreenshots
from notebook_agent.browser import BrowserSession
from notebook_agent.browser.page.mask import ScreenshotWithheld
from tests.browser.conftest import Load
from tests.browser.page.test_screenshot_mask import masked, pixels

pytestmark = pytest.mark.asyncio(loop_scope="session")

SECRET = "HarborLights"
PROBES = ("after", "upper", "spaced", "halves", "closed", "canvas", "made")
INNER = ("after", "canvas")


def grid(box: dict[str, float]) -> list[tuple[float, float]]:
    """Points over the whole of ``box``, 3 px inside its edges."""
    xs = [box["x"] + 3 + (box["width"] - 6) * k / 8 for k in range(9)]
    ys = [box["y"] + 3 + (box["height"] - 6) * k / 2 for k in range(3)]
    return [(x, y) for x in xs for y in ys]


async def probe_boxes(browser: BrowserSession) -> dict[str, dict[str, float]]:
    page = browser.page
    boxes: dict[str, dict[str, float]] = {}
    for name in PROBES:
        box = await page.locator(f"#{name}").bounding_box()
        assert box is not None and box["width"] > 20, name
        boxes[name] = {"x": box["x"], "y": box["y"], "width": box["width"], "height": box["height"]}
    # a frame of another process: its element's box in the frame, moved to where the frame's content box starts
    # (Playwright's bounding_box there leaves out the frame's border and padding)
    x, y = await page.evaluate(
        """() => { const e = document.getElementById('inner'), r = e.getBoundingClientRect(), s = getComputedStyle(e);
                   return [r.left + parseFloat(s.borderLeftWidth) + parseFloat(s.paddingLeft),
                           r.top + parseFloat(s.borderTopWidth) + parseFloat(s.paddingTop)]; }"""
    )
    inner = next(f for f in page.frames if f.parent_frame is not None)
    for name in INNER:
        r = await inner.evaluate(
            "(id) => { const r = document.getElementById(id).getBoundingClientRect();"
            " return [r.left, r.top, r.width, r.height]; }",
            name,
        )
        boxes[f"inner {name}"] = {"x": x + r[0], "y": y + r[1], "width": r[2], "height": min(r[3], 140 - r[1])}
    return boxes


def squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text.lower())


def ocr(picture: bytes, tmp: Path) -> str | None:
    """What tesseract reads in ``picture``, lower case without spaces (None without tesseract)."""
    if shutil.which("tesseract") is None:
        return None
    path = tmp / ("shot.jpg" if picture[:2] == b"\xff\xd8" else "shot.png")
    path.write_bytes(picture)
    out = subprocess.run(["tesseract", str(path), "stdout"], capture_output=True, text=True, check=True).stdout
    return squeezed(out)


async def test_the_value_is_painted_over_wherever_the_page_paints_it(
    browser: BrowserSession, load: Load, tmp_path: Path
) -> None:
    await load("secret_painted.html")
    await browser.page.frame_locator("#inner").locator("#canvas").wait_for()
    boxes = await probe_boxes(browser)
    plain = await browser.screenshot()
    read = ocr(plain, tmp_path)
    if read is not None:  # the fixture shows the value where OCR can read it
        assert squeezed(SECRET) in read, read
    with browser.hiding([SECRET]):
        shots = StepScreenshots(lambda _: None)
        step = PageStep(index=1)
        shots.start(browser, step)
        await shots.collect()
        assert step.screenshot is not None, shots.withheld
        pictures = {"step (jpeg)": step.screenshot, "view (png)": await browser.screenshot()}
    for kind, picture in pictures.items():
        shown = {}  # each probe some point of which is not painted over, with the first few such points
        for name, box in boxes.items():
            seen = await pixels(browser, picture, grid(box))
            wrong = [(at, p) for at, p in zip(grid(box), seen, strict=True) if not masked(p)]
            if wrong:
                shown[name] = wrong[:3]
        assert not shown, (kind, sorted(shown), shown)
        read = ocr(picture, tmp_path)
        assert read is None or squeezed(SECRET) not in read, (kind, read)
        assert read is None or ("harbor" not in read and "lights" not in read), (kind, read)
    assert await browser.page.locator("notebook-agent-mask").count() == 0


async def test_a_page_without_a_value_to_hide_is_not_read_twice(
    browser: BrowserSession, load: Load, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The painted layer is read only while a value is live: a picture with nothing to hide costs what it did."""
    await load("secret_painted.html")

    async def unread(*args: object) -> None:
        raise AssertionError("the painted layer was read with nothing to hide")

    from notebook_agent.browser.page import painted as painted_module

    monkeypatch.setattr(painted_module, "capture_layer", unread)
    assert await browser.screenshot()
    with browser.hiding(lambda: []):
        assert await browser.screenshot()


async def test_a_painted_layer_that_cannot_be_read_means_no_picture(
    browser: BrowserSession, load: Load, monkeypatch: pytest.MonkeyPatch
) -> None:
    await load("secret_painted.html")

    async def failing(*args: object) -> None:
        raise TimeoutError("DevTools did not answer")

    from notebook_agent.browser.page import painted as painted_module

    monkeypatch.setattr(painted_module, "capture_layer", failing)
    with browser.hiding([SECRET]), pytest.raises(ScreenshotWithheld, match="painted text could not be read"):
        await browser.screenshot()
    assert await browser.page.locator("notebook-agent-mask").count() == 0
