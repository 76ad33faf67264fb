"""Values a run must hide are painted over in every screenshot, in every frame, or no screenshot is taken
(issue 20, item 1). Pictures are decoded in the browser itself and read pixel by pixel: the fixture pages
paint the echoed secret on green, so a masked one reads magenta (the mask's colour, Playwright's too) and an
unmasked one green."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from playwright.async_api import Frame

from notebook_agent.agent.runs.events import ScreenshotTaken
from notebook_agent.agent.runs.result import PageStep
from notebook_agent.agent.step.screenshots import WITHHELD, StepScreenshots
from notebook_agent.browser import BrowserSession
from notebook_agent.browser.page import mask as mask_module
from notebook_agent.browser.page.mask import ScreenshotWithheld
from notebook_agent.browser.session.page_reads import target_crop
from tests.browser.conftest import Load

pytestmark = pytest.mark.asyncio(loop_scope="session")

SECRET = "S3cr3t-Value-42"


async def pixels(browser: BrowserSession, picture: bytes, points: list[tuple[float, float]]) -> list[list[int]]:
    """The RGB of ``picture`` at each point, decoded by the browser (no imaging library needed)."""
    page = await browser.browser.new_page()  # a context of its own: the session's tabs stay as they are
    try:
        kind = "jpeg" if picture[:2] == b"\xff\xd8" else "png"
        return await page.evaluate(
            """async ([src, points]) => {
                const img = new Image(); img.src = src; await img.decode();
                const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
                const g = c.getContext('2d'); g.drawImage(img, 0, 0);
                return points.map(([x, y]) => Array.from(g.getImageData(x, y, 1, 1).data.slice(0, 3)));
            }""",
            [f"data:image/{kind};base64," + base64.b64encode(picture).decode(), [[int(x), int(y)] for x, y in points]],
        )
    finally:
        await page.close()


def green(rgb: list[int]) -> bool:
    r, g, b = rgb
    return r < 80 and g > 200 and b < 80


def masked(rgb: list[int]) -> bool:
    r, g, b = rgb
    return r > 200 and g < 80 and b > 200


async def centres(browser: BrowserSession) -> dict[str, tuple[float, float]]:
    page = browser.page
    out = {}
    for name, locator in {
        "echo": page.locator("#echo"),
        "control": page.locator("#control"),
        "field": page.locator("#shown"),
        "split": page.locator("#split"),
        "frame": page.frame_locator("#inner").locator("#echo"),
    }.items():
        box = await locator.bounding_box()
        assert box is not None, name
        out[name] = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    return out


async def test_hidden_values_are_painted_over_in_text_fields_and_frames(browser: BrowserSession, load: Load) -> None:
    await load("secret_echo.html")
    where = await centres(browser)
    points = list(where.values())
    # without hidden values the page shows the secret everywhere (the fixture works)
    plain = await pixels(browser, await browser.screenshot(), points)
    assert all(green(p) for p in plain), plain
    with browser.hiding([SECRET]):
        assert browser.hidden_values == (SECRET,)
        for shot in (
            await browser.screenshot(),
            await browser.screenshot(format="jpeg"),
            await browser.screenshot(highlight=True),
        ):
            seen = dict(zip(where, await pixels(browser, shot, points), strict=True))
            assert green(seen.pop("control")), "text without the value stays visible"
            assert all(masked(p) for p in seen.values()), seen
        # the mask is gone from the page again afterwards
        assert await browser.page.locator("notebook-agent-mask").count() == 0
    assert browser.hidden_values == ()
    after = await pixels(browser, await browser.screenshot(), points)
    assert all(green(p) for p in after)


async def test_values_are_read_from_a_function_before_each_picture(browser: BrowserSession, load: Load) -> None:
    await load("secret_echo.html")
    where = await centres(browser)
    typed: set[str] = set()
    with browser.hiding(lambda: typed):
        assert all(green(p) for p in await pixels(browser, await browser.screenshot(), [where["echo"]]))
        typed.add(SECRET)  # e.g. text the run typed into a sensitive field
        assert all(masked(p) for p in await pixels(browser, await browser.screenshot(), [where["echo"]]))


async def test_approval_crop_is_masked(browser: BrowserSession, load: Load) -> None:
    await load("secret_echo.html")
    snap = await browser.snapshot()
    index = next(i for i, e in snap.elements.items() if e.attributes.get("id") == "shown")
    with browser.hiding([SECRET]):
        crop = await target_crop(browser, index, padding=10)
    assert crop is not None
    # the field is inside the crop, 10 px (+3 px outline) from its corner
    assert all(masked(p) for p in await pixels(browser, crop, [(40, 20), (200, 20)]))


async def test_a_page_that_removes_the_mask_gets_no_picture(browser: BrowserSession, load: Load) -> None:
    await load("secret_unmask.html")
    with browser.hiding([SECRET]):
        with pytest.raises(ScreenshotWithheld, match="removed, hidden or replaced"):
            await browser.screenshot()
        told: list[ScreenshotTaken] = []
        shots = StepScreenshots(told.append)
        step = PageStep(index=1)
        shots.start(browser, step)
        assert await shots.collect() is None
        assert step.screenshot is None and "step 1" in shots.withheld[0]
        # the view is told (and shows it on the step's card), without the details (a frame's URL)
        assert [(e.step.index, e.data, e.withheld) for e in told] == [(1, b"", WITHHELD)]
    assert await browser.screenshot()  # nothing to hide: the page's picture as usual


async def test_a_frame_the_page_script_cannot_search_means_no_picture(
    browser: BrowserSession,
    load: Load,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    await load("secret_echo.html")
    real = mask_module.call_page_api

    async def failing(frame: Frame, op: dict[str, Any], *, timeout: float = 10.0) -> Any:  # as call_page_api
        if op["op"] == "hide" and frame.parent_frame is not None:
            raise TimeoutError("the frame's page script did not answer")
        return await real(frame, op, timeout=timeout)

    monkeypatch.setattr(mask_module, "call_page_api", failing)
    with browser.hiding([SECRET]):
        with pytest.raises(ScreenshotWithheld, match="could not be searched"):
            await browser.screenshot()
        snap = await browser.snapshot()
        index = next(i for i, e in snap.elements.items() if e.attributes.get("id") == "shown")
        assert await target_crop(browser, index) is None
    # the main frame's mask was taken down again
    assert await browser.page.locator("notebook-agent-mask").count() == 0


async def test_a_frame_that_does_not_render_its_mask_means_no_picture(browser: BrowserSession, load: Load) -> None:
    """A frame of another site renders in its own process: the picture shows its last rendered frame, so the
    capture waits until the frame has rendered its boxes, and takes no picture when it does not."""
    await load("secret_echo.html")
    inner = next(f for f in browser.page.frames if f.parent_frame is not None)
    await inner.evaluate("() => { window.requestAnimationFrame = () => 0; }")  # this frame never says it rendered
    with browser.hiding([SECRET]), pytest.raises(ScreenshotWithheld, match="did not render the mask"):
        await browser.screenshot()
    assert await inner.locator("notebook-agent-mask").count() == 0  # taken down again
    assert await browser.page.locator("notebook-agent-mask").count() == 0
