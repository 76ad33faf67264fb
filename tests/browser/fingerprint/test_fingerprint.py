"""Element fingerprints on real Chromium: each part read for the element types it is for, locators checked to
match exactly the element (and Python source that compiles and resolves to it, hostile texts included),
finding the element again on the variants of pages/fp_base.html (found, healed, or not found and why), and a
property test over random pages: whatever ``find_again`` answers is the right element or nothing.

The right element is told by ``data-truth``, an attribute the fingerprint never reads."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from playwright.async_api import Frame, Locator, Page

from notebook_agent.browser import BrowserSession
from notebook_agent.browser.fingerprint import finder as fingerprint_module
from notebook_agent.browser.fingerprint.finder import (
    Fingerprint,
    FingerprintUnavailable,
    Found,
    LocatorSpec,
    find_again,
    fingerprint_of,
    playwright_source,
    register_fingerprint_engine,
)
from notebook_agent.browser.fingerprint.model import FrameStep, Landmark, Neighbours, py_str
from notebook_agent.testing import mark_element, page_script_data
from tests.browser.conftest import Servers
from tests.waits import wait_until


@pytest_asyncio.fixture(scope="module", loop_scope="session", autouse=True)
async def _engine(shared_browser: BrowserSession) -> None:
    """The engine is registered before this module's tabs open (launch does it for the agent's own)."""
    await register_fingerprint_engine(shared_browser.playwright)


@pytest_asyncio.fixture(loop_scope="session")
async def page(browser: BrowserSession) -> AsyncIterator[Page]:
    yield browser.page


async def fp_at(where: Page | Frame, selector: str) -> Fingerprint:
    frame = where.main_frame if isinstance(where, Page) else where
    handle = await frame.query_selector(selector)
    assert handle is not None, selector
    return await fingerprint_of(frame, handle)


async def truth_of(found: Found) -> str | None:
    return None if found.element is None else await found.element.get_attribute("data-truth")


async def resolve(page: Page, fp: Fingerprint) -> Locator:
    """The locator's Python source, compiled and evaluated with nothing but ``page`` in scope."""
    source = playwright_source(fp)
    assert fp.locator is not None and source == fp.locator.source()
    loc = eval(compile(source, "<locator>", "eval"), {"__builtins__": {}}, {"page": page})
    assert isinstance(loc, Locator)
    return loc


async def assert_resolves(page: Page, fp: Fingerprint, truth: str) -> None:
    loc = await resolve(page, fp)
    assert await loc.count() == 1
    assert await loc.get_attribute("data-truth") == truth


def frame_named(page: Page, name: str) -> Frame:
    return next(f for f in page.frames if f.name == name)


# -- each part ----------------------------------------------------------------------------------------------

ROLES = """
<main>
<button data-truth=b1>  Add
   to <b>cart</b> </button>
<input type=submit value="Send it" data-truth=b2>
<input type=submit data-truth=b3>
<a href="/x" data-truth=l1><img src="data:," alt="Home page"></a>
<a href="/y" aria-label="Profile" data-truth=l2>Me</a>
<label for=e>E-mail</label><input id=e type=email data-truth=t1>
<label>Surname <input data-truth=t2></label>
<span id=cap>Card</span><span id=num>number</span><input aria-labelledby="cap num" data-truth=t3>
<input placeholder="Only a placeholder" data-truth=t4>
<input title="Only a title" data-truth=t5>
<textarea aria-label="Notes" data-truth=t6></textarea>
<input type=search aria-label="Find" data-truth=s1>
<label><input type=checkbox data-truth=c1> Remember me</label>
<input type=radio aria-label="Red" data-truth=r1>
<select aria-label="Size" data-truth=x1><option>S</option></select>
<h2 data-truth=h1>Reviews</h2>
<div role=button tabindex=0 data-truth=d1>Custom</div>
<div role=nonsense data-truth=d2><button data-truth=d3>Inner</button></div>
<input type=range aria-label="Volume" data-truth=v1>
<input type=number aria-label="Qty" data-truth=n1>
</main>
"""

EXPECTED_ROLES: dict[str, tuple[Any, str]] = {
    "b1": ("button", "Add to cart"),
    "b2": ("button", "Send it"),
    "b3": ("button", "Submit"),
    "l1": ("link", "Home page"),
    "l2": ("link", "Profile"),
    "t1": ("textbox", "E-mail"),
    "t2": ("textbox", "Surname"),
    "t3": ("textbox", "Card number"),
    "t4": ("textbox", "Only a placeholder"),
    "t5": ("textbox", "Only a title"),
    "t6": ("textbox", "Notes"),
    "s1": ("searchbox", "Find"),
    "c1": ("checkbox", "Remember me"),
    "r1": ("radio", "Red"),
    "x1": ("combobox", "Size"),
    "h1": ("heading", "Reviews"),
    "d1": ("button", "Custom"),
    "d3": ("button", "Inner"),
    "v1": ("slider", "Volume"),
    "n1": ("spinbutton", "Qty"),
}


async def test_role_and_name_are_what_get_by_role_matches(page: Page) -> None:
    await page.set_content(ROLES)
    for truth, (role, name) in EXPECTED_ROLES.items():
        fp = await fp_at(page, f"[data-truth={truth}]")
        assert (fp.role, fp.name) == (role, name), truth
        matches = page.get_by_role(role, name=name, exact=True)  # Playwright's own reading agrees
        assert truth in [await matches.nth(i).get_attribute("data-truth") for i in range(await matches.count())]
    assert (await fp_at(page, "[data-truth=d2]")).role == ""  # an unknown role is no role


async def test_label_comes_from_for_wrapping_and_labelledby(page: Page) -> None:
    await page.set_content(ROLES)
    assert (await fp_at(page, "[data-truth=t1]")).label == "E-mail"
    assert (await fp_at(page, "[data-truth=t2]")).label == "Surname"
    assert (await fp_at(page, "[data-truth=t3]")).label == "Card number"
    assert (await fp_at(page, "[data-truth=c1]")).label == "Remember me"
    assert (await fp_at(page, "[data-truth=t4]")).label == ""  # a placeholder is no label
    assert (await fp_at(page, "[data-truth=b1]")).label == ""


async def test_tag_type_id_and_name_attribute(page: Page) -> None:
    await page.set_content(
        "<input id=mail name=email type=EMAIL data-truth=a><input data-truth=b><button data-truth=c>Go</button>"
        "<button type=reset data-truth=d>Clear</button><a href='/z' data-truth=e>Z</a>"
    )
    a = await fp_at(page, "[data-truth=a]")
    assert (a.tag, a.type, a.id, a.name_attr) == ("input", "email", "mail", "email")
    b = await fp_at(page, "[data-truth=b]")
    assert (b.tag, b.type, b.id, b.name_attr) == ("input", "text", "", "")
    assert (await fp_at(page, "[data-truth=c]")).type == "submit"  # a button's default type
    assert (await fp_at(page, "[data-truth=d]")).type == "reset"
    e = await fp_at(page, "[data-truth=e]")
    assert (e.tag, e.type) == ("a", "")


@pytest.mark.parametrize("attr", ["data-testid", "data-test-id", "data-test", "data-qa"])
async def test_each_test_id_attribute_is_read_and_preferred(page: Page, attr: str) -> None:
    await page.set_content(f"<button {attr}='buy-now' data-truth=t>Buy</button><button>Buy later</button>")
    fp = await fp_at(page, "[data-truth=t]")
    assert fp.test_id == "buy-now"
    assert fp.locator == LocatorSpec("test_id", attr=attr, value="buy-now")
    expected = 'page.get_by_test_id("buy-now")' if attr == "data-testid" else f"page.locator('[{attr}=\"buy-now\"]')"
    assert playwright_source(fp) == expected
    await assert_resolves(page, fp, "t")


async def test_placeholder_is_read_and_used_when_it_alone_is_unique(page: Page) -> None:
    await page.set_content(
        "<input aria-label=Search placeholder='Search orders' data-truth=a>"
        "<input aria-label=Search placeholder='Search people' data-truth=b>"
    )
    fp = await fp_at(page, "[data-truth=b]")
    assert fp.placeholder == "Search people" and fp.nth == 1  # role+name and label match both
    assert fp.locator is not None and fp.locator.kind == "placeholder"
    assert playwright_source(fp) == 'page.get_by_placeholder("Search people", exact=True)'
    await assert_resolves(page, fp, "b")


async def test_href_is_path_and_query_without_origin_or_fragment(load: Any, page: Page) -> None:
    await load("fp_base.html")
    assert (await fp_at(page, "[data-truth=nav-shop]")).href == "/shop?sort=new"
    assert (await fp_at(page, "[data-truth=docs-faq]")).href == "/docs/faq?lang=en"
    assert (await fp_at(page, "[data-truth=subscribe]")).href == ""
    await page.set_content("<a href='javascript:void(0)' data-truth=j>Run</a>")
    assert (await fp_at(page, "[data-truth=j]")).href == "javascript:"


async def test_text_is_visible_collapsed_capped_and_never_a_typed_value(page: Page) -> None:
    long = "word " * 60
    await page.set_content(
        "<button data-truth=a>  Pay\n\n  <span style='display:none'>secret</span> <i>now</i> </button>"
        f"<a href='/l' data-truth=b>{long}</a><input name=pw data-truth=c>"
    )
    assert (await fp_at(page, "[data-truth=a]")).text == "Pay now"
    assert (await fp_at(page, "[data-truth=b]")).text == long.strip()[:120]
    await page.fill("[data-truth=c]", "hunter2-typed")
    c = await fp_at(page, "[data-truth=c]")
    assert c.text == "" and "hunter2" not in json.dumps(c.to_dict())


async def test_frame_chain_of_a_cross_origin_frame(load: Any, page: Page, servers: Servers) -> None:
    await load("fp_base.html")
    frame = frame_named(page, "payment")
    assert frame.url.startswith(servers.other)  # another site: its own process
    fp = await fp_at(frame, "[data-truth=pay]")
    assert fp.frame == [FrameStep(name="payment", id="", src="/fp_frame.html", title="Payment")]
    assert fp.test_id == "pay-button" and fp.landmark == Landmark("form", "Card", "")
    assert playwright_source(fp) == 'page.frame_locator(\'iframe[name="payment"]\').get_by_test_id("pay-button")'
    await assert_resolves(page, fp, "pay")
    top = await fp_at(page, "[data-truth=subscribe]")
    assert top.frame == [] and top.locator is not None and top.locator.frames == ()


async def test_nested_frames_chain_frame_locators(page: Page) -> None:
    inner = "<button data-truth=deep>Deep</button><button>Other</button>"
    middle = f"<p>middle</p><iframe name=inner srcdoc='{inner}'></iframe>"
    await page.set_content(f'<iframe id=outer title="Outer" srcdoc="{middle}"></iframe>')
    deep = await wait_until(lambda: next((f for f in page.frames if f.name == "inner"), None), message="inner frame")
    assert deep is not None
    await deep.wait_for_selector("[data-truth=deep]")
    fp = await fp_at(deep, "[data-truth=deep]")
    assert [(s.name, s.id, s.title) for s in fp.frame] == [("", "outer", "Outer"), ("inner", "", "")]
    source = playwright_source(fp)
    assert source.startswith('page.frame_locator("#outer").frame_locator(\'iframe[name="inner"]\').')
    await assert_resolves(page, fp, "deep")


async def test_landmark_is_the_nearest_form_or_region_with_the_heading_before(page: Page) -> None:
    await page.set_content(
        "<h1>Account</h1>"
        "<form name=login><button data-truth=a>Go</button></form>"
        "<form id=checkout-form><button data-truth=b>Go</button></form>"
        "<form action='/pay?step=2'><button data-truth=c>Go</button></form>"
        "<nav aria-label=Breadcrumbs><a href='/' data-truth=d>Home</a></nav>"
        "<h2>Settings</h2><div role=dialog aria-label='Confirm'><button data-truth=e>OK</button></div>"
        "<div><p><button data-truth=f>Plain</button></p></div>"
    )
    assert (await fp_at(page, "[data-truth=a]")).landmark == Landmark("form", "login", "Account")
    assert (await fp_at(page, "[data-truth=b]")).landmark == Landmark("form", "checkout-form", "Account")
    assert (await fp_at(page, "[data-truth=c]")).landmark == Landmark("form", "/pay?step=2", "Account")
    assert (await fp_at(page, "[data-truth=d]")).landmark == Landmark("nav", "Breadcrumbs", "Account")
    assert (await fp_at(page, "[data-truth=e]")).landmark == Landmark("dialog", "Confirm", "Settings")
    assert (await fp_at(page, "[data-truth=f]")).landmark == Landmark("", "", "Settings")


async def test_neighbours_are_the_texts_beside_it_or_the_cell_before(page: Page) -> None:
    await page.set_content(
        "<p>Quantity: <input aria-label=q data-truth=a> items</p>"
        "<div><span>Price</span><button data-truth=b>Edit</button><em>per unit</em></div>"
        "<table><tr><td>Coupon</td><td><input aria-label=c data-truth=c></td></tr></table>"
        "<div><button data-truth=d>Alone</button></div>"
    )
    assert (await fp_at(page, "[data-truth=a]")).neighbours == Neighbours("Quantity:", "items")
    assert (await fp_at(page, "[data-truth=b]")).neighbours == Neighbours("Price", "per unit")
    assert (await fp_at(page, "[data-truth=c]")).neighbours == Neighbours("Coupon", "")
    assert (await fp_at(page, "[data-truth=d]")).neighbours == Neighbours("", "")


async def test_nth_is_the_position_among_the_same_role_and_name(load: Any, page: Page) -> None:
    await load("fp_base.html")
    assert (await fp_at(page, "[data-truth=cart-kettle]")).nth == 0
    assert (await fp_at(page, "[data-truth=cart-teapot]")).nth == 1
    assert (await fp_at(page, "[data-truth=subscribe]")).nth is None  # the only one


SPOOFING = """<script>
Element.prototype.getAttribute = () => "spoofed";
Element.prototype.hasAttribute = () => false;
Object.defineProperty(HTMLElement.prototype, "innerText", { get() { return "spoofed"; } });
Object.defineProperty(Node.prototype, "textContent", { get() { return "spoofed"; } });
JSON.stringify = () => '{"role": "spoofed"}';
</script>"""


async def test_page_script_cannot_spoof_what_a_fingerprint_reads(page: Page) -> None:
    await page.set_content(
        "<main><h2>Basket</h2><form name=cart><button data-testid=pay data-truth=t>Pay now</button></form></main>"
        + SPOOFING
    )
    assert await page.evaluate("document.querySelector('button').getAttribute('data-testid')") == "spoofed"
    fp = await fp_at(page, "[data-truth=t]")
    assert (fp.role, fp.name, fp.test_id, fp.text) == ("button", "Pay now", "pay", "Pay now")
    assert fp.landmark == Landmark("form", "cart", "Basket")
    found = await find_again(page, fp)
    assert found.element is not None and found.confidence == 1.0


# -- locators ------------------------------------------------------------------------------------------------

LOCATORS = """
<div><span>Row 1</span><button data-truth=e1>Edit</button></div>
<div><span>Row 2</span><button data-truth=e2>Edit</button></div>
<label for=d>Birthday</label><input id=d type=date data-truth=date>
<div onclick="0" data-truth=more>Read more</div>
<button id=ember1234 data-truth=gen><svg width=8 height=8></svg></button>
<button id=go-button data-truth=readable><svg width=8 height=8></svg></button>
"""


async def test_each_locator_is_the_first_kind_that_is_unique_and_is_checked(page: Page) -> None:
    await page.set_content(LOCATORS)
    expected = {
        "e2": ('page.get_by_role("button", name="Edit", exact=True).nth(1)', "role"),  # only .nth tells
        "date": ('page.get_by_label("Birthday", exact=True)', "label"),
        "more": ('page.get_by_text("Read more", exact=True)', "text"),
        "readable": ('page.locator("#go-button")', "id"),
        "gen": ('page.locator("html > body > button:nth-of-type(1)")', "css"),  # a generated id is no locator
    }
    for truth, (source, kind) in expected.items():
        fp = await fp_at(page, f"[data-truth={truth}]")
        assert fp.locator is not None and fp.locator.kind == kind, truth
        assert playwright_source(fp) == source
        await assert_resolves(page, fp, truth)
    assert playwright_source(await fp_at(page, "[data-truth=e1]"), page_var="tab").startswith("tab.get_by_role(")


HOSTILE = [
    "He said \"hi\" & 'bye'",
    "two\nlines\there",
    "</script><script>alert(1)</script>",
    "emoji 🦆 中文 \u202e reversed",
    "back\\slash \\n not a newline",
    "a\u2028b",
]


async def test_hostile_names_give_source_that_compiles_and_resolves(page: Page) -> None:
    buttons = "".join(f"<button data-truth=h{i}></button>" for i in range(len(HOSTILE)))
    await page.set_content(
        f"<main>{buttons}<button data-truth=lone></button>"
        "<input data-qa='x' data-truth=qa aria-label=Q><input data-qa='y' aria-label=Q>"
        "<input id='x' data-truth=id><input aria-label=Q></main>"
    )
    await page.evaluate(
        """([texts]) => {
            texts.forEach((t, i) => { document.querySelector(`[data-truth=h${i}]`).textContent = t; });
            document.querySelector('[data-truth=lone]').textContent = 'lone \\ud800 surrogate';
            document.querySelector('[data-truth=qa]').setAttribute('data-qa', 'q"u\\'o\\nte\\\\s');
            document.querySelector('[data-truth=id]').id = 'quote"d\\nid';
        }""",
        [HOSTILE],
    )
    for i, text in enumerate(HOSTILE):
        fp = await fp_at(page, f"[data-truth=h{i}]")
        assert fp.name == " ".join(text.split())
        compile(playwright_source(fp), "<locator>", "eval")
        await assert_resolves(page, fp, f"h{i}")
    lone = await fp_at(page, "[data-truth=lone]")
    assert lone.name == "lone \ufffd surrogate" and lone.text == "lone \ufffd surrogate"
    await assert_resolves(page, lone, "lone")  # the replaced text cannot match: another locator does
    qa = await fp_at(page, "[data-truth=qa]")
    assert qa.test_id == "q\"u'o\nte\\s" and qa.locator is not None and qa.locator.kind == "test_id"
    await assert_resolves(page, qa, "qa")
    weird_id = await fp_at(page, "[data-truth=id]")
    assert (
        weird_id.id == 'quote"d\nid' and playwright_source(weird_id) == 'page.locator(\'[id="quote\\\\"d\\\\a id"]\')'
    )
    await assert_resolves(page, weird_id, "id")
    for fp in (lone, qa, weird_id):
        assert Fingerprint.from_dict(json.loads(json.dumps(fp.to_dict()))) == fp


def test_python_literals_quote_safely() -> None:
    for text in [*HOSTILE, "", "'", '"', "\\", "\x00", "a'b\"c", "\ud800"]:
        assert eval(py_str(text)) == text
    assert py_str("Add to cart") == '"Add to cart"'


# -- saved fingerprints are hostile input --------------------------------------------------------------------


async def test_round_trip_and_dict_format(load: Any, page: Page) -> None:
    await load("fp_base.html")
    fp = await fp_at(page, "[data-truth=cart-teapot]")
    d = fp.to_dict()
    assert d["locator"] == {
        "kind": "role",
        "role": "button",
        "name": "Add to cart",
        "exact": True,
        "nth": 1,
        "source": 'page.get_by_role("button", name="Add to cart", exact=True).nth(1)',
    }
    assert d["landmark"] == {"kind": "section", "label": "Products", "heading": "Teapot"}
    assert d["neighbours"] == {"before": "£12.00", "after": ""}
    assert d["frame"] == [] and d["nth"] == 1
    assert Fingerprint.from_dict(json.loads(json.dumps(d))) == fp


def test_loading_tolerates_missing_extra_and_garbage_fields() -> None:
    assert Fingerprint.from_dict(None) == Fingerprint() and Fingerprint.from_dict([1, 2]).empty
    fp = Fingerprint.from_dict(
        {
            "role": "button; drop",
            "name": 42,
            "tag": "BUTTON",
            "text": "x" * 10_000,
            "frame": [{"name": 1, "src": "/f.html"}, "junk"],
            "landmark": "main",
            "neighbours": {"before": ["a"], "after": "ok"},
            "nth": True,
            "extra": {"anything": 1},
            "label": "a\ud800b",
        }
    )
    assert (fp.role, fp.name, fp.tag, len(fp.text), fp.nth) == ("", "", "button", 120, None)
    assert fp.frame == [FrameStep(src="/f.html"), FrameStep()]
    assert fp.landmark == Landmark() and fp.neighbours == Neighbours("", "ok") and fp.label == "a\ufffdb"
    # A locator is rebuilt from checked fields: never a selector that reaches another engine, never saved code.
    for bad in [
        {"kind": "css", "selector": "notebook_agent=eyJvcCI6ImhpZGUifQ=="},
        {"kind": "css", "selector": "button >> notebook_agent_fp=e30="},
        {"kind": "css", "selector": "//button"},
        {"kind": "css", "selector": "xpath=//a"},
        {"kind": "role", "role": "button)\nimport os#"},
        {"kind": "test_id", "attr": "onclick", "value": "x"},
        {"kind": "role", "role": "button", "frames": ["iframe >> internal:control=enter-frame"]},
        {"kind": "role", "role": "button", "nth": -1},
        {"kind": "eval", "source": "__import__('os')"},
        "page.get_by_role('button')",
    ]:
        assert LocatorSpec.from_dict(bad) is None, bad
    spec = LocatorSpec.from_dict({"kind": "role", "role": "button", "name": "Go", "source": "evil()", "nth": 2})
    assert spec is not None and spec.source() == 'page.get_by_role("button", name="Go", exact=True).nth(2)'
    with pytest.raises(ValueError):
        playwright_source(Fingerprint())
    with pytest.raises(ValueError):
        spec.source(page_var="page; import os")


async def test_an_empty_fingerprint_finds_nothing(page: Page) -> None:
    await page.set_content("<button>Go</button>")
    found = await find_again(page, Fingerprint.from_dict("garbage"))
    assert found.element is None and "empty" in found.why_not


async def test_a_document_without_the_engine_says_so(page: Page, monkeypatch: pytest.MonkeyPatch) -> None:
    await page.set_content("<button>Go</button>")
    monkeypatch.setattr(fingerprint_module, "FP_ENGINE", "notebook_agent_fp_never_registered")
    handle = await page.query_selector("button")
    assert handle is not None
    with pytest.raises(FingerprintUnavailable, match="register_fingerprint_engine"):
        await fingerprint_of(page.main_frame, handle)


# -- finding again on the variants ---------------------------------------------------------------------------

#: variant page: {target: (the element found, or None; how it was found, or a phrase of why not)}
VARIANTS: dict[str, dict[str, tuple[str | None, str]]] = {
    "fp_base.html": {t: (t, "locator") for t in ("cart-teapot", "email", "search-go", "accept", "delete", "pay")},
    "fp_renamed.html": {
        "email": ("email", "locator"),  # the label follows the id: role+name still unique
        "subscribe": ("subscribe", "locator"),
        "search-go": ("search-go", "context"),  # an icon button known by its id: its place tells
    },
    "fp_shuffled.html": {
        "cart-teapot": ("cart-teapot", "role+name"),  # the recorded .nth(1) is now the Kettle's
        "docs-api": ("docs-api", "locator"),
    },
    "fp_banner.html": {
        "accept": ("accept", "role+name"),  # the banner's Accept makes the locator match two
        "cart-kettle": ("cart-kettle", "locator"),
    },
    "fp_case.html": {"cart-teapot": ("cart-teapot", "role+name (case-insensitive)")},
    "fp_moved.html": {"subscribe": ("subscribe", "role+name"), "email": ("email", "role+name")},
    "fp_gone.html": {"cart-teapot": (None, "well enough"), "cart-mug": ("cart-mug", "role+name")},  # .nth(2) is gone
    "fp_twins.html": {"delete": (None, "2 elements match role=button name='Delete' about equally well")},
}


@pytest.mark.parametrize("variant", list(VARIANTS))
async def test_find_again_on_a_changed_page(load: Any, page: Page, variant: str) -> None:
    targets = VARIANTS[variant]
    await load("fp_base.html")
    fps = {}
    for truth in targets:
        where = frame_named(page, "payment") if truth == "pay" else page
        fps[truth] = await fp_at(where, f"[data-truth={truth}]")
    await load(variant)
    for truth, (expected, how) in targets.items():
        found = await find_again(page, fps[truth])
        assert await truth_of(found) == expected, (truth, found.why_not)
        if expected is None:
            assert how in found.why_not and found.confidence == 0.0 and found.frame is None
        else:
            assert found.how == how and found.why_not == "", truth
            assert 0.6 <= found.confidence <= 1.0
            assert found.frame is not None and found.frame == await found.element.owner_frame()  # type: ignore[union-attr]
    if variant == "fp_shuffled.html":  # the recorded locator alone would have clicked another product
        assert (
            await page.get_by_role("button", name="Add to cart", exact=True).nth(1).get_attribute("data-truth")
            == "cart-kettle"
        )
    if variant == "fp_moved.html":
        found = await find_again(page, fps["subscribe"])
        assert found.frame is not None and found.frame.url.endswith("/fp_moved_frame.html")
        assert found.confidence < 1.0  # it is in another frame than recorded


async def test_gone_target_with_a_lookalike_in_its_place_is_not_found(page: Page) -> None:
    cards = [("Kettle", "£12.00"), ("Teapot", "£12.00")]  # same price: only the heading tells them apart
    html = "".join(
        f"<article><h3>{n}</h3><p>{p}</p><button data-truth={n}>Add to cart</button></article>" for n, p in cards
    )
    await page.set_content(f"<main>{html}</main>")
    fp = await fp_at(page, "[data-truth=Teapot]")
    await page.set_content(f"<main>{html.split('<article><h3>Teapot')[0]}</main>")
    found = await find_again(page, fp)
    assert found.element is None and "another heading ('Kettle')" in found.why_not


async def test_hidden_or_disabled_is_not_found_for_an_action(page: Page) -> None:
    await page.set_content("<form name=f><button data-truth=go>Go</button></form>")
    fp = await fp_at(page, "[data-truth=go]")
    await page.set_content("<form name=f><button data-truth=go disabled>Go</button></form>")
    found = await find_again(page, fp)
    assert found.element is None and "is disabled" in found.why_not
    await page.set_content("<form name=f><button data-truth=go style='display:none'>Go</button></form>")
    found = await find_again(page, fp)
    assert found.element is None and "is hidden" in found.why_not
    await page.set_content("<form name=f><button data-truth=go>Go</button></form>")
    assert await truth_of(await find_again(page, fp)) == "go"


# -- a property: the right element or nothing ----------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    kind: str  # button | link | input | submit
    name: str
    ctx: str  # a text before it in its own box, which moves with it
    id: str | None
    test_id: str | None


items = st.builds(
    Item,
    st.sampled_from(["button", "link", "input", "submit"]),
    st.sampled_from(["Save", "save", "Delete", "Open", ""]),
    st.sampled_from(["", "Alpha", "Beta"]),
    st.sampled_from([None, "a", "b", "main-action"]),
    st.sampled_from([None, "t1", "t2"]),
).map(lambda it: it if it.name or it.kind == "button" else replace(it, name="Go"))


def render(elems: list[Item], order: list[int], ids: dict[str, str], flip: bool) -> str:
    units = []
    for i in order:
        it = elems[i]
        attrs = [f"data-truth=t{i}", f"class=c{ids.get('class', 'x')}"]
        if it.id:
            attrs.append(f"id={ids.get(it.id, it.id)}")
        if it.test_id:
            attrs.append(f"data-testid={it.test_id}")
        a = " ".join(reversed(attrs) if flip else attrs)
        control = {
            "button": f"<button type=button {a}>{it.name}</button>",
            "link": f"<a href='/p/{it.name}' {a}>{it.name}</a>",
            "input": f"<input aria-label='{it.name}' {a}>",
            "submit": f"<input type=submit value='{it.name}' {a}>",
        }[it.kind]
        units.append(f"<div class=unit>{f'<span>{it.ctx}</span>' if it.ctx else ''}{control}</div>")
    return "<main><h1>Page</h1>" + "".join(units) + "</main>"


def alike(other: Item, target: Item, *, ids: bool) -> bool:
    """Whether nothing the fingerprint of ``target`` holds tells ``other`` from it (parts it lacks do not)."""
    return (
        other.kind == target.kind
        and other.name == target.name
        and (not target.ctx or other.ctx == target.ctx)
        and (not ids or target.id is None or other.id == target.id)
        and (target.test_id is None or other.test_id == target.test_id)
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), elems=st.lists(items, min_size=2, max_size=6))
async def test_random_pages_find_the_right_element_or_none(page: Page, data: st.DataObject, elems: list[Item]) -> None:
    target = data.draw(st.integers(0, len(elems) - 1), label="target")
    order = data.draw(st.permutations(range(len(elems))), label="order")
    rename = data.draw(st.booleans(), label="rename ids")
    flip = data.draw(st.booleans(), label="attribute order")
    ids = {"a": "q7f3k2x9", "b": "w8e1r4t6", "main-action": "r2d2c3po", "class": "renamed"} if rename else {}
    others = [e for i, e in enumerate(elems) if i != target]

    await page.set_content(render(elems, list(range(len(elems))), {}, False))
    fp = await fp_at(page, f"[data-truth=t{target}]")
    await assert_resolves(page, fp, f"t{target}")  # the recorded locator is exact and its source works
    found = await find_again(page, fp)  # the same page
    if not any(alike(o, elems[target], ids=True) for o in others):
        assert await truth_of(found) == f"t{target}", found.why_not
    else:
        assert found.element is None and found.why_not

    await page.set_content(render(elems, list(order), ids, flip))
    found = await find_again(page, fp)
    got = await truth_of(found)
    assert got in (None, f"t{target}"), (got, found.how)  # never another element
    if not any(alike(o, elems[target], ids=not rename) for o in others):
        assert got == f"t{target}", found.why_not
    elif got is None:
        assert found.why_not


# -- a property: the role position read in one walk is Playwright's --------------------------------------------

ROLE_KINDS = {
    "button": "<button {a}>{n}</button>",
    "input-button": "<input type=button value='{n}' {a}>",
    "link": "<a href='/x' {a}>{n}</a>",
    "div-button": "<div role=button tabindex=0 {a}>{n}</div>",
    "span-link": "<span role=link tabindex=0 {a}>{n}</span>",
    "checkbox": "<label><input type=checkbox {a}>{n}</label>",
    "a-no-href": "<a role=button {a}>{n}</a>",
}


@dataclass(frozen=True)
class RoleItem:
    kind: str
    name: str
    shadow: bool
    hidden: bool


role_items = st.builds(
    RoleItem, st.sampled_from(sorted(ROLE_KINDS)), st.sampled_from(["Go", "Save"]), st.booleans(), st.booleans()
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(elems=st.lists(role_items, min_size=1, max_size=7))
async def test_role_positions_are_what_get_by_role_counts_and_one_read_equals_the_other(
    browser: BrowserSession, elems: list[RoleItem]
) -> None:
    """Each element's role position (how many shown elements share its role and exact name, and which one it is)
    is read in one walk of the elements that can have that role, shadow roots included; it must be what
    Playwright's ``get_by_role`` finds. And the fingerprint read by snapshot index in one query
    (``fingerprint_at``, before every action) is the one read from a handle (``fingerprint_of``)."""
    page = browser.page
    light: list[str] = []
    shadow: list[str] = []
    for i, it in enumerate(elems):
        a = f"data-truth=t{i}" + (" style='display:none'" if it.hidden else "")
        (shadow if it.shadow else light).append(ROLE_KINDS[it.kind].format(a=a, n=it.name))
    script = (
        "<div id=host></div><script>document.getElementById('host').attachShadow({mode: 'open'}).innerHTML = "
        + json.dumps("".join(shadow))
        + "</script>"
    )
    await page.set_content("<main>" + "".join(light) + (script if shadow else "") + "</main>")
    for i, it in enumerate(elems):
        if it.hidden:
            continue
        handle = await page.locator(f"[data-truth=t{i}]").element_handle()
        k = await mark_element(handle)
        parts = await page_script_data(page.main_frame, {"op": "fp:describe", "k": k, "positions": True})
        if not (parts.get("role") and parts.get("name")):
            continue
        matches = page.get_by_role(parts["role"], name=parts["name"], exact=True)
        truths = [await matches.nth(j).get_attribute("data-truth") for j in range(await matches.count())]
        assert parts["role_position"] == {"n": len(truths), "i": truths.index(f"t{i}")}, (it, truths)
    snap = await browser.snapshot()
    for index in snap.elements:
        element, _, frame, _ = await browser.resolve(index)
        frame_of, selector = browser.reference(index)
        assert frame_of is frame
        by_index = await fingerprint_module.fingerprint_at(frame, selector)
        assert by_index.to_dict() == (await fingerprint_of(frame, element)).to_dict(), index


async def test_the_read_by_index_of_an_element_gone_since_the_snapshot_answers_at_once(browser: BrowserSession) -> None:
    """The read before an action is one query whose chain always answers: an element removed (or replaced)
    since the snapshot gives no fingerprint at once, not after the query's 5 s wait for a match."""
    from notebook_agent.browser.session.targets import target_of

    await browser.page.set_content("<button id=a>Save</button><button id=b>Open</button><a href='/x'>Docs</a>")
    snap = await browser.snapshot()
    by_id = {e.attributes.get("id"): i for i, e in snap.elements.items()}
    assert (await asyncio.wait_for(target_of(browser, by_id["b"]), 2) or {}).get("name") == "Open"
    await browser.page.evaluate("() => { document.getElementById('a').remove(); document.body.innerHTML += '' }")
    for index in snap.elements:  # #a removed; #b and the link replaced by copies (innerHTML)
        assert await asyncio.wait_for(target_of(browser, index), 2) is None  # the wait for a match was 5 s


async def test_a_role_named_like_an_object_property_is_just_a_role_no_element_has(browser: BrowserSession) -> None:
    """A recorded fingerprint is hostile input (a run file): its role is looked up in the page script's table of
    the tags each role can have, and a role such as ``constructor`` once found a function there and broke the
    selector query built from it."""
    await browser.page.set_content("<button>Save</button><input type=checkbox aria-label=Keep>")
    k = await mark_element(await browser.page.locator("button").element_handle())
    for role in ("constructor", "__proto__", "toString", "hasOwnProperty"):
        found = await page_script_data(
            browser.page.main_frame, {"op": "fp:rolepos", "k": k, "role": role, "name": "Save"}
        )
        assert found == {"n": 0, "i": None}, role
    found = await page_script_data(
        browser.page.main_frame, {"op": "fp:rolepos", "k": k, "role": "button", "name": "Save"}
    )
    assert found == {"n": 1, "i": 0}


async def test_a_role_attribute_named_like_an_object_property_does_not_hide_the_landmark(
    browser: BrowserSession,
) -> None:
    """The page's role attributes are looked up in the landmark table: ``role=constructor`` once counted as a
    landmark (an inherited key) and hid the real one around it."""
    await browser.page.set_content("<nav aria-label=Main><div role=constructor><button>Go</button></div></nav>")
    fp = await fingerprint_of(browser.page.main_frame, await browser.page.locator("button").element_handle())
    assert (fp.landmark.kind, fp.landmark.label) == ("nav", "Main")


async def test_a_select_beside_it_reads_as_its_chosen_option(page: Page) -> None:
    """innerText of a select lists every option: a label holding one would put every plan beside the button, and a
    recipe that chose another plan would not find the button by its neighbours."""
    await page.set_content(
        "<form><label>Plan <select name=plan><option>Free</option><option selected>Pro</option>"
        "<option>Team</option></select></label><button data-truth=a>Create</button>"
        "<select aria-label=size><option>S</option><option selected>M</option></select>"
        "<button data-truth=b>Go</button><span hidden>x <select><option>Q</option></select></span></form>"
    )
    assert (await fp_at(page, "[data-truth=a]")).neighbours == Neighbours("Plan Pro", "M")
    await page.select_option("select[name=plan]", "Team")
    assert (await fp_at(page, "[data-truth=a]")).neighbours.before == "Plan Team"
    assert (await fp_at(page, "[data-truth=b]")).neighbours == Neighbours("M", "")


async def test_a_huge_block_holding_a_select_is_read_only_as_far_as_its_short_text(page: Page) -> None:
    """The walk that reads a select as its chosen option stops at a short text: a hostile page's block of 20,000
    nodes beside the element still gives the first words, as innerText's short text would."""
    await page.set_content(
        "<div><div>Plan <select><option>Pro</option></select>"
        + "<span>word </span>" * 20_000
        + "</div><button data-truth=a>Go</button></div>"
    )
    before = (await fp_at(page, "[data-truth=a]")).neighbours.before
    assert before.startswith("Plan Pro word word") and len(before) <= 60
