"""A secret spelled another way is still the secret: split by zero-width characters, wrapped in bidi controls,
written in full-width or other compatibility look-alikes, in another case, spaced out or cut in halves, it
does not reach the model's state message, the answer, the typed output, the run file or the map CSV.

A generator writes the spellings; the run is real (Chromium on a local page that shows the spelling, a scripted
model that writes it into its answer)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from notebook_agent.agent import CaseInsensitive, PageAgent
from notebook_agent.agent.prompt.agent_output import agent_output
from notebook_agent.agent.safety.secrets import Redactor, SecretVault
from notebook_agent.browser import BrowserSession
from notebook_agent.core.model import Context
from notebook_agent.core.text.lookalike import key, loose
from notebook_agent.llm.scripted import Response, ScriptedModel
from tests.agent.test_page_agent import state
from tests.browser.conftest import Servers

SECRET = "Hunter2-horse"
EMAIL = "ada.lovelace@example.org"

INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u200f", "\u202a", "\u202b"]
INVISIBLE += ["\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u034f", "\ufe0f", "\U000e0041"]


def lookalikes(c: str) -> list[str]:
    """Characters NFKC makes into ``c``: its full-width form, and a mathematical letter or digit."""
    out = [c]
    if "!" <= c <= "~":
        out.append(chr(ord(c) + 0xFEE0))
    if c.isascii() and c.isupper():
        out.append(chr(0x1D400 + ord(c) - ord("A")))  # MATHEMATICAL BOLD CAPITAL
    if c.isascii() and c.islower():
        out.append(chr(0x1D41A + ord(c) - ord("a")))
    if c.isdigit():
        out.append(chr(0x1D7CE + int(c)))  # MATHEMATICAL BOLD DIGIT
    return out


#: White space a copy may be spaced out with (a page's halves in two elements are read with one between).
SPACES = [" ", " ", "\u00a0", "\t", "\n", "\u2009", "\u3000"]


@st.composite
def spelled(draw: st.DrawFn, value: str, *, spaced: bool = True) -> str:
    """``value`` with look-alike characters, another case, and invisible characters and (``spaced``) white space
    inserted at random places."""
    out = []
    for c in value:
        if c.isalpha() and draw(st.booleans()):
            c = c.swapcase()
        out.append(draw(st.sampled_from(lookalikes(c))))
        out.extend(draw(st.lists(st.sampled_from(INVISIBLE + SPACES if spaced else INVISIBLE), max_size=2)))
    text = "".join(out)
    assert key(text) == key(value)  # it reads as the value
    return text


def holds(text: str, value: str) -> bool:
    return key(value) in loose(text)


def redactor(**secrets: str) -> Redactor:
    return Redactor(SecretVault(secrets, default_domains=()), lambda args: None)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_no_spelling_of_a_secret_passes_redaction(data: st.DataObject) -> None:
    r = redactor(pw=SECRET, email=CaseInsensitive(EMAIL))
    pw = data.draw(spelled(SECRET))
    mail = data.draw(spelled(EMAIL))
    around = data.draw(st.text(max_size=8))
    text = f"{around}the password is {pw}{around} and mail {mail}."
    clean = r.scrub_text(text)
    assert not holds(clean, SECRET) and not holds(clean, EMAIL), clean
    assert "<secret>pw</secret>" in clean and "<secret>email</secret>" in clean
    assert r.vault.redact(text) == clean  # the vault's own redaction is the same match
    r.hidden.add("typed-Into-A-Password-Field")
    typed = data.draw(spelled("typed-Into-A-Password-Field"))
    assert not holds(r.scrub_text(f"x{typed}y"), "typed-Into-A-Password-Field")


def test_text_without_the_value_is_kept_as_it_is() -> None:
    r = redactor(pw=SECRET)
    for text in ["hunter2-hors", "Hunter2\u200b", "Ｈｕｎｔｅｒ", "naïve café ﬁle", "\u202eevil", "Hunter2 - hose"]:
        assert r.scrub_text(text) == text  # part of a secret, or another text, is not it


class Found(BaseModel):
    value: str


def spelling_model(spelling: str, seen: list[str]) -> Any:
    def factory(row: dict[str, Any]) -> ScriptedModel:
        def answer(ctx: Context) -> Response:
            seen.append(state(ctx))
            return agent_output("done", {"text": f"It says {spelling}", "success": True, "data": {"value": spelling}})

        return ScriptedModel([answer, answer, answer])

    return factory


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
async def test_no_channel_holds_a_spelling_of_the_secret(
    shared_browser: BrowserSession, servers: Servers, tmp_path: Path, data: st.DataObject
) -> None:
    spelling = data.draw(spelled(SECRET))
    seen: list[str] = []
    runs = tmp_path / f"runs-{len(list(tmp_path.iterdir()))}"
    agent = PageAgent(
        browser=shared_browser,
        model=ScriptedModel(),
        screenshots=False,
        secrets={servers.main: {"pw": SECRET}},
        output=Found,
        runs_dir=str(runs),
        max_failures=1,
    )
    result = await agent.map(
        "Read the page {n}",
        [{"n": 1}],
        start_url=servers.url("echo.html") + "?t=" + quote(spelling, safe=""),
        model_factory=spelling_model(spelling, seen),
    )
    assert seen, result.rows[0].error
    assert "You said" in seen[0]  # the page's text reached the state message ...
    for text in seen:
        assert not holds(text, SECRET), text  # ... without the value
    row = result.results[0]
    assert row is not None
    assert not holds(json.dumps([row.text, row.error, row.output and Found.model_validate(row.output).value]), SECRET)
    assert not holds(json.dumps(result.records(), default=str, ensure_ascii=False), SECRET)
    csv_file = runs / "map.csv"
    result.to_csv(csv_file)
    written = "".join(p.read_text(encoding="utf-8", errors="replace") for p in runs.rglob("*") if p.is_file())
    assert list(runs.rglob("*.jsonl")) and not holds(written, SECRET)
