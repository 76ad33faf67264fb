"""A learned call as plain data: what is sent for a row, and where each answer field sits in what comes back.

:class:`LearnedCall` is one or more requests (:class:`CallStep`), each a template over the row's slots (``{product:q}``,
as the recipe's steps are, :mod:`..slots`) and over values an earlier request's answer gave (``{_v1:u}``: the id a
product page looked up first, the cursor of the next page). The last answer holds the recipe's answer fields
(:class:`AnswerField`): a JSON path, each part a key, an index, or the item of a list whose field equals a row's
value (``{"where": "name", "is": "{product}"}``), and the JSON type the recording found there. A per-visit token
(:class:`Token`) is read from its page for each row.

A recipe file is input, so :meth:`LearnedCall.check` refuses, with a sentence, a call that names another origin than
the recording's pages, a path that leaves the origin, a header that holds a credential, and any secret or redacted
value: none of these is ever in a template. Filling (:meth:`LearnedCall.request`) and reading (:func:`pick`,
:meth:`AnswerField.read`) never guess: a response of another shape, a missing field or another type is a
:class:`CallMiss` naming the field, so the row falls back to the page and never takes a wrong value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urlencode, urlsplit

from pydantic import BaseModel, ConfigDict, Field

from ....browser.door.direct import DirectRequest, origin_of
from ....browser.page.call_log import CREDENTIAL, NEVER_KEPT, NOT_KEPT
from ..slots import RecipeError, fill, fill_all

PathPart = str | int | dict[str, str]
"""A key, an index, or ``{"where": FIELD, "is": TEMPLATE}``: the item of a list whose FIELD equals the filled value."""

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
#: What no template may hold: a secret's placeholder, a redacted value, a header value the log did not keep.
NEVER_IN_TEMPLATE = re.compile(r"<secret>|\[redacted|" + re.escape(NOT_KEPT))
#: A header a learned request may carry as recorded (any other ``x-`` header too, unless it holds a credential).
PLAIN_HEADERS = ("accept", "content-type", "x-requested-with")


class CallMiss(RecipeError):
    """A row's request could not give its answer (the message says which field, status or shape): the row goes
    by the page instead, so a map never raises it; it reaches a caller only of the request code itself."""


class Token(BaseModel):
    """A per-visit token (a CSRF token) the page read from its document: fetched from ``page`` for each row."""

    model_config = ConfigDict(extra="forbid")
    name: str
    """The header or field that carries it (``x-csrf-token``)."""
    where: Literal["header", "query", "form", "json"]
    page: str
    """The document's path and query (a template over the slots), on the call's origin."""


class CallStep(BaseModel):
    """One request: method, path and query as templates, the headers that matter, the body, and what its answer
    gives later requests (``binds``: ``{"_v1": path}``)."""

    model_config = ConfigDict(extra="forbid")
    method: str
    path: str
    query: list[tuple[str, str]] = Field(default_factory=list)
    headers: dict[str, str] = Field(default_factory=dict)
    body: dict[str, Any] | None = None
    """``{"json": tree}`` (strings templates; ``{"_slot": name}`` a row's value as a number), ``{"form": pairs}``
    or ``{"text": template}``."""
    binds: dict[str, list[PathPart]] = Field(default_factory=dict)

    def templates(self) -> list[Any]:
        """Every template string of the step (for the checks)."""
        body = self.body or {}
        return [
            self.path,
            [v for _, v in self.query],
            self.headers,
            body.get("json"),
            body.get("form"),
            body.get("text"),
        ]


class AnswerField(BaseModel):
    """Where one value the recorded run read (``{_1}`` of the answer) sits in the last answer."""

    model_config = ConfigDict(extra="forbid")
    path: list[PathPart]
    kind: Literal["number", "text"]
    """How the recipe's answer reads it (as the page's read did)."""
    json_type: Literal["number", "string"]
    """The JSON type the recording found there: another type in a row's answer is a miss, never converted."""
    written: str = ""
    """The value as the recorded page wrote it (``129.00``): a number is written the same way (decimals, commas)."""

    def read(self, data: object, values: Mapping[str, Any]) -> str:
        """This field in ``data``, written as the page wrote it, or a :class:`CallMiss`."""
        value = pick(data, self.path, values)
        if self.json_type == "number":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise CallMiss(f"{show_path(self.path)} is {_kind(value)}, where the recording had a number")
            return as_written(value, self.written) if self.kind == "number" else plain(value)
        if not isinstance(value, str):
            raise CallMiss(f"{show_path(self.path)} is {_kind(value)}, where the recording had text")
        return value


class LearnedCall(BaseModel):
    """The call behind the recipe's page (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")
    origin: str
    """``scheme://host:port``: the only place its requests go."""
    steps: list[CallStep]
    fields: dict[str, AnswerField]
    """By the answer's read names (``_1``, ``_2``: :class:`~..answer.Answer` ``reads``)."""
    token: Token | None = None
    effect: str = ""
    """What a person approved in the recording before this call was made (an order placed), or "" when nothing
    needed approving: such a call goes by request in a map only when :attr:`approved`."""
    approved: bool = False
    """The person approved the recipe's effect when it was made (``Recipe.from_run(..., approve_effects=True)``)."""
    sample: dict[str, Any] = Field(default_factory=dict)
    """The recorded row's values and the answer's values, shown with the call."""

    # -- the checks of a file ----------------------------------------------------------------------------------
    def check(self, origins: set[str], names: set[str], reads: int) -> None:
        """Refuse (:class:`RecipeError`) a call that could go elsewhere or carry what no recipe keeps; ``origins``:
        those of the recipe's recorded pages, ``names``: its slots, ``reads``: how many values its answer reads."""
        if origin_of(self.origin) != self.origin:
            raise RecipeError(
                f"The recipe's learned call has no valid origin ({self.origin!r}); make the recipe again."
            )
        if self.origin not in origins:
            raise RecipeError(
                f"The recipe's learned call goes to {self.origin}, which is not where its recorded pages are "
                f"({', '.join(sorted(origins)) or 'none'}): a recipe asks only the site it was recorded on. Make the "
                "recipe again from a run on that site."
            )
        if not self.steps:
            raise RecipeError("The recipe's learned call has no request.")
        if set(self.fields) != {f"_{i + 1}" for i in range(reads)}:
            raise RecipeError("The recipe's learned call does not give every value its answer reads.")
        known = set(names)
        for i, step in enumerate(self.steps):
            where = f"request {i + 1} of the learned call"
            if step.method.upper() not in METHODS:
                raise RecipeError(f"{where} has the method {step.method!r}; known: {', '.join(METHODS)}.")
            if not step.path.startswith("/") or step.path.startswith("//"):
                raise RecipeError(f"{where} has the path {step.path!r}: a path on the recorded origin starts with '/'.")
            for name in step.headers:
                low = name.lower()
                if low in NEVER_KEPT or (CREDENTIAL.search(low) and not (self.token and self.token.name == low)):
                    raise RecipeError(
                        f"{where} sends the header {name!r}: a recipe never keeps a cookie or credential (they come "
                        "from the browser's session when the row runs)."
                    )
            texts = json.dumps(step.templates(), ensure_ascii=False)
            if NEVER_IN_TEMPLATE.search(texts):
                raise RecipeError(f"{where} holds a secret or a redacted value: a recipe never keeps one.")
            try:
                fill_all(step.templates(), {**dict.fromkeys(known, "0")})
            except (RecipeError, ValueError) as exc:
                raise RecipeError(f"{where} does not fit the recipe's slots: {exc}") from None
            known |= set(step.binds)
        if self.token is not None:
            if not self.token.page.startswith("/") or self.token.page.startswith("//"):
                raise RecipeError(f"The learned call's token page {self.token.page!r} is not a path on its origin.")
            if NEVER_IN_TEMPLATE.search(self.token.page):
                raise RecipeError("The learned call's token page holds a secret or a redacted value.")

    # -- a row's request ---------------------------------------------------------------------------------------
    def request(self, step: CallStep, values: Mapping[str, Any], token: str | None = None) -> DirectRequest:
        """``step`` filled with ``values`` (the row's and earlier answers'), and ``token`` where it goes."""
        path = fill(step.path, values)
        query = [(k, fill(v, values)) for k, v in step.query]
        headers = {k: fill(v, values) for k, v in step.headers.items()}
        body: bytes | None = None
        token_name = self.token.name if self.token is not None else ""
        where = self.token.where if self.token is not None else ""
        if token is not None and where == "query":
            query = [(k, token if k == token_name else v) for k, v in query]
        if token is not None and where == "header":
            headers[token_name] = token
        shape = step.body or {}
        if "json" in shape:
            tree = _fill_json(shape["json"], values)
            if token is not None and where == "json" and isinstance(tree, dict):
                tree[token_name] = token
            body = json.dumps(tree, ensure_ascii=False).encode("utf-8", "surrogatepass")
        elif "form" in shape:
            pairs = [(str(k), fill(str(v), values)) for k, v in shape["form"]]
            if token is not None and where == "form":
                pairs = [(k, token if k == token_name else v) for k, v in pairs]
            body = urlencode(pairs).encode("utf-8", "surrogatepass")
        elif "text" in shape:
            body = fill(str(shape["text"]), values).encode("utf-8", "surrogatepass")
        url = self.origin + path + (("?" + urlencode(query)) if query else "")
        return DirectRequest(step.method.upper(), url, headers, body)

    def describe(self) -> str:
        """The requests as a person reads them: ``GET /api/search?q={product}`` (templates, never a value)."""
        lines = []
        for step in self.steps:
            query = "&".join(f"{k}={v}" for k, v in step.query)
            line = f"{step.method} {self.origin}{step.path}{'?' + query if query else ''}"
            if step.body:
                line += f" body {json.dumps(next(iter(step.body.values())), ensure_ascii=False)[:200]}"
            lines.append(line)
        return "\n".join(lines)


def _fill_json(node: object, values: Mapping[str, Any]) -> Any:
    if isinstance(node, dict) and set(node) == {"_slot"}:
        text = fill("{" + str(node["_slot"]) + "}", values)
        try:
            number = float(text)
        except ValueError:
            raise CallMiss(f"the row's {node['_slot']} ({text[:40]!r}) is not a number, as the request needs") from None
        return int(number) if number.is_integer() else number
    if isinstance(node, dict):
        return {k: _fill_json(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [_fill_json(v, values) for v in node]
    return fill(node, values) if isinstance(node, str) else node


def pick(data: object, path: list[PathPart], values: Mapping[str, Any]) -> Any:
    """The value at ``path`` in ``data`` (see :data:`PathPart`), or a :class:`CallMiss` saying where it stopped."""
    node = data
    for i, part in enumerate(path):
        here = show_path(path[:i]) or "the answer"
        if isinstance(part, dict):
            if not isinstance(node, list):
                raise CallMiss(f"{here} is {_kind(node)}, where the recording had a list")
            wanted = fill(part.get("is", ""), values)
            key = part.get("where", "")
            found = [item for item in node if isinstance(item, dict) and plain(item.get(key)) == wanted]
            if not found:
                raise CallMiss(f"{here} has no item whose {key} is {wanted[:60]!r}")
            node = found[0]
        elif isinstance(part, int):
            if not isinstance(node, list) or isinstance(node, str):
                raise CallMiss(f"{here} is {_kind(node)}, where the recording had a list")
            if part >= len(node):
                raise CallMiss(f"{here} has {len(node)} items, where the recording read item {part}")
            node = node[part]
        else:
            if not isinstance(node, dict):
                raise CallMiss(f"{here} is {_kind(node)}, where the recording had an object")
            if part not in node:
                raise CallMiss(f"the answer lacks {show_path(path[: i + 1])}")
            node = node[part]
    return node


def show_path(path: list[PathPart]) -> str:
    """``results[name={product}].price``: a path as a person reads it."""
    out = ""
    for part in path:
        if isinstance(part, dict):
            out += f"[{part.get('where')}={part.get('is')}]"
        elif isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def as_written(value: float, written: str) -> str:
    """``value`` written as the page wrote the recorded one: its decimals and thousands commas."""
    decimals = len(written.split(".", 1)[1]) if "." in written else 0
    text = f"{value:{',' if ',' in written else ''}.{decimals}f}"
    if float(text.replace(",", "")) != float(value):  # never rounded: the page's way would lose digits
        return plain(value) if "," not in written else f"{value:,}"
    return text


def plain(value: object) -> str:
    """A JSON scalar as text: whole floats without ``.0``, null as ""."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return "" if value is None else str(value)


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def url_origin(url: str) -> str:
    """The origin of a recorded page's URL ("" when it has none)."""
    return origin_of(url) if urlsplit(url).scheme in ("http", "https") else ""
