"""The one rule every byte leaving the browser is judged by: where it goes, and whether it carries a secret.

Three places see what leaves a run's tabs: the context's route (route.py: every request Playwright can route,
navigations included), the tab's own DevTools interception (tab_door.py: what the route cannot see, such as a
beacon sent while the page unloads), and the WebSocket route (sockets.py: a socket's handshake and every frame
the page sends). Each of them describes what it holds as an :class:`Outgoing` and asks the same two questions
here, so a channel nobody listed is judged like the ones that were:

- :func:`leak`: does any part of it (the URL, the headers, the body, a frame) hold a secret's value, in an
  encoding a page would use (raw, URL-encoded, base64 at any alignment, JSON-escaped, HTML, or these nested;
  in any case, spaced out or split by invisible characters), and is its destination outside that secret's own
  sites? Then it never leaves, whatever the approval policy, and the refusal names the secret. Encodings
  nobody listed (hex, a key of the page's own) are held by the structural rule of a live secret instead
  (live.py): data to another site is judged, whatever it looks like.
- :func:`carries_data`: is it more than a plain read, so that reaching another site is an effect the approval
  policy judges (a body, a query string, a WebSocket)?

Which site a request is "from" is the tab's top document, not the frame that sends it: a form inside another
site's iframe submitted by Enter reaches a site the run did not choose, as a form of the page itself would.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal
from urllib.parse import unquote_plus, urlsplit

from ...core.text.lookalike import key

OutgoingKind = Literal["request", "websocket", "frame"]


@dataclass(frozen=True)
class Outgoing:
    """Something about to leave the browser: a request, a WebSocket's handshake, or a frame a page sends on one."""

    kind: OutgoingKind
    url: str
    method: str = "GET"
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""

    def parts(self) -> list[bytes]:
        """Every part a value could hide in: the URL, each header's value, the body."""
        return [self.url.encode("utf-8", "surrogatepass"), *(str(v).encode() for v in self.headers.values()), self.body]


SecretSites = Callable[[str], "list[tuple[str, str]]"]
"""``secrets(url)``: the (name, value) of each secret that may NOT go to ``url`` (it is outside its own sites)."""


def as_http(url: str) -> str:
    """A WebSocket URL as the http(s) URL of the same site, so sites and domain patterns apply to it."""
    lower = url[:6].lower()
    if lower.startswith("wss://"):
        return "https://" + url[6:]
    if lower.startswith("ws://"):
        return "http://" + url[5:]
    return url


def carries_data(outgoing: Outgoing) -> bool:
    """More than a plain read: a WebSocket or a frame, a body, a method other than GET/HEAD/OPTIONS, or a query
    string (an image's ``?d=`` is data sent as surely as a POST's body)."""
    if outgoing.kind != "request" or outgoing.body:
        return True
    return outgoing.method.upper() not in ("GET", "HEAD", "OPTIONS") or bool(urlsplit(outgoing.url).query)


def leak(outgoing: Outgoing, secrets: SecretSites | None) -> str | None:
    """The name of a secret ``outgoing`` would carry to a site that is not its own, or None."""
    if secrets is None:
        return None
    kept = secrets(outgoing.url)
    if not kept:
        return None
    texts = list(_decodings(outgoing.parts()))
    folded: list[str] | None = None
    for name, value in kept:
        if any(needle in text for text in texts for needle in _needles(value)):
            return name
        needle = key(value)  # the one redaction rule: folded case, no spaces or invisible characters
        if len(needle) >= FOLD_FROM:  # in any case, spaced out, split by invisible characters
            folded = folded if folded is not None else [key(text) for text in texts]
            if any(needle in text for text in folded):
                return name
    return None


#: A value this long or longer is also found folded (any case, spaces and invisible characters removed); a
#: shorter one only as it is, since folded it would match too much ordinary text.
FOLD_FROM = 6


def _decodings(parts: Iterable[bytes]) -> Iterable[str]:
    """Each part as text, and as the text it decodes to when a page URL-encoded or JSON-escaped it (nested up
    to three times: a JSON string inside a form field inside a query). Base64 is matched on the needle's side
    (:func:`_needles`), since where a base64 run starts in the text is not known."""
    for raw in parts:
        if not raw:
            continue
        text = raw.decode("utf-8", "replace")
        seen = {text}
        frontier = [text]
        for _ in range(3):
            nxt = []
            for t in frontier:
                for decoded in (unquote_plus(t), _json_unescaped(t), _html_unescaped(t)):
                    if decoded not in seen:
                        seen.add(decoded)
                        nxt.append(decoded)
            frontier = nxt
        yield from seen


_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|[\"\\/bfnrt])")
_SIMPLE = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _json_unescaped(text: str) -> str:
    if "\\" not in text:
        return text

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        return chr(int(code[1:], 16)) if code[0] == "u" else _SIMPLE[code]

    return _ESCAPE.sub(one, text)


def _html_unescaped(text: str) -> str:
    if "&" not in text:
        return text
    import html

    return html.unescape(text)


@lru_cache(maxsize=256)
def _needles(value: str) -> tuple[str, ...]:
    """What ``value`` looks like in decoded text: itself, and its base64 (standard and URL-safe alphabets) at
    each of the three alignments it can start at inside a longer base64 run, without the characters that
    depend on its neighbours. Values too short for a stable base64 core are matched raw only."""
    found = {value}
    for data in dict.fromkeys(_byte_forms(value)):
        found.update(_base64_cores(data))
    return tuple(found)


def _byte_forms(value: str) -> list[bytes]:
    """UTF-8, and Latin-1 where it can be (``btoa`` encodes a string's code points as single bytes)."""
    forms = [value.encode("utf-8")]
    try:
        forms.append(value.encode("latin-1"))
    except UnicodeEncodeError:
        pass
    return forms


def _base64_cores(data: bytes) -> set[str]:
    found: set[str] = set()
    for shift in range(3):
        padded = b"\0" * shift + data
        encoded = base64.b64encode(padded).decode()
        # the characters of the first group mix in the padding; the last group may mix in what follows
        start = 4 if shift else 0
        end = (len(padded) // 3) * 4
        core = encoded[start:end]
        if len(core) >= 4:
            found.add(core)
            found.add(core.replace("+", "-").replace("/", "_"))
    return found


def frame_bytes(message: str | bytes) -> bytes:
    """A WebSocket frame as bytes."""
    return message.encode("utf-8", "surrogatepass") if isinstance(message, str) else bytes(message)


def describe_leak(name: str, outgoing: Outgoing) -> str:
    """Why it was refused, in words the model and the person read (the value itself never)."""
    what = {"request": "a request", "websocket": "a WebSocket", "frame": "a WebSocket message"}[outgoing.kind]
    parts = urlsplit(outgoing.url)
    return f"{what} to {parts.netloc} carried the secret '{name}', which may only go to its own sites"


#: WebRTC sends what no route or interception sees (UDP to peers and relays), so it is taken away in every
#: document of the session's context before the page's own scripts run, and launched browsers are also told
#: not to use UDP that bypasses a proxy (launch.py). So is ``SharedWorker``: a shared worker is a target of its
#: own, outside every tab, whose requests and sockets neither the context's route nor a tab's DevTools session
#: sees (a page's shared worker posted to another site and opened a socket there unasked).
NO_WEBRTC_SCRIPT = """(() => {
  for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCIceTransport',
                      'RTCSctpTransport', 'RTCDtlsTransport', 'RTCRtpSender', 'RTCRtpReceiver', 'SharedWorker']) {
    try { Object.defineProperty(globalThis, name, {value: undefined, writable: false, configurable: false}); }
    catch (e) {}
  }
})();"""
