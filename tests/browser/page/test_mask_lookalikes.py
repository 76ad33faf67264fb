"""A value shown on the page in a spelling that reads the same is painted over in the screenshot too: split by
zero-width characters, wrapped in bidi controls, in full-width or mathematical letters and digits, in any case,
spaced out, in a text node, split over elements or inside an input's value. The page matches by the rule Python
sends it (core/text/lookalike.py), so what redaction finds the mask finds.

A generator writes the spellings; real Chromium shows them green on green, and the picture is read pixel by
pixel over the whole box of each spelling: masked reads magenta everywhere, a spelling that is not the value
stays green."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from notebook_agent.browser import BrowserSession
from notebook_agent.core.text.lookalike import CaseInsensitive, key
from tests.agent.safety.test_lookalike_secrets import INVISIBLE, SPACES, spelled
from tests.browser.conftest import Load, Servers
from tests.browser.page.test_screenshot_mask import green, masked, pixels

pytestmark = pytest.mark.asyncio(loop_scope="session")

SECRET = "S3cr3t-Value-42"
EMAIL = CaseInsensitive("Ada.Lovelace@Example.org")

PAGE = """<!doctype html><html><head><style>
  body { margin: 0; font: 24px/1.4 monospace; }
  /* isolated: a bidi control of the spelling reorders nothing outside its box */
  .m { background: #0f0; color: #0f0; unicode-bidi: isolate; display: inline-block; white-space: nowrap; }
  input { background: #0f0; color: #0f0; font: 24px monospace; width: 520px; border: 0; }
</style></head><body>
<p>token <span class=m id=text></span> end</p>
<p>split <span class=m id=split><b id=a></b><i id=b></i></span> end</p>
<p><input id=field type=text></p>
<p>mail <span class=m id=mail></span> end</p>
<p><input id=mailfield type=text></p>
<p>other <span class=m id=near></span> end</p>
<p>case <span class=m id=swapped></span> end</p>
</body></html>"""


def visible(text: str) -> str:
    """``text`` without trailing invisible characters and white space (they are not part of the match, and a
    font may draw a box for one)."""
    return text.rstrip("".join(INVISIBLE + SPACES))


def grid(box: dict[str, float]) -> list[tuple[float, float]]:
    """Points over the whole of ``box`` (1 px inside its edges)."""
    xs = [box["x"] + 1 + (box["width"] - 2) * k / 6 for k in range(7)]
    ys = [box["y"] + 1 + (box["height"] - 2) * k / 2 for k in range(3)]
    return [(x, y) for x in xs for y in ys]


# no shrinking: each example is a real page and picture, and the failing draws are printed whole as they are
async def text_box(browser: BrowserSession, name: str) -> dict[str, float]:
    """Where the text of element ``#name`` is drawn (a field's whole box): what the mask must cover."""
    box = await browser.page.evaluate(
        """(id) => {
            const el = document.getElementById(id);
            let r = el.getBoundingClientRect();
            if (el.localName !== 'input') { const range = document.createRange(); range.selectNodeContents(el);
                                            r = range.getBoundingClientRect(); }
            return {x: r.left, y: r.top, width: r.width, height: r.height};
        }""",
        name,
    )
    assert box["width"] > 4 and box["height"] > 4, (name, box)
    return box


@settings(
    max_examples=25,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.data())
async def test_every_spelling_of_a_hidden_value_is_painted_over(
    shared_browser: BrowserSession, servers: Servers, data: st.DataObject
) -> None:
    browser = shared_browser
    if not browser.page.url.startswith(servers.main):
        await browser.page.goto(servers.url("secret_echo.html"))
    await browser.page.set_content(PAGE)
    pw = visible(data.draw(spelled(SECRET), label="secret"))
    cut = data.draw(st.integers(1, len(pw) - 1), label="cut")
    typed = visible(data.draw(spelled(SECRET), label="typed"))
    mail = visible(data.draw(spelled(EMAIL), label="mail"))
    typed_mail = visible(data.draw(spelled(EMAIL), label="typed mail"))
    near = SECRET[:-1] + "7"  # another value
    assert key(near) != key(SECRET)
    swapped = SECRET.swapcase()  # another case of a value: a reader knows the value from it
    await browser.page.evaluate(
        """([pw, cut, typed, mail, typedMail, near, swapped]) => {
            const $ = (id) => document.getElementById(id);
            $('text').textContent = pw;
            $('a').textContent = pw.slice(0, cut); $('b').textContent = pw.slice(cut);
            $('field').value = typed;
            $('mail').textContent = mail;
            $('mailfield').value = typedMail;
            $('near').textContent = near;
            $('swapped').textContent = swapped;
        }""",
        [pw, cut, typed, mail, typed_mail, near, swapped],
    )
    names = ("text", "split", "field", "mail", "mailfield", "near", "swapped")
    boxes = {name: grid(await text_box(browser, name)) for name in names}
    points = [p for name in boxes for p in boxes[name]]

    def read(rgb: list[list[int]]) -> dict[str, list[list[int]]]:
        out, at = {}, 0
        for name, where in boxes.items():
            out[name] = rgb[at : at + len(where)]
            at += len(where)
        return out

    plain = read(await pixels(browser, await browser.screenshot(), points))
    for name, seen in plain.items():  # the page shows every spelling (the fixture works)
        assert all(green(p) for p in seen), (
            name,
            [(at, p) for at, p in zip(boxes[name], seen, strict=True) if not green(p)],
        )
    with browser.hiding([SECRET, EMAIL]):
        shot = read(await pixels(browser, await browser.screenshot(), points))
    spellings = json.dumps([pw, typed, mail, typed_mail], ensure_ascii=True)
    for name in ("text", "split", "field", "mail", "mailfield", "swapped"):
        wrong = [(at, p) for at, p in zip(boxes[name], shot[name], strict=True) if not masked(p)]
        assert not wrong, (name, spellings, wrong)
    assert all(green(p) for p in shot["near"]), "a spelling that does not read as the value stays visible"
    assert await browser.page.locator("notebook-agent-mask").count() == 0


async def test_the_spellings_redaction_finds_are_the_ones_the_mask_finds(browser: BrowserSession, load: Load) -> None:
    """The page follows Python's rule, not its own: a character whose case fold is not its lower case (ß folds
    to ss, ς to σ, ﬀ to ff) is found in a case-insensitive value, and one that only looks alike without being a
    compatibility form of it (Cyrillic а for Latin a) is not, as in redaction."""
    await load("secret_echo.html")
    await browser.page.set_content(PAGE)
    value = CaseInsensitive("Straße-ﬀ-Σoφία")
    cases = {"text": "STRASSE-FF-ΣOΦΊΑ", "mail": "strasse-ff-ςoφία", "near": "Strаße-ﬀ-Σoφία"}  # near: Cyrillic а
    assert key(cases["text"]) == key(value) == key(cases["mail"])
    assert key(cases["near"]) != key(value)
    await browser.page.evaluate(
        "(cases) => { for (const [id, t] of Object.entries(cases)) document.getElementById(id).textContent = t; }",
        cases,
    )
    boxes = {name: grid(await text_box(browser, name)) for name in cases}
    with browser.hiding([value]):
        shot = await browser.screenshot()
    for name, where in boxes.items():
        seen = await pixels(browser, shot, where)
        assert all((masked if name != "near" else green)(p) for p in seen), (name, seen)
