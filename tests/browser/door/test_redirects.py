"""A paused response read as a redirect hop: whatever DevTools sends (or a hostile server puts in its headers),
reading it never raises, and only a 3xx with a Location is a hop, resolved against the URL that answered."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from notebook_agent.testing import redirect_hop

PAGE: Any = object()

anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "responseStatusCode": st.integers(0, 999) | anything,
            "responseHeaders": st.lists(
                st.fixed_dictionaries(
                    {
                        "name": st.sampled_from(["Location", "location", "X"]) | anything,
                        "value": st.text(max_size=40) | anything,
                    }
                ),
                max_size=3,
            )
            | anything,
            "request": st.fixed_dictionaries({"url": st.text(max_size=40), "method": st.text(max_size=8)}) | anything,
            "resourceType": st.sampled_from(["Document", "Fetch", "XHR", "Ping", "Other"]) | anything,
            "frameId": st.sampled_from(["main", "child"]) | anything,
        },
    )
)
def test_any_paused_event_reads_without_raising(event: dict[str, Any]) -> None:
    hop = redirect_hop(PAGE, "main", event)
    status = event.get("responseStatusCode")
    if hop is not None:
        assert isinstance(status, int) and 300 <= status < 400
        assert hop.top == (hop.document and event.get("frameId") == "main")


def test_a_relative_location_is_resolved_against_the_url_that_answered() -> None:
    event = {
        "responseStatusCode": 307,
        "responseHeaders": [{"name": "Location", "value": "//b.example/collect?x=1"}],
        "request": {"url": "https://a.example/form", "method": "post", "hasPostData": True},
        "resourceType": "Document",
        "frameId": "main",
    }
    hop = redirect_hop(PAGE, "main", event)
    assert hop is not None
    assert (hop.url, hop.method, hop.has_body, hop.top) == ("https://b.example/collect?x=1", "POST", True, True)
    assert redirect_hop(PAGE, "main", {**event, "responseStatusCode": 200}) is None
    assert redirect_hop(PAGE, "main", {**event, "responseHeaders": []}) is None
