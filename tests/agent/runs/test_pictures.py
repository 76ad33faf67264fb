"""Thumbnails for saved notebooks and a GIF of a run, from real Chromium screenshots."""

from __future__ import annotations

import base64
import io
import re

import pytest
from PIL import Image
from PIL.GifImagePlugin import GifImageFile

from notebook_agent.agent import PageAgent
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.runs.pictures import THUMBNAIL_WIDTH, gif, thumbnail
from notebook_agent.browser import BrowserSession
from notebook_agent.llm.scripted import ScriptedModel
from notebook_agent.notebook.views.record import record_html
from tests.browser.conftest import Servers


async def test_a_thumbnail_is_small_and_sharp_enough(browser: BrowserSession, servers: Servers) -> None:
    await browser.navigate(servers.url("agent_form.html"))
    shot = await browser.screenshot(format="jpeg")
    small = thumbnail(shot)
    with Image.open(io.BytesIO(small)) as image:
        assert image.format == "JPEG" and image.width == THUMBNAIL_WIDTH
    assert len(small) < len(shot) / 2, (len(small), len(shot))
    assert thumbnail(small) == small  # already small: unchanged
    assert thumbnail(b"not a picture") == b"not a picture"  # a broken picture never loses the record


async def test_a_run_becomes_a_gif_and_a_record_of_thumbnails(browser: BrowserSession, servers: Servers) -> None:
    script = [
        agent_output("scroll", {"down": True}),
        agent_output("scroll", {"down": True}),
        agent_output("done", {"text": "ok", "success": True}),
    ]
    agent = PageAgent(model=ScriptedModel(script), browser=browser, start_url=servers.url("huge.html"))
    result = await agent.run("look around")
    shots = [s.screenshot for s in result.steps if s.screenshot]
    assert len(shots) == 3
    data = result.to_gif()
    with Image.open(io.BytesIO(data)) as image:
        # frames that look the same as the one before are merged (done leaves the page as it was)
        assert isinstance(image, GifImageFile)
        assert image.format == "GIF" and image.n_frames >= 2 and image.width <= 640
    html = record_html(result)
    embedded = [len(m) * 3 // 4 for m in re.findall(r"base64,([A-Za-z0-9+/=]+)", html)]
    assert len(embedded) == 3 and all(size < min(len(s) for s in shots) for size in embedded)


def test_no_pictures_no_gif() -> None:
    with pytest.raises(ValueError, match="No screenshots"):
        gif([b"junk"])


async def test_the_record_shows_each_page_large_enough_to_read(browser: BrowserSession, servers: Servers) -> None:
    """A 1280 px page shown 240 px wide (a fifth of its size) could not be read in a saved notebook: each step's
    picture is shown at least 480 px wide, from a picture at least 1.5 times as wide (sharp on a dense screen)."""
    script = [agent_output("done", {"text": "ok", "success": True})]
    agent = PageAgent(model=ScriptedModel(script), browser=browser, start_url=servers.url("agent_form.html"))
    result = await agent.run("look")
    pictures = re.findall(r'<img src="data:image/jpeg;base64,([A-Za-z0-9+/=]+)" width="(\d+)"', record_html(result))
    assert len(pictures) == 1
    data, shown_width = pictures[0]
    with Image.open(io.BytesIO(base64.b64decode(data))) as image:
        assert int(shown_width) >= 480 and image.width >= 1.5 * int(shown_width), (shown_width, image.width)
    print(f"\nbytes of one step's picture in the notebook (base64): {len(data):,}")
