"""A learned call shown: in the notebook (:func:`recipe_html`: the request as templates, where each answer field
sits, a sample row) and as a short plain script that asks it with httpx for one row (:func:`to_python`), beside
the Playwright export of a run (agent/runs/playwright_export.py).

The script holds only what the recipe file holds: templates and paths, never a cookie, a credential or a secret
(none is ever in a template, template.py); a site that needs a login gets the session's cookies from the person
(``httpx.Client(cookies=...)``). Every string from the recipe is written as a Python literal.
"""

from __future__ import annotations

import string

from ....core.text.shown import html_block, shown
from ..answer import READ
from ..recipe_pilot import Recipe
from .template import CallStep, LearnedCall, show_path

#: Each slot encoding as Python (the script's imports: quote, quote_plus).
_ENCODED = {
    "": "{}",
    "q": "quote_plus({})",
    "u": "quote({}, safe='')",
    "l": "{}.lower()",
    "lq": "quote_plus({}.lower())",
    "lu": "quote({}.lower(), safe='')",
}


def recipe_html(recipe: Recipe) -> str:
    """The recipe for a notebook: its task and slots, and its learned call (or why it has none)."""
    slots = ", ".join(f"{s.name} = {s.recorded!r}" for s in recipe.slots) or "none"
    head = (
        f"<b>Recipe</b> {shown(recipe.task, 'html')}<br>{len(recipe.steps)} steps · slots: {shown(slots, 'html')} · "
        f"reads {len(recipe.answer.reads)}"
    )
    call = recipe.call
    if call is None:
        note = recipe.call_note or "it was made before recipes learned calls"
        return html_block(f"{head}<br><i>No learned call: {shown(note, 'html')}. Its rows drive the page.</i>")
    rows = "".join(
        f"<tr><td>{{{shown(name, 'html')}}}</td><td><code>{shown(show_path(f.path), 'html')}</code></td>"
        f"<td>{shown(f.json_type, 'html')}</td><td>{shown(f.written, 'html')}</td></tr>"
        for name, f in call.fields.items()
    )
    extra = ""
    if call.token is not None:
        extra += (
            f"<br>per-visit token {shown(call.token.name, 'html')}, read from {shown(call.token.page, 'html')} per row"
        )
    if call.effect:
        approved = "approved when the recipe was made" if call.approved else "not approved: its map drives the page"
        extra += f"<br>effect: {shown(call.effect, 'html')} ({approved})"
    sample = ", ".join(f"{k} = {v!r}" for k, v in (call.sample.get("row") or {}).items())
    return html_block(
        f"{head}<br><b>Learned call</b> (cookies and credentials come from the browser's session)"
        f"<pre>{shown(call.describe(), 'html')}</pre>"
        f"<table><tr><th>answer</th><th>JSON path</th><th>type</th><th>recorded</th></tr>{rows}</table>"
        f"sample row: {shown(sample, 'html')}{extra}"
    )


def _expr(template: str, values: str = "values") -> str:
    """A template as a Python expression over the dict ``values``."""
    parts = []
    for literal, name, spec, _ in string.Formatter().parse(template):
        if literal:
            parts.append(repr(literal))
        if name is not None:
            parts.append(_ENCODED.get(spec or "", "{}").format(f"str({values}[{name!r}])"))
    return " + ".join(parts) or "''"


def _tree(node: object) -> str:
    if isinstance(node, dict) and set(node) == {"_slot"}:
        return f"float(values[{node['_slot']!r}])"
    if isinstance(node, dict):
        return "{" + ", ".join(f"{k!r}: {_tree(v)}" for k, v in node.items()) + "}"
    if isinstance(node, list):
        return "[" + ", ".join(_tree(v) for v in node) + "]"
    return _expr(node) if isinstance(node, str) else repr(node)


def _request(call: LearnedCall, step: CallStep, n: int) -> list[str]:
    headers = "{" + ", ".join(f"{k!r}: {_expr(v)}" for k, v in step.headers.items()) + "}"
    if call.token is not None and call.token.where == "header":
        headers = headers[:-1] + (", " if step.headers else "") + f"{call.token.name!r}: token}}"
    query = [f"({k!r}, {_expr(v)})" for k, v in step.query]
    if call.token is not None and call.token.where == "query":
        query = [f"({k!r}, token)" if k == call.token.name else q for (k, _), q in zip(step.query, query, strict=True)]
    args = [repr(step.method), _expr(step.path)]
    if query:
        args.append(f"params=[{', '.join(query)}]")
    args.append(f"headers={headers}")
    body = step.body or {}
    if "json" in body:
        tree = _tree(body["json"])
        if call.token is not None and call.token.where == "json":
            tree = f"{{**{tree}, {call.token.name!r}: token}}"
        args.append(f"json={tree}")
    elif "form" in body:
        pairs = [f"({k!r}, {'token' if call.token and k == call.token.name else _expr(v)})" for k, v in body["form"]]
        args.append(f"data=dict([{', '.join(pairs)}])")
    elif "text" in body:
        args.append(f"content={_expr(body['text'])}")
    lines = [
        f"    answer = client.request({', '.join(args)})",
        "    answer.raise_for_status()",
        "    data = answer.json()",
    ]
    for name, path in step.binds.items():
        lines.append(f"    values[{name!r}] = plain(pick(data, {path!r}, values))")
    return lines


def _answer(node: object, call: LearnedCall) -> str:
    if isinstance(node, dict) and READ in node:
        field = call.fields[f"_{node[READ]}"]
        value = f"pick(data, {field.path!r}, values)"
        return {"int": f"int({value})", "float": f"float({value})"}.get(str(node.get("kind")), f"str({value})")
    if isinstance(node, dict) and set(node) == {"_const"}:
        return repr(node["_const"])
    if isinstance(node, dict):
        return "{" + ", ".join(f"{k!r}: {_answer(v, call)}" for k, v in node.items()) + "}"
    if isinstance(node, list):
        return "[" + ", ".join(_answer(v, call) for v in node) + "]"
    return _expr(node) if isinstance(node, str) else repr(node)


SCRIPT = r'''"""{title}

One row by request, as the recipe learned it from its recording: change ROW for another row. Cookies and
credentials are not in the recipe; a site that needs a login gets the session's: httpx.Client(cookies={{...}}).
"""

import json
import re
from urllib.parse import quote, quote_plus

import httpx

ORIGIN = {origin!r}
ROW = {row!r}


def pick(data, path, values):
    """The value at path: keys, indices, and {{"where": field, "is": template}} for the item of a list."""
    for part in path:
        if isinstance(part, dict):
            wanted = re.sub(r"\{{([^{{}}:]+)(:l)?\}}", lambda m: fill(values, m[1], m[2]), part["is"])
            data = next(item for item in data if plain(item.get(part["where"])) == wanted)
        else:
            data = data[part]
    return data


def fill(values, name, lower):
    return str(values[name]).lower() if lower else str(values[name])


def plain(value):
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


values = dict(ROW)
with httpx.Client(base_url=ORIGIN, follow_redirects=False, timeout=30) as client:
{body}
print(json.dumps({answer}, ensure_ascii=False))
'''


def to_python(recipe: Recipe) -> str:
    """The script (see the module docstring); a :class:`~notebook_agent.agent.recipes.slots.RecipeError` when the
    recipe learned no call."""
    from ..slots import RecipeError

    call = recipe.call
    if call is None:
        raise RecipeError(
            f"This recipe learned no call ({recipe.call_note or 'made before recipes learned calls'}), so there is "
            "no request to export: export the recorded run as a Playwright script (to_playwright(result))."
        )
    body: list[str] = []
    if call.token is not None:
        name = call.token.name.lower().removeprefix("x-")
        body += [
            f"    page = client.get({_expr(call.token.page)}).text",
            "    token = re.search(",
            f"        r'(?:name|id)=[\"\\']?[^\"\\'>]*{name}[^>]*(?:content|value)=[\"\\']([^\"\\']+)', page, re.I",
            "    ).group(1)",
        ]
    for n, step in enumerate(call.steps, 1):
        body += _request(call, step, n)
    data = recipe.answer.data
    answer = _answer(data, call) if data is not None else _expr(recipe.answer.text.replace("{_", "{__"))
    if data is None:
        reads = ", ".join(f"'__{k[1:]}': pick(data, {f.path!r}, values)" for k, f in call.fields.items())
        body.append(f"    values.update({{{reads}}})")
    title = f"{recipe.task.replace(chr(34) * 3, '')[:100]}: the request behind the page, with httpx"
    row = dict(call.sample.get("row") or {s.name: s.recorded for s in recipe.slots})
    return SCRIPT.format(title=title, origin=call.origin, row=row, body="\n".join(body), answer=answer)


__all__ = ["recipe_html", "to_python"]
