"""A recorded element found again for a replayed step (``find_target``): by its sure recorded locator in a few
short queries when nothing could tell another element from it, by the full scored search otherwise; either way
the right element or none while it is on the page, never another (a lookalike under another heading, a second
match, a disabled one); once it is gone, the closest element left may be healed to, but never at full confidence
unless nothing recorded tells the two apart."""

from __future__ import annotations

import time
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notebook_agent.browser import BrowserSession
from notebook_agent.browser.session.targets import Target, find_target, target_of
from notebook_agent.testing import locator_index
from tests.browser.fingerprint.test_fingerprint import Item, alike, items, render


async def _recorded(browser: BrowserSession, html: str, truth: str) -> dict[str, Any]:
    await browser.page.set_content(html)
    await browser.snapshot()
    handle = await browser.page.query_selector(f"[data-truth={truth}]")
    assert handle is not None
    index = await browser.index_of(handle, browser.page.main_frame)
    assert index is not None
    recorded = await target_of(browser, index)
    assert recorded is not None
    return recorded


async def _found(browser: BrowserSession, html: str, recorded: dict[str, Any]) -> tuple[str | None, str]:
    got, found = await _target(browser, html, recorded)
    return got, (found.how if got is not None else found.why_not)


async def _target(browser: BrowserSession, html: str, recorded: dict[str, Any]) -> tuple[str | None, Target]:
    await browser.page.set_content(html)
    await browser.snapshot()
    found = await find_target(browser, recorded)
    if found.index is None:
        return None, found
    element = (await browser.resolve(found.index))[0]
    return await element.get_attribute("data-truth"), found


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), elems=st.lists(items, min_size=1, max_size=5))
async def test_the_right_element_or_none_on_a_changed_page(
    browser: BrowserSession, data: st.DataObject, elems: list[Item]
) -> None:
    target = data.draw(st.integers(0, len(elems) - 1), label="target")
    order = data.draw(st.permutations(range(len(elems))), label="order")
    gone = data.draw(st.booleans(), label="target removed") and len(elems) > 1
    rename = data.draw(st.booleans(), label="rename ids")
    ids = {"a": "q7f3k2x9", "b": "w8e1r4t6", "main-action": "r2d2c3po", "class": "renamed"} if rename else {}
    others = [e for i, e in enumerate(elems) if i != target]
    recorded = await _recorded(browser, render(elems, list(range(len(elems))), {}, False), f"t{target}")
    shown = [i for i in order if not (gone and i == target)]
    got, found = await _target(browser, render(elems, shown, ids, False), recorded)
    how = found.how if got is not None else found.why_not
    if gone:  # healing: the closest element left may be taken, but never as sure unless nothing tells it apart
        other = elems[int(got[1:])] if got is not None else None
        assert other is None or found.confidence < 1.0 or alike(other, elems[target], ids=not rename), (got, how)
        return
    assert got in (None, f"t{target}"), (got, how)  # never another element
    if not any(alike(o, elems[target], ids=not rename) for o in others):
        assert got == f"t{target}", how


async def test_a_lookalike_under_another_heading_or_a_disabled_one_is_not_taken(browser: BrowserSession) -> None:
    card = "<article><h3>{}</h3><button data-truth={}>Add to cart</button></article>"
    recorded = await _recorded(browser, f"<main>{card.format('Teapot', 'teapot')}</main>", "teapot")
    assert recorded["locator"]["kind"] == "role"  # the one "Add to cart": its role and name were unique
    assert await _found(browser, f"<main>{card.format('Teapot', 'teapot')}</main>", recorded) == ("teapot", "locator")
    got, why = await _found(browser, f"<main>{card.format('Kettle', 'kettle')}</main>", recorded)
    assert got is None and "well enough" in why  # its heading differs: the sure locator alone would take it
    disabled = "<main><article><h3>Teapot</h3><button data-truth=teapot disabled>Add to cart</button></article></main>"
    got, why = await _found(browser, disabled, recorded)
    assert got is None and "disabled" in why
    two = f"<main>{card.format('Teapot', 'teapot')}{card.format('Teapot', 'twin')}</main>"
    got, why = await _found(browser, two, recorded)
    assert got is None and "equally well" in why


async def test_the_locator_read_gives_the_one_element_and_never_waits_for_none(browser: BrowserSession) -> None:
    """The sure-locator path's count and index are one round trip: one match gives its index, several give
    none, and none gives none at once (the chained read would wait its timeout for an element not there)."""
    await browser.page.set_content("<button>Save</button><button>Send</button><button>Send</button>")
    snapshot = await browser.snapshot()
    save = await locator_index(browser, browser.page.get_by_role("button", name="Save", exact=True))
    assert save is not None and snapshot.elements[save].text == "Save"
    assert await locator_index(browser, browser.page.get_by_role("button", name="Send", exact=True)) is None
    t0 = time.perf_counter()
    assert await locator_index(browser, browser.page.get_by_role("button", name="Gone", exact=True)) is None
    assert time.perf_counter() - t0 < 0.9
