"""Typed results: what a run's answer must be, told to the model and checked before the run may finish.

``PageAgent(output=T)`` takes a pydantic model, a ``TypedDict``, a dataclass, ``list[...]`` of one, or a JSON
Schema (a dict, for the terminal). :class:`OutputSpec` turns it into the schema of the ``done`` action's
``data`` field, so every output path carries it (a tool call, schema-constrained JSON, JSON in text) and a
constrained model cannot write anything else. The finishing call is validated like any action's arguments: an
answer that does not fit is fed back to the model with the failing fields (it counts towards
``max_failures``, so a model that cannot comply ends the run with that message, and nothing done is lost).

A table the run read with ``extract_table`` can be the answer without the model retyping a cell:
``done(table="t1", columns={"field": "Column"})`` takes the rows from the run's data, maps columns to fields
(by name, ignoring case and punctuation, or as ``columns`` says), reads numbers as shown ("$1,234.50") for
numeric fields, and validates them like any answer.
"""

from __future__ import annotations

import json
import re
import typing
from collections.abc import Callable, Mapping
from typing import Any

import jsonschema
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ...browser.actions import action_facts
from ...core.errors import InputError
from ...core.text import map_strings
from ...core.tools import Finished, Tool, ToolArgumentError, ToolCallContext, ToolResult, inline_schema
from ..runs.run_data import Table, to_json


class OutputTypeError(InputError, TypeError):
    """``output=`` names something that cannot be an answer's type (said with what can)."""


def type_name(output: Any) -> str:
    """``Product``, ``list[Product]``, or ``JSON Schema`` for a dict."""
    if isinstance(output, dict):
        return str(output.get("title") or "JSON Schema")
    origin = typing.get_origin(output)
    if origin is not None:
        args = ", ".join(type_name(a) for a in typing.get_args(output))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    return getattr(output, "__name__", repr(output))


def _key(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", text.casefold())


_NUMBER = re.compile(
    r"^\(?[-+\u2212]?\s*[^\d\s.,()+-]{0,3}\s*[-+\u2212]?\d[\d,\s\u00a0\u202f']*(\.\d+)?\)?\s*%?[^\d\s]{0,3}$"
)


def number_as_shown(text: str) -> str:
    """``"$1,234.50"`` → ``"1234.50"``, ``"(12)"`` → ``"-12"``, ``"12 %"`` → ``"12"``: a number as a page shows
    it, for a numeric field. Anything else is returned unchanged (validation then says what is wrong)."""
    raw = text.strip()
    if not raw or not _NUMBER.match(raw):
        return text
    negative = (raw.startswith("(") and raw.endswith(")")) or "-" in raw or "\u2212" in raw
    digits = re.sub(r"[^\d.]", "", raw)
    if not digits or digits.count(".") > 1:
        return text
    return ("-" if negative else "") + digits


class OutputSpec:
    """The answer's type: its schema for the model, and how an answer is checked and kept."""

    def __init__(self, output: Any) -> None:
        self.type = output
        self.name = type_name(output)
        self.adapter: TypeAdapter[Any] | None = None
        if isinstance(output, dict):
            try:
                jsonschema.Draft202012Validator.check_schema(output)
            except jsonschema.SchemaError as exc:
                raise OutputTypeError(f"output= is not a valid JSON Schema: {exc.message}") from None
            raw = output
        else:
            try:
                self.adapter = TypeAdapter(_portable(output))
                raw = self.adapter.json_schema()
            except Exception as exc:  # pydantic says what it cannot handle, in its own error types
                raise OutputTypeError(
                    f"output={self.name} cannot be an answer's type ({type(exc).__name__}: {exc}). Give a pydantic "
                    "model, a TypedDict, a dataclass, list[...] of one, or a JSON Schema dict."
                ) from None
        try:
            self.schema = inline_schema(raw)
        except (ValueError, KeyError) as exc:
            raise OutputTypeError(f"output={self.name}: {exc}") from None
        self.row_schema, self.list_field = _row_target(self.schema)

    @property
    def takes_tables(self) -> bool:
        """Whether an extracted table can be the answer (the type is a list of objects, or has one such field)."""
        return self.row_schema is not None

    def validate(self, value: Any) -> Any:
        """The answer as the user's type (a plain JSON value for a JSON Schema); raises ``ValueError`` with one
        line per failing field, each naming it."""
        if self.adapter is not None:
            try:
                return self.adapter.validate_python(value)
            except ValidationError as exc:
                raise ValueError(_problems(exc)) from None
        errors = sorted(
            jsonschema.Draft202012Validator(self.schema).iter_errors(value), key=lambda e: list(e.absolute_path)
        )
        if errors:
            raise ValueError(
                "\n".join(f"  - data/{'/'.join(str(p) for p in e.absolute_path) or ''}: {e.message}" for e in errors)
            )
        return value

    def dump(self, value: Any) -> Any:
        """A validated answer as plain JSON (for run files, comparisons and tables)."""
        if value is None:
            return None
        if self.adapter is not None:
            try:
                return self.adapter.dump_python(value, mode="json")
            except Exception:  # a value of another type (loaded from a file): fall through
                pass
        return to_json(value)

    def from_table(self, table: Table, columns: Mapping[str, str] | None, data: Any) -> Any:
        """The answer made of ``table``'s rows (plus ``data``'s other fields when the rows fill one field)."""
        assert self.row_schema is not None
        fields = self.row_schema.get("properties") or {}
        by_key = {_key(c): i for i, c in enumerate(table.columns)}
        where: dict[str, int] = {}
        for name in fields:
            wanted = (columns or {}).get(name)
            if wanted is not None:
                if wanted not in table.columns and _key(wanted) not in by_key:
                    raise ValueError(
                        f'columns maps "{name}" to "{wanted}", which table {table.name} does not have. Its columns: '
                        + ", ".join(table.columns)
                    )
                where[name] = table.columns.index(wanted) if wanted in table.columns else by_key[_key(wanted)]
            elif _key(name) in by_key:
                where[name] = by_key[_key(name)]
        missing = [n for n in (self.row_schema.get("required") or []) if n not in where]
        if missing:
            raise ValueError(
                f"table {table.name} has no column for {', '.join(missing)}; its columns: {', '.join(table.columns)}. "
                'Map them with columns, e.g. {"'
                + missing[0]
                + '": "'
                + (table.columns[0] if table.columns else "")
                + '"}.'
            )
        numeric = {n for n, s in fields.items() if _is_numeric(s)}
        rows = []
        for row in table.rows:
            item: dict[str, Any] = {}
            for name, i in where.items():
                cell = row[i] if i < len(row) else ""
                item[name] = number_as_shown(cell) if name in numeric else cell
            rows.append(item)
        if self.list_field is None:
            return rows
        base = dict(data) if isinstance(data, dict) else {}
        base[self.list_field] = rows
        return base

    def done_tool(
        self, tables: Mapping[str, Table], leaks: Callable[[str], bool], *, extracting: bool = True
    ) -> TypedDoneTool:
        """The typed ``done``; ``extracting``: the run offers ``extract_table``, so done may name a table."""
        return TypedDoneTool(self, tables, leaks, extracting=extracting)


def _portable(output: Any) -> Any:
    """``output`` with a ``typing.TypedDict`` (which pydantic refuses before Python 3.12) rebuilt as the
    ``typing_extensions`` one it accepts, also inside ``list[...]``; the answers are plain dicts either way."""
    import typing_extensions

    origin = typing.get_origin(output)
    if origin is list:
        (item,) = typing.get_args(output) or (Any,)
        return list[_portable(item)]  # type: ignore[misc]
    if typing.is_typeddict(output) and not isinstance(output, typing_extensions._TypedDictMeta):  # type: ignore[attr-defined]
        hints = typing.get_type_hints(output)
        required = getattr(output, "__required_keys__", frozenset(hints))
        fields = {k: (v if k in required else typing_extensions.NotRequired[v]) for k, v in hints.items()}
        return typing_extensions.TypedDict(output.__name__, fields)  # type: ignore[operator]
    return output


def _is_numeric(schema: Mapping[str, Any]) -> bool:
    kinds = [schema.get("type")] + [v.get("type") for v in schema.get("anyOf", []) if isinstance(v, dict)]
    return any(k in ("number", "integer") for k in kinds)


def _row_target(schema: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(the schema of one row, the field holding the rows or None when the answer is the list itself)."""

    def object_items(node: Any) -> dict[str, Any] | None:
        if isinstance(node, dict) and node.get("type") == "array":
            items = node.get("items")
            if isinstance(items, dict) and (items.get("type") == "object" or "properties" in items):
                return items
        return None

    if (items := object_items(schema)) is not None:
        return items, None
    lists = [(name, object_items(s)) for name, s in (schema.get("properties") or {}).items()]
    found = [(name, items) for name, items in lists if items is not None]
    if len(found) == 1:
        return found[0][1], found[0][0]
    return None, None


def _problems(exc: ValidationError) -> str:
    lines = []
    for err in exc.errors():
        path = "/".join(str(p) for p in ("data", *err["loc"]))
        got = err.get("input")
        shown = "" if isinstance(got, (dict, list)) else f" (got {json.dumps(got, default=str)[:60]})"
        lines.append(f"  - {path}: {err['msg']}{shown}")
    return "\n".join(lines)


# -- the finishing action with a typed answer ---------------------------------------------------------------
class _DoneShape(BaseModel):
    """The finishing call's fields before the answer itself is checked (``data`` is checked by the spec, so
    its errors name the answer's own fields)."""

    model_config = ConfigDict(extra="forbid")
    text: str
    success: bool
    data: Any = None
    table: str | None = None
    columns: dict[str, str] | None = None


class TypedDone(_DoneShape):
    """Validated arguments of the typed ``done``: as given, plus the checked answer in ``output``.

    The model's arguments are validated as :class:`_DoneShape` (extra keys refused), so ``output`` is only
    ever set by the tool; it is excluded from ``model_dump``, so the step's record keeps the arguments as
    given."""

    output: Any = Field(default=None, exclude=True)


def with_typed_done(
    tools: dict[str, Tool],
    spec: OutputSpec | None,
    custom: Mapping[str, Any],
    data: Any,
    leaks: Callable[[str], bool],
) -> dict[str, Tool]:
    """A run's actions; with ``output=`` (``spec``), ``done`` takes the answer in that type, fed by the run's
    ``data`` tables (unless a custom ``done`` replaced the built-in one); it may name one only when the run
    offers ``extract_table``."""
    if spec is not None and "done" in tools and "done" not in custom:
        tools["done"] = spec.done_tool(data.tables, leaks, extracting="extract_table" in tools)
    return tools


class TypedDoneTool(Tool):
    """``done`` whose ``data`` is the answer in the user's type (or ``table``: an extracted table's name)."""

    name = "done"
    execution_mode = "sequential"
    risk = "safe"
    facts = action_facts("done")

    def __init__(
        self, spec: OutputSpec, tables: Mapping[str, Table], leaks: Callable[[str], bool], *, extracting: bool = True
    ) -> None:
        self.answer = spec
        self.tables = tables
        self.leaks = leaks
        props: dict[str, Any] = {"text": {"type": "string"}, "success": {"type": "boolean"}, "data": spec.schema}
        self.description = "Finish: text, a short summary; data, the answer in exactly the data schema"
        if spec.takes_tables and extracting:
            props["table"] = {"type": "string"}
            props["columns"] = {"type": "object", "additionalProperties": {"type": "string"}}
            self.description += " (or table: an extracted table's name, columns: {field: column} where names differ)"
        self.description += "; success=false unless fully done."
        self.parameters = {
            "type": "object",
            "properties": props,
            "required": ["text", "success"],
            "additionalProperties": False,
        }

    def validate(self, arguments: dict[str, Any]) -> TypedDone:
        try:
            args = TypedDone.model_construct(**dict(_DoneShape.model_validate(arguments)))
        except ValidationError as exc:
            problems = [f"  - {'/'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
            raise ToolArgumentError('Validation failed for tool "done":\n' + "\n".join(problems)) from None
        value = args.data
        try:
            if args.table is not None:
                value = self._from_table(args.table, args.columns, args.data)
            if value is None:
                if args.success:
                    raise ValueError(f"success=true needs the answer in data ({self.answer.name}).")
                return args
            output = self.answer.validate(value)
        except ValueError as exc:
            if not args.success:
                return args  # a run that failed anyway ends with its text, without a checked answer
            raise ToolArgumentError(
                f"The answer does not match {self.answer.name}:\n{exc}\nCall done again with data fixed."
            ) from None
        # each string as it is (JSON would spell a tab or newline inside a spaced-out copy as an escape), and the
        # whole answer as JSON (a value cut over two strings)
        dumped = self.answer.dump(output)
        texts = [json.dumps(dumped, ensure_ascii=False)]
        map_strings(dumped, lambda s: texts.append(s) or s)  # type: ignore[func-returns-value]
        if any(map(self.leaks, texts)):
            raise ToolArgumentError(
                "The answer contains a secret's value (or text typed into a password field); an answer never holds "
                "one. Call done again without it."
            )
        return args.model_copy(update={"output": output})

    def _from_table(self, name: str, columns: Mapping[str, str] | None, data: Any) -> Any:
        table = self.tables.get(name)
        if table is None:
            known = ", ".join(self.tables) or "none yet (use extract_table first)"
            raise ValueError(f'There is no extracted table "{name}". Tables: {known}.')
        if not self.answer.takes_tables:
            raise ValueError(f"{self.answer.name} is not a list of rows, so a table cannot be the answer.")
        return self.answer.from_table(table, columns, data)

    async def execute(self, args: Any, ctx: ToolCallContext) -> ToolResult:
        output = args.output if isinstance(args, TypedDone) else None
        text = args.text
        if output is not None:
            count = f"{len(output)} item{'' if len(output) == 1 else 's'}" if isinstance(output, list) else "checked"
            text = f"{text}\n(answer: {self.answer.name}, {count})"
        return ToolResult.finish(
            text,
            Finished(args.text, args.success, output),
            details={"success": args.success, "text": args.text, "output": output},
        )
