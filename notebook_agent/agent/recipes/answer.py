"""The answer of a recipe's row, made the way the recorded run made it: read from the page, not asked of a model.

The recorded ``done`` said a text and (with ``output=``) typed data. Each value of them that the last page
showed becomes a read of that page (:class:`~.slots.Extraction`); a value that is a parameter becomes its
slot; anything else is kept as it was (a constant of the task, ``success``). The text keeps its wording with the
same values cut out, so ``Rain Jacket costs $129.00.`` becomes ``{product} costs ${_1}.``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..runs.result import PageAgentResult, PageStep
from .slots import NUMBER, Extraction, RecipeError, escape, fill, find_extraction, page_lines, templated

READ = "_read"


class Answer(BaseModel):
    """How the answer of a row is made: the ``done`` text and typed data as templates over the slots and the
    values read from the last page (``{_1}``, ``{_2}``: :attr:`reads`)."""

    model_config = ConfigDict(extra="forbid")
    text: str = ""
    data: Any = None
    """The typed answer's shape: each leaf a template string, or ``{"_read": n, "kind": ...}``, or a constant."""
    reads: list[Extraction] = Field(default_factory=list)


def answer_of(done: PageStep, run: PageAgentResult, params: Mapping[str, str]) -> Answer:
    lines = page_lines(done.request.state) if done.request is not None else []
    reads: list[Extraction] = []

    def read_of(value: Any) -> int | None:
        for i, r in enumerate(reads):
            if r.recorded == str(value) or (r.kind == "number" and _same_number(r.recorded, value)):
                return i
        rule = find_extraction(value, lines, params)
        if rule is None:
            return None
        reads.append(rule)
        return len(reads) - 1

    def leaf(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: leaf(v) for k, v in value.items()}
        if isinstance(value, list):
            return [leaf(v) for v in value]
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            i = read_of(value)
            if i is not None:
                return {READ: i + 1, "kind": type(value).__name__}
            if isinstance(value, str):
                return templated(value, params)[0]
        return {"_const": value} if isinstance(value, (dict, list)) else value

    data = leaf(done.args.get("data")) if done.args.get("data") is not None else None
    text = str(done.args.get("text") or "")
    template, _ = templated(text, params)
    # numbers the text says, as the page wrote them, become reads of the page too
    for m in reversed(list(re.finditer(rf"(?<![\w.{{]){NUMBER}(?![\w}}])", template))):
        rule = find_extraction(float(m.group().replace(",", "")), lines, params)
        if rule is None or rule.recorded != m.group():
            continue
        i = read_of(rule.recorded)
        if i is None:
            continue
        template = template[: m.start()] + "{_" + str(i + 1) + "}" + template[m.end() :]
    return Answer(text=template, data=data, reads=reads)


def _same_number(written: str, value: Any) -> bool:
    try:
        return float(written.replace(",", "")) == float(value)
    except (TypeError, ValueError):
        return False


def answer_for(answer: Any, page_text: str, values: Mapping[str, Any]) -> tuple[str, Any, str | None]:
    """``(text, data, problem)`` of one row from its last page: ``problem`` says which value could not be read."""
    got: dict[str, str] = {}
    for i, rule in enumerate(answer.reads):
        value = rule.read(page_text, values)
        if value is None:
            shown = rule.line.replace("{_value}", "…").replace("{_index}", "")
            return "", None, f"the page has no line like {shown!r} to read {rule.recorded!r} from"
        got[f"_{i + 1}"] = value
    return answer_from(answer, got, values)


def answer_from(answer: Answer, got: Mapping[str, str], values: Mapping[str, Any]) -> tuple[str, Any, str | None]:
    """``(text, data, problem)`` of one row from the values its reads gave (``{"_1": "129.00"}``), however they were
    read: off the row's page (:func:`answer_for`) or out of a learned call's answer (calls/rows.py)."""
    filled = {**values, **got}

    def build(node: object) -> Any:
        if isinstance(node, dict) and READ in node:
            raw = got[f"_{node[READ]}"]
            return _typed(raw, str(node.get("kind") or "str"))
        if isinstance(node, dict) and "_const" in node and len(node) == 1:
            return node["_const"]
        if isinstance(node, dict):
            return {k: build(v) for k, v in node.items()}
        if isinstance(node, list):
            return [build(v) for v in node]
        if isinstance(node, str):
            return fill(node, filled)
        return node

    try:
        return fill(answer.text, filled), build(answer.data), None
    except (RecipeError, ValueError) as exc:
        return "", None, str(exc)


def _typed(raw: str, kind: str) -> Any:
    if kind in ("int", "float"):
        number = float(raw.replace(",", ""))
        return int(number) if kind == "int" and number.is_integer() else number
    return raw


__all__ = ["Answer", "answer_for", "answer_from", "answer_of", "escape"]
