"""The structural rule of a live secret, by property: whatever a page makes of the value and however it sends
it, what leaves for a site outside the secret's own is an effect naming the secret; nothing about the value's
encoding is needed to see it. The browser runs of the same rule are in tests/agent/safety/test_session_door.py.
"""

from __future__ import annotations

import base64
import codecs

from hypothesis import given
from hypothesis import strategies as st

from notebook_agent.browser.door.egress import Outgoing
from notebook_agent.browser.door.live import LiveSecret, LiveSecrets
from notebook_agent.browser.door.route import classify_outgoing

HERE = "http://127.0.0.1:8000"
THERE = "http://localhost:9000"


def transforms(value: str, key: int) -> list[str]:
    raw = value.encode()
    return [
        raw.hex(),
        base64.b32encode(raw).decode().rstrip("="),
        value[::-1],
        bytes(b ^ key for b in raw).hex(),
        codecs.encode(value, "rot13"),
        value.upper(),
        *[value[i : i + 3] for i in range(0, len(value), 3)],
    ]


def session(value: str) -> LiveSecrets:
    live = LiveSecrets()
    live.seen(f"{THERE}/logo.png")  # a path of the other site fetched before the secret
    live.hold(lambda: [LiveSecret("pw", value, lambda url: url.startswith(HERE), "127.0.0.1")])
    return live


ROUTES = ("path", "query", "body", "websocket", "frame", "navigation", "popup")


def outgoing(route: str, data: str) -> tuple[Outgoing, dict[str, bool]]:
    if route == "query":
        return Outgoing("request", f"{THERE}/i.png?d={data}"), {}
    if route == "body":
        return Outgoing("request", f"{THERE}/p", "POST", {}, data.encode()), {}
    if route == "websocket":
        return Outgoing("websocket", f"ws://localhost:9000/{data}"), {}
    if route == "frame":
        return Outgoing("frame", "ws://localhost:9000/ws", body=data.encode()), {}
    if route in ("navigation", "popup"):
        return Outgoing("request", f"{THERE}/n/{data}"), {"top": route == "navigation", "popup": route == "popup"}
    return Outgoing("request", f"{THERE}/px/{data}.gif"), {}


@given(
    value=st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=6, max_size=24),
    key=st.integers(1, 255),
    route=st.sampled_from(ROUTES),
    pick=st.integers(0, 100),
)
def test_data_of_any_encoding_to_another_site_is_judged_naming_the_secret(
    value: str, key: int, route: str, pick: int
) -> None:
    forms = transforms(value, key)
    data = "".join(c for c in forms[pick % len(forms)] if c.isalnum()) or "x"
    sent, where = outgoing(route, data)
    live = session(value)
    effect = classify_outgoing(
        sent, HERE + "/login", live=live, top=where.get("top", False), popup=where.get("popup", False)
    )
    assert effect is not None and "'pw'" in effect.live, (route, data, effect)
    assert "'pw'" in effect.describe() and value not in effect.describe()


@given(value=st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=6, max_size=24))
def test_the_secrets_own_site_and_a_known_read_are_not_asked(value: str) -> None:
    live = session(value)
    assert classify_outgoing(Outgoing("request", f"{HERE}/p", "POST", {}, b"x"), HERE, live=live) is None
    assert classify_outgoing(Outgoing("request", f"{THERE}/logo.png"), HERE, live=live) is None


def test_nothing_is_live_after_the_session_closes_and_a_run_keeps_its_typed_text() -> None:
    typed: list[LiveSecret] = []
    live = LiveSecrets()
    source = lambda: list(typed)  # noqa: E731
    live.hold(source)
    assert not live.live
    typed.append(LiveSecret("typed text 1", "hunter2-horse", lambda url: url.startswith(HERE), "127.0.0.1"))
    assert live.live and live.running
    live.keep(source)  # the run ended: its secrets stay, no run is there
    assert live.live and not live.running
    assert live.kept_from(THERE) == [("typed text 1", "hunter2-horse")]
    assert classify_outgoing(Outgoing("request", f"{THERE}/x?d=1"), HERE, live=live) is not None
    live.clear()
    assert not live.live and classify_outgoing(Outgoing("request", f"{THERE}/x"), HERE, live=live) is None


def test_a_source_that_fails_keeps_what_it_said_last() -> None:
    state = {"fail": False}

    def source() -> list[LiveSecret]:
        if state["fail"]:
            raise RuntimeError("set changed size during iteration")
        return [LiveSecret("pw", "hunter2-horse", lambda url: False, "nowhere")]

    live = LiveSecrets()
    live.hold(source)
    assert live.live
    state["fail"] = True
    assert live.kept_from(THERE) == [("pw", "hunter2-horse")]


def test_a_site_approved_for_a_plain_read_is_asked_once_for_reads_not_for_data() -> None:
    live = session("hunter2-horse")
    read = Outgoing("request", f"{THERE}/fonts/a.woff")
    assert classify_outgoing(read, HERE, live=live) is not None
    live.reads_approved(f"{THERE}/fonts/a.woff")
    assert classify_outgoing(Outgoing("request", f"{THERE}/img/b.png"), HERE, live=live) is None
    assert classify_outgoing(Outgoing("request", f"{THERE}/p?d=1"), HERE, live=live) is not None
    assert classify_outgoing(Outgoing("request", "http://localhost:9001/x.png"), HERE, live=live) is not None
