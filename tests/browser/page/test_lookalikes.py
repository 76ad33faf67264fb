"""What tells elements apart on real pages when their text does not: icons named by what the page calls their
picture, look-alikes numbered (``twin``), long field values shown with their end, a multiple select keeping every
option chosen. (Each came from a MiniWoB++ task a perfect model could not finish: benchmarks/miniwob.py.)"""

from __future__ import annotations

import re
from typing import Any

from notebook_agent.browser import BrowserSession


def line_of(text: str, needle: str) -> str:
    found = [ln for ln in text.splitlines() if needle in ln]
    assert found, f"{needle!r} not in snapshot:\n{text}"
    return found[0]


async def test_icons_without_a_name_are_named_by_their_picture(load: Any) -> None:
    b: BrowserSession = await load("lookalikes.html")
    text = (await b.snapshot()).text
    icons = [ln for ln in text.splitlines() if "icon=" in ln]
    assert [re.sub(r"^.*\]", "", ln) for ln in icons] == [
        "<span icon=trash />",  # its class (its CSS image is delete.png: the class comes first)
        "<span icon=star />",  # "icon", "clicked": framework and state words are not names
        "<button type=button icon=Settings />",  # an SVG's <title>
        "<button type=button icon=download />",  # the symbol an SVG uses
        "<a icon=left arrow />",  # an image's file name
    ]
    assert "<span />" in text  # hashed class and file names name nothing
    assert "<span title=Delete forever />" in text  # named already: no icon
    assert "icon=" not in line_of(text, ">Odd />")
    assert "<div />\n\t[" in text  # a bar of named buttons is not an icon (its class says "email send")


async def test_a_css_image_names_an_icon_without_a_class_word(load: Any) -> None:
    b: BrowserSession = await load("lookalikes.html")
    await b.page.evaluate("document.querySelector('.trash').className = 'x1'")
    await b.page.add_style_tag(content=".x1 { content: url(img/delete.png); }")
    assert "<span icon=delete />" in (await b.snapshot()).text


async def test_look_alikes_are_numbered_in_page_order(load: Any) -> None:
    b: BrowserSession = await load("lookalikes.html")
    snap = await b.snapshot()
    odd = [e for e in snap.elements.values() if e.text == "Odd"]
    even = [e for e in snap.elements.values() if e.text == "Even"]
    assert [e.twin for e in odd] == [0, 1] and [e.twin for e in even] == [0, 1]
    trash = [e for e in snap.elements.values() if e.attributes.get("icon") == "trash"]
    assert [e.twin for e in trash] == [0]  # the titled one does not look the same
    await b.page.click("text=Odd >> nth=0")  # state changes nothing: the look is what the element is
    again = await b.snapshot()
    assert [e.twin for e in again.elements.values() if e.text == "Odd"] == [0, 1]


async def test_a_long_value_shows_its_start_and_its_end(load: Any) -> None:
    b: BrowserSession = await load("lookalikes.html")
    long_line = "start " + "x" * 300 + " the end"
    await b.page.fill("#line", long_line)
    text = (await b.snapshot()).text
    story = line_of(text, "<textarea")
    value = re.search(r"value=(.*) scrollable=", story)
    assert value is not None and value.group(1).startswith("Alpha word0") and value.group(1).endswith("word399 Omega.")
    assert " … " in value.group(1) and len(value.group(1)) <= 2000
    field = line_of(text, "id=line")
    assert "value=start xxx" in field and "x … " in field and field.endswith("x the end id=line />")
    await b.page.fill("#story", "A short text, shown whole.")
    assert "<textarea value=A short text, shown whole. id=story />" in (await b.snapshot()).text


async def test_a_multiple_select_keeps_every_option_chosen(load: Any) -> None:
    b: BrowserSession = await load("lookalikes.html")
    snap = await b.snapshot()
    names = next(i for i, e in snap.elements.items() if e.attributes.get("id") == "names")
    assert "selected=" not in snap.elements[names].line  # nothing chosen: nothing to say
    first = await b.act({"select_dropdown_option": {"index": names, "text": "Grace"}})
    second = await b.act({"select_dropdown_option": {"index": names, "text": "Edsger"}})
    assert "Its selected options are now 'Grace', 'Edsger'" in second.text_content, second.text_content
    assert "Its selected options are now 'Grace'" in first.text_content
    chosen = await b.page.eval_on_selector("#names", "s => Array.from(s.selectedOptions, o => o.text)")
    assert chosen == ["Grace", "Edsger"]
    assert "selected=Grace|Edsger" in (await b.snapshot()).text
    again = await b.act({"select_dropdown_option": {"index": names, "text": "Grace"}})
    assert "already selected" in again.text_content and "'Grace', 'Edsger'" in again.text_content
    assert await b.page.eval_on_selector("#names", "s => s.selectedOptions.length") == 2
