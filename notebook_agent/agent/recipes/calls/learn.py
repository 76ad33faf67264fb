"""Finding the call behind a recorded page: :func:`learn_call`.

The recorded run kept the page's own fetch and XHR calls with their JSON answers (``PageStep.calls``). The call
behind the answer is the latest one whose answer holds every value the recipe's answer reads off the page
(:class:`~..answer.Answer` ``reads``: a number by value, text whole) and whose request carries the row's values
(each parameter in the URL's path or query or in the body, as written, URL-encoded or in lower case). A value of its
request that an earlier call's answer gave (an id looked up first, a cursor) becomes a value that earlier request
gives for each row, so the id is looked up again rather than copied. Where a value sits in a list, the item is
chosen by the field that holds the row's value when there is one (``results[name={product}]``), else by its place.

No call is learned, and :func:`learn_call` says why in one sentence, when the run kept no calls, when no answer held
the values, when no request carried the parameters, or when the request carries what a recipe never keeps: a
credential the page's script adds (an ``Authorization`` header), a secret or redacted value. A per-visit token
(``X-CSRF-Token``, a ``csrf`` field) is read from the page that asked, per row, when that page is on the origin.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ...runs.result import PageAgentResult
from ..answer import Answer
from ..slots import escape, templated, templated_all
from .template import CREDENTIAL as CREDENTIAL_HEADER
from .template import (
    NEVER_IN_TEMPLATE,
    PLAIN_HEADERS,
    AnswerField,
    CallStep,
    LearnedCall,
    PathPart,
    Token,
    url_origin,
)

#: How a parameter may be written in a URL's path, a decoded query or body value, a raw body.
PATH_CODES = ("u", "q", "", "lu", "lq", "l")
VALUE_CODES = ("", "l")
#: A field or header that carries a per-visit token.
TOKEN = re.compile(r"csrf|xsrf|authenticity|nonce|^_?token$", re.I)
#: A key whose value a later request takes from an earlier answer (an id, a cursor): bound even when short.
LINK_KEY = re.compile(r"id$|cursor|next|slug|key|ref|token|page", re.I)

Call = dict[str, Any]


def learn_call(
    run: PageAgentResult, params: Mapping[str, str], answer: Answer, approve: bool = False
) -> tuple[LearnedCall | None, str]:
    """The call behind the recipe's answer, or None and why not (see the module docstring)."""
    calls = [(s.index, c) for s in run.steps for c in s.calls if isinstance(c, dict)]
    if not calls:
        return (
            None,
            "the recording kept no fetch or XHR call of the page (it asked none, or was recorded before runs "
            "kept them)",
        )
    if not answer.reads:
        return None, "the recipe's answer reads nothing off the page, so no call is needed for it"
    answers = [(i, c) for i, c in calls if c.get("json") is not None and 200 <= int(c.get("status") or 0) < 300]
    if not answers:
        kinds = sorted({str(c.get("type") or "no content type") for _, c in calls})
        return None, f"the page's calls answered no JSON ({', '.join(kinds)[:80]})"
    why = "no call's answer held the values the recipe reads off the page"
    for at in range(len(answers) - 1, -1, -1):
        index, call = answers[at]
        fields = _fields(call["json"], answer, params)
        if fields is None:
            continue
        learned, why = _template(call, answers[:at], params, fields)
        if learned is None:
            continue
        learned.effect = _effect(run, index, call)
        learned.approved = approve and bool(learned.effect)
        learned.sample = {"row": dict(params), "answer": {f"_{k + 1}": r.recorded for k, r in enumerate(answer.reads)}}
        return learned, ""
    return None, why


# -- where the answer's values sit -------------------------------------------------------------------------------
def leaves(node: object, path: tuple[PathPart, ...] = ()) -> Iterator[tuple[tuple[PathPart, ...], Any]]:
    """Every scalar of a JSON value with its path."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, (*path, str(key)))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from leaves(value, (*path, i))
    else:
        yield path, node


def _matches(value: object, recorded: str, kind: str) -> str | None:
    """The JSON type under which ``value`` is the recorded one, or None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        try:
            same = float(recorded.replace(",", "")) == float(value)
        except ValueError:
            same = False
        return "number" if same and (kind == "number" or recorded == str(value)) else None
    if isinstance(value, str):
        return "string" if value.strip() == recorded.strip() and value.strip() else None
    return None


def _fields(data: object, answer: Answer, params: Mapping[str, str]) -> dict[str, AnswerField] | None:
    fields: dict[str, AnswerField] = {}
    for k, read in enumerate(answer.reads):
        found = [(p, t) for p, v in leaves(data) if (t := _matches(v, read.recorded, read.kind)) is not None]
        if not found:
            return None
        paths = [(_selected(data, p, params), t) for p, t in found]
        path, json_type = min(paths, key=lambda pt: (not any(isinstance(x, dict) for x in pt[0]), len(pt[0])))
        kind = "number" if read.kind == "number" else "text"
        fields[f"_{k + 1}"] = AnswerField(path=path, kind=kind, json_type=json_type, written=read.recorded)
    return fields


def _selected(data: object, path: tuple[PathPart, ...], params: Mapping[str, str]) -> list[PathPart]:
    """``path`` with each list index replaced by the item whose field holds a row's value, where one does."""
    out: list[PathPart] = []
    node = data
    for part in path:
        if isinstance(part, int) and isinstance(node, list) and isinstance(node[part], dict):
            chosen: PathPart = part
            for key, value in node[part].items():
                for name, given in params.items():
                    if isinstance(value, str) and value == given:
                        chosen = {"where": str(key), "is": "{" + name + "}"}
                    elif isinstance(value, str) and value == given.lower() and chosen == part:
                        chosen = {"where": str(key), "is": "{" + name + ":l}"}
                if isinstance(chosen, dict):
                    break
            out.append(chosen)
        else:
            out.append(part)
        node = node[part] if isinstance(node, (dict, list)) else None  # type: ignore[index]
    return out


# -- the request ---------------------------------------------------------------------------------------------------
def _template(
    call: Call, earlier: list[tuple[int, Call]], params: Mapping[str, str], fields: dict[str, AnswerField]
) -> tuple[LearnedCall | None, str]:
    origin = url_origin(str(call.get("url") or ""))
    if not origin:
        return None, f"the call went to {str(call.get('url'))[:80]!r}, which is not an http(s) address"
    step, found, why = _step(call, params)
    if step is None:
        return None, why
    steps = [step]
    links = _links(step, earlier, origin, params)
    if links is not None:
        first, name, value = links
        first_step, first_found, _ = _step(first[1], params)
        if first_step is not None:
            _bind(step, name, value)
            first_step.binds[name] = list(first[2])
            steps = [first_step, step]
            found |= first_found
    missing = [n for n in params if n not in found]
    if missing:
        return None, (
            f"no call's request carried {', '.join('{' + n + '}' for n in missing)} (the page's calls do not depend "
            "on it as recorded)"
        )
    token, why = _token(call, params, origin)
    if why:
        return None, why
    return LearnedCall(origin=origin, steps=steps, fields=fields, token=token), ""


def _step(call: Call, params: Mapping[str, str]) -> tuple[CallStep | None, set[str], str]:
    """One request as a template over ``params``: (step, the parameters it carries, why not)."""
    parts = urlsplit(str(call.get("url") or ""))
    path, found = templated(parts.path or "/", params, PATH_CODES)
    query = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        template, names = templated(value, params, VALUE_CODES)
        query.append((key, template))
        found.extend(names)
    headers: dict[str, str] = {}
    for name, value in dict(call.get("headers") or {}).items():
        low = str(name).lower()
        if TOKEN.search(low):
            continue  # a per-visit token: read per row (_token)
        if CREDENTIAL_HEADER.search(low):
            return (
                None,
                set(),
                (
                    f"the call sends a {name} header, a credential the page's script adds; a recipe never keeps one, "
                    "so the recipe drives the page"
                ),
            )
        if low in PLAIN_HEADERS or (low.startswith("x-") and low != "x-requested-with"):
            headers[low] = escape(str(value))
    body: dict[str, Any] | None = None
    raw = str(call.get("body") or "")
    kind = str(headers.get("content-type") or "")
    if raw:
        if "json" in kind:
            try:
                tree = json.loads(raw)
            except ValueError:
                tree = None
            if tree is not None:
                filled, names = _json_template(tree, params)
                body = {"json": filled}
                found.extend(names)
        if body is None and "x-www-form-urlencoded" in kind:
            pairs = []
            for key, value in parse_qsl(raw, keep_blank_values=True):
                template, names = templated(value, params, VALUE_CODES)
                pairs.append([key, template])
                found.extend(names)
            body = {"form": pairs}
        if body is None:
            template, names = templated(raw, params, PATH_CODES)
            body = {"text": template}
            found.extend(names)
    step = CallStep(method=str(call.get("method") or "GET").upper(), path=path, query=query, headers=headers, body=body)
    if NEVER_IN_TEMPLATE.search(json.dumps(step.templates(), ensure_ascii=False)):
        return None, set(), "the call carries a secret or redacted value, which a recipe never keeps"
    return step, set(found), ""


def _json_template(tree: object, params: Mapping[str, str]) -> tuple[Any, list[str]]:
    """A JSON body with each parameter's value made its slot: text as a template, a number as ``{"_slot": n}``."""
    names: list[str] = []

    def walk(node: object) -> Any:
        if isinstance(node, str):
            template, found = templated(node, params, VALUE_CODES)
            names.extend(found)
            return template
        if isinstance(node, bool) or node is None:
            return node
        if isinstance(node, (int, float)):
            for name, given in params.items():
                try:
                    if float(given) == float(node):
                        names.append(name)
                        return {"_slot": name}
                except ValueError:
                    continue
            return node
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        return [walk(v) for v in node] if isinstance(node, list) else node

    return walk(tree), names


def _links(
    step: CallStep, earlier: list[tuple[int, Call]], origin: str, params: Mapping[str, str]
) -> tuple[tuple[int, Call, tuple[PathPart, ...]], str, str] | None:
    """A literal value of ``step``'s request that an earlier answer (of a request carrying a parameter) gave: the
    id a product page looked up first, a cursor. ``(that call and the value's path, a name, the value)``."""
    literals = [p for p in step.path.split("/") if p and "{" not in p]
    literals += [v for _, v in step.query if v and "{" not in v]
    form = (step.body or {}).get("form") or []
    literals += [str(v) for _, v in form if v and "{" not in str(v)]
    tree = (step.body or {}).get("json")
    literals += [str(v) for _, v in leaves(tree) if isinstance(v, (str, int)) and not isinstance(v, bool)]
    for index, call in reversed(earlier):
        if url_origin(str(call.get("url") or "")) != origin:
            continue
        carried = _step(call, params)[1]
        if not carried:
            continue
        for path, value in leaves(call.get("json")):
            if isinstance(value, bool) or value is None or not isinstance(value, (str, int, float)):
                continue
            text = str(value)
            key = next((str(p) for p in reversed(path) if isinstance(p, str)), "")
            if text in literals and (len(text) >= 3 or LINK_KEY.search(key)):
                return (index, call, tuple(_selected(call.get("json"), path, params))), "_v1", text
    return None


def _bind(step: CallStep, name: str, value: str) -> None:
    """Make ``value`` (a literal of ``step``) the slot ``name`` wherever it stands whole."""
    given = {name: value}
    step.path = "/".join(("{" + name + ":u}" if part == value else part) for part in step.path.split("/"))
    step.query = [(k, "{" + name + "}" if v == value else v) for k, v in step.query]
    if step.body and "form" in step.body:
        step.body["form"] = [[k, "{" + name + "}" if v == value else v] for k, v in step.body["form"]]
    if step.body and "json" in step.body:
        step.body["json"], _ = templated_all(step.body["json"], given, ("",))


def _token(call: Call, params: Mapping[str, str], origin: str) -> tuple[Token | None, str]:
    """The call's per-visit token and where it is read from, or why the recipe stays on the page."""
    where = ""
    name = ""
    for header in dict(call.get("headers") or {}):
        if TOKEN.search(str(header)):
            where, name = "header", str(header).lower()
    parts = urlsplit(str(call.get("url") or ""))
    for key, _ in parse_qsl(parts.query, keep_blank_values=True):
        if TOKEN.search(key):
            where, name = "query", key
    body = str(call.get("body") or "")
    if body.startswith("{"):
        try:
            tree = json.loads(body)
        except ValueError:
            tree = None
        if isinstance(tree, dict):
            for key in tree:
                if TOKEN.search(str(key)):
                    where, name = "json", str(key)
    elif body:
        for key, _ in parse_qsl(body, keep_blank_values=True):
            if TOKEN.search(key):
                where, name = "form", key
    if not where:
        return None, ""
    page = str(call.get("page") or "")
    if url_origin(page) != origin:
        return (
            None,
            f"the call sends a per-visit token ({name}) from a page that is not on {origin}, so it stays on the page",
        )
    doc = urlsplit(page)
    template, _ = templated(doc.path + (f"?{doc.query}" if doc.query else ""), params, ("q", "u", ""))
    return Token(name=name, where=where, page=template or "/"), ""


def _effect(run: PageAgentResult, index: int, call: Call) -> str:
    """What a person approved in the recording up to the step that made the call, or ""."""
    for step in run.steps:
        approval = step.approval or {}
        if step.index <= index and approval.get("decision") == "approved" and approval.get("by") == "user":
            what = str(approval.get("risk") or step.action or "an action")
            path = urlsplit(str(call.get("url"))).path
            return f"{call.get('method')} {path} (step {step.index}: {what}, approved by the person)"
    return ""
