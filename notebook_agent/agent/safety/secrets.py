"""Secrets the model can type without ever seeing them, and redaction of what was typed into sensitive fields.

``PageAgent(secrets={"github_password": "..."})`` (or scoped: ``{"https://github.com": {"github_password": ...}}``)
lets the model write ``<secret>github_password</secret>`` in ``input_text``; the real value is substituted only
when the action runs, only on a page whose URL matches the secret's domains, and it is replaced by its
placeholder in everything that is kept or shown afterwards (results, history, run files, the view). An unknown
or out-of-scope placeholder is an error the model reads, never typed literally.

Separately, text typed into a field the snapshot marks sensitive (password, one-time code, card number, token,
API key, secret, ...) is redacted after the fact, secrets or not.

Every value is found as a reader would see it (:mod:`notebook_agent.core.text.lookalike`): split by zero-width
characters, wrapped in bidi controls or spelled in compatibility look-alikes (full-width letters, ligatures)
it is still the value, and so it is in another case (``HUNTER2``) or spaced out (``h u n t e r 2``): a reader
knows the secret from either. (:class:`CaseInsensitive` is accepted and changes nothing: every secret is found
in any case.)
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ...browser.actions import ActionHost
from ...browser.door.egress import as_http
from ...browser.door.live import LiveSecret
from ...browser.urls import site
from ...core.errors import InputError
from ...core.messages import AssistantMessage, TextContent
from ...core.text import map_strings
from ...core.text.lookalike import CaseInsensitive as CaseInsensitive  # the public name lives here too
from ...core.text.lookalike import replace_values
from ...core.tools import Tool, ToolCallContext, ToolResult, WrappedTool, get_argument, replace_argument
from .domains import DomainPattern, matches_any, parse_domains

PLACEHOLDER = re.compile(r"<secret>\s*([^<>\s]+)\s*</secret>")
REDACTED = "[redacted]"


def placeholder(name: str) -> str:
    return f"<secret>{name}</secret>"


class SecretError(InputError):
    """A placeholder that cannot be filled; the message is for the model."""


@dataclass(frozen=True)
class Secret:
    name: str
    value: str
    domains: tuple[DomainPattern, ...]  # empty: wherever the agent may go (its allowed domains)


class SecretVault:
    """The secrets of one agent. ``fill`` substitutes placeholders for a page URL; ``redact`` hides values."""

    def __init__(self, secrets: Mapping[str, Any], default_domains: Sequence[DomainPattern] = ()) -> None:
        self._secrets: dict[str, Secret] = {}
        for key, value in secrets.items():
            if isinstance(value, Mapping):  # {"https://github.com": {"name": "value"}}
                scope = parse_domains([key])
                for name, inner in value.items():
                    self._add(name, inner, scope)
            else:
                self._add(key, value, tuple(default_domains))

    def _add(self, name: object, value: object, domains: tuple[DomainPattern, ...]) -> None:
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
            raise ValueError(f"secret name {name!r}: use letters, digits, '_', '.' or '-'")
        if not isinstance(value, str) or not value:
            raise ValueError(f"secret {name!r}: the value must be a non-empty string")
        if name in self._secrets:
            raise ValueError(f"secret {name!r} is given twice")
        self._secrets[name] = Secret(name, str(value), domains)

    def __bool__(self) -> bool:
        return bool(self._secrets)

    @property
    def names(self) -> list[str]:
        return list(self._secrets)

    @property
    def unscoped(self) -> list[str]:
        return [s.name for s in self._secrets.values() if not s.domains]

    def describe(self) -> str:
        """One line per secret for the system prompt: names and where they may be used, never values."""
        lines = []
        for s in self._secrets.values():
            where = ", ".join(d.text for d in s.domains) if s.domains else "the allowed domains"
            lines.append(f"- {placeholder(s.name)} (only on {where})")
        return "\n".join(lines)

    def prompt_note(self) -> str:
        """What the system prompt says about the secrets ("" without any): how to type one, and each one's name
        and where it may be used."""
        if not self:
            return ""
        return (
            "Secrets: to type one, put its placeholder in input_text exactly as written; the value is filled in "
            f"for you and you never see it.\n{self.describe()}\n"
        )

    def check_settings(
        self, *, allowed_domains: Sequence[DomainPattern], javascript: bool, allow_javascript: bool, trace: bool
    ) -> None:
        """Refuse an agent's settings that would let these secrets out: a secret usable on any site, the page's
        own JavaScript beside them (it could read them out of the page), a trace (its pictures are not masked).
        A ValueError says which and what to give instead."""
        if self.unscoped and not allowed_domains:
            raise ValueError(
                f"Secrets {', '.join(self.unscoped)} would be usable on any site: give allowed_domains=[...] "
                'or scope them, e.g. secrets={"https://github.com": {"github_password": ...}}.'
            )
        if self and javascript and not allow_javascript:
            raise ValueError(
                "execute_javascript could read secrets out of the page, so it is off while secrets are set; "
                "pass allow_javascript_with_secrets=True if you really want both."
            )
        if trace and self:
            raise ValueError(
                "A trace keeps screenshots and DOM snapshots that no mask covers, so it could hold the secrets' "
                "values: trace=True cannot be used with secrets."
            )

    def fill(self, text: str, url: str) -> str:
        """``text`` with every placeholder replaced by its value, if each is known and allowed on ``url``."""

        def one(match: re.Match[str]) -> str:
            name = match.group(1)
            secret = self._secrets.get(name)
            if secret is None:
                known = ", ".join(self._secrets) or "none"
                raise SecretError(f"there is no secret named '{name}' (known secrets: {known}).")
            if secret.domains and not matches_any(url, secret.domains):
                raise SecretError(
                    f"secret '{name}' may only be typed on {', '.join(d.text for d in secret.domains)}, "
                    f"not on this page ({_origin(url)})."
                )
            return secret.value

        return PLACEHOLDER.sub(one, text)

    def redact(self, text: str) -> str:
        """``text`` with every secret value, in any spelling that reads the same, replaced by its placeholder
        (longest values first)."""
        return replace_values(text, self.matches(lambda s: placeholder(s.name)))

    def matches(self, replacement: Callable[[Secret], str]) -> list[tuple[str, str]]:
        """``(value, replacement)`` for each secret, as :func:`~notebook_agent.core.text.lookalike.replace_values`
        takes them."""
        return [(s.value, replacement(s)) for s in self._secrets.values()]

    def values(self) -> list[str]:
        """The values (the screenshot mask paints them over)."""
        return [s.value for s in self._secrets.values()]

    def secrets(self) -> list[Secret]:
        return list(self._secrets.values())

    def kept_from(self, url: str) -> list[tuple[str, str]]:
        """The (name, value) of each secret that may not go to ``url``: ``url`` is not one of its own sites
        (its scope, or the allowed domains for a flat secret). The browser's door asks this for every request,
        WebSocket and frame (browser/door/egress.py), under every approval policy."""
        target = as_http(url)
        return [(s.name, s.value) for s in self._secrets.values() if s.domains and not matches_any(target, s.domains)]


def _within(domains: tuple[DomainPattern, ...]) -> Callable[[str], bool]:
    return lambda url: bool(domains) and matches_any(url, domains)


def _home_or(own: tuple[str, int] | None, domains: tuple[DomainPattern, ...]) -> Callable[[str], bool]:
    """The site text was typed on, and the allowed domains."""
    allowed = _within(domains)
    return lambda url: (own is not None and site(url) == own) or allowed(url)


def _where(domains: tuple[DomainPattern, ...]) -> str:
    return ", ".join(d.text for d in domains) or "nowhere"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else url[:60]


class SecretInputText(WrappedTool):
    """``input_text`` that fills ``<secret>NAME</secret>`` placeholders at execution time, for the current
    page only, and hides the values again in its result. It wraps any ``input_text`` (the built-in, or a custom
    one with pydantic or JSON-Schema parameters) and is otherwise that tool (:class:`WrappedTool`: its risk,
    schema and everything else are the wrapped tool's)."""

    def __init__(self, inner: Tool, vault: SecretVault, browser: ActionHost) -> None:
        super().__init__(inner)
        self.vault = vault
        self.browser = browser

    async def execute(self, args: Any, ctx: ToolCallContext) -> ToolResult | str:
        text = get_argument(args, "text")
        if isinstance(text, str) and PLACEHOLDER.search(text):
            page = await ctx.signal.race(self.browser.ensure_page())
            try:
                filled = self.vault.fill(text, page.url)
            except SecretError as exc:
                return ToolResult.text(f"Error: {exc}", is_error=True)
            args = replace_argument(args, "text", filled)
        result = await self.inner.execute(args, ctx)
        if isinstance(result, str):
            return self.vault.redact(result)
        return redact_result(result, self.vault)


def redact_result(result: ToolResult, vault: SecretVault) -> ToolResult:
    content = [
        TextContent(text=vault.redact(part.text)) if isinstance(part, TextContent) else part for part in result.content
    ]
    return dataclasses.replace(result, content=content)


class Redactor:
    """Keeps one run's secrets and sensitive typed text out of everything kept or shown: step arguments and
    results, page text, the model's raw output. ``target(args)`` describes the element an action names."""

    def __init__(
        self, vault: SecretVault, target: Callable[[Mapping[str, Any]], dict[str, Any] | None], request: str = ""
    ) -> None:
        self.vault = vault
        self.target = target
        self.request = request
        """The user's own request: text it spells out is theirs to show, not a secret to hide (see ``given``)."""
        self.hidden: set[str] = set()
        """Text typed into sensitive fields, replaced wherever it appears."""
        self.typed_on: dict[str, str] = {}
        """The page each hidden text was typed on: its own site (see :meth:`live`)."""

    def given(self, text: str) -> bool:
        """Whether the user's request spells out ``text`` as a word of its own ("type the password "Q3h""): then
        typing it into a password field hides nothing. Hidden, it was cut out of the request the model reads
        ("type the password "[redacted]"" once the first field was filled), so the model could not type it into
        the second field. A short value inside a longer word ("pass" in "password") is not given."""
        value = text.strip()
        return bool(value) and re.search(rf"(?<!\w){re.escape(value)}(?!\w)", self.request) is not None

    def public_args(
        self, action: str, args: Mapping[str, Any], *, partial: bool = False, url: str = ""
    ) -> dict[str, Any]:
        """Arguments as they may be kept and shown: secret values become their placeholders, and text typed
        into a sensitive field becomes ``[redacted: N characters]`` (remembered, so it is hidden everywhere).
        ``partial``: arguments still being written (a live preview): hidden the same way, but not remembered,
        since half a placeholder is not a typed secret. ``url``: the page it is typed on (the typed text's own
        site, see :meth:`live`)."""
        out = dict(args)
        text = out.get("text")
        if action == "input_text" and isinstance(text, str) and not PLACEHOLDER.search(text):
            target = self.target(out)
            sensitive = target is not None and target.get("sensitive")
            fresh = sensitive and text.strip() and text not in self.vault.values() and not self.given(text)
            if fresh and not partial:
                self.hidden.add(text)
                self.typed_on.setdefault(text, url)
            if text in self.hidden or (fresh and partial):
                out["text"] = f"[redacted: {len(text)} characters]"
        return {k: map_strings(v, self.scrub_text) for k, v in out.items()}  # nested values too (an answer's data)

    def live(self, allowed: Sequence[DomainPattern]) -> list[LiveSecret]:
        """The run's secrets as the browser's door holds them for the session's life (browser/door/live.py):
        each named secret with its scope (a flat one: the ``allowed`` domains), each text typed into a sensitive
        field with the site it was typed on and the ``allowed`` domains. Read again each time it is asked."""
        out = [
            LiveSecret(s.name, s.value, _within(s.domains or tuple(allowed)), _where(s.domains or tuple(allowed)))
            for s in self.vault.secrets()
        ]
        typed, hidden = list(self.typed_on), frozenset(self.hidden)  # copies: the browser's thread reads this
        for n, text in enumerate([t for t in typed if t in hidden], 1):  # in the order typed
            own = site(as_http(self.typed_on.get(text, "")))
            where = ", ".join([own[0] if own is not None else "nowhere", *(d.text for d in allowed)])
            out.append(LiveSecret(f"typed text {n}", text, _home_or(own, tuple(allowed)), where))
        return out

    def scrub_text(self, text: str) -> str:
        """``text`` with secret values replaced by placeholders and hidden typed text by ``[redacted]``, each
        found in any spelling that reads the same (the one place every redaction of a run matches)."""
        if not (self.vault or self.hidden):
            return text
        hidden = [(literal, REDACTED) for literal in self.hidden]
        return replace_values(text, [*self.vault.matches(lambda s: placeholder(s.name)), *hidden])

    def scrub_message(self, message: AssistantMessage | None) -> AssistantMessage | None:
        """The model's raw output as kept for the inspector, run files and replay, with hidden text removed."""
        if message is None or not (self.hidden or self.vault):
            return message
        raw = message.model_dump_json()
        values = [*self.vault.matches(lambda s: REDACTED), *((v, REDACTED) for v in self.hidden)]
        # the values as JSON spells them (a quote or backslash in a value is escaped in the dump), then every
        # decoded string of the message
        escaped = [(json.dumps(v, ensure_ascii=False)[1:-1], r) for v, r in values]
        clean = replace_values(raw, escaped)
        data = map_strings(json.loads(clean), lambda text: replace_values(text, values))
        if clean == raw and data == json.loads(raw):
            return message
        return AssistantMessage.model_validate(data)
