"""The rules for the options a person types, shared by the terminal (``notebook-agent run``), ``%%agent`` and
``%agent config``: the same checks, the same messages (each names the option, what was given and what to do).

Every check raises :class:`OptionError` (a ``ValueError``) or returns the value to use.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, cast

from ..agent.prompt.profiles import PROFILE_NAMES
from ..agent.safety.approval import POLICY_NAMES, PolicyName, check_policy
from ..browser.url_template import refuse_fields, url_fields
from ..browser.urls import URLError, normalize_url
from ..core.errors import InputError

T = TypeVar("T")


class OptionError(InputError):
    """An option value that cannot be used, said in a sentence."""


def _number(option: str, value: object, kind: type) -> Any:
    try:
        return kind(value)
    except (TypeError, ValueError):
        noun = "a whole number" if kind is int else "a number"
        raise OptionError(f"{option} needs {noun}, got {value!r}.") from None


def profile(value: str | None, option: str = "--profile") -> str:
    """A prompt profile's name (None: ``auto``)."""
    if value is None:
        return "auto"
    if value not in PROFILE_NAMES:
        raise OptionError(f"{option} {value}: use one of {', '.join(PROFILE_NAMES)}.")
    return value


#: How a recipe map's rows may go (agent/recipes/calls/rows.py ``MODES``).
MAP_MODES = ("auto", "request", "page")


def map_mode(value: object, option: str = "--mode") -> str:
    """How a recipe map's rows go: ``auto``, ``request`` or ``page``."""
    if value not in MAP_MODES:
        raise OptionError(f"{option} {value}: use one of {', '.join(MAP_MODES)}.")
    return str(value)


def max_steps(value: object, option: str = "--max-steps") -> int:
    """At least 1: the number of model calls a run may make."""
    steps = _number(option, value, int)
    if steps < 1:
        raise OptionError(f"{option} must be at least 1 (got {steps}): it is how many steps a run may take.")
    if steps > 1000:
        raise OptionError(f"{option} must be at most 1000 (got {steps}).")
    return int(steps)


def concurrency(value: object, option: str = "--concurrency") -> int:
    """At least 1: how many rows run at a time."""
    count = _number(option, value, int)
    if count < 1:
        raise OptionError(f"{option} must be at least 1 (got {count}): it is how many rows run at a time.")
    return int(count)


def max_cost(value: object, option: str = "--max-cost") -> float:
    """A budget in dollars, above 0 (``0.50`` or ``$0.50``): the rule of ``max_cost=`` (agent/safety/budget.py)."""
    from ..agent.safety.budget import BudgetError, checked_cost

    try:
        cost = checked_cost(value, option)
    except BudgetError as exc:
        raise OptionError(str(exc)) from None
    assert cost is not None
    return cost


def max_tokens(value: object, option: str = "--max-tokens") -> int:
    """A budget in tokens, a whole number above 0: the rule of ``max_tokens=``."""
    from ..agent.safety.budget import BudgetError, checked_tokens

    try:
        tokens = checked_tokens(value, option)
    except BudgetError as exc:
        raise OptionError(str(exc)) from None
    assert tokens is not None
    return tokens


def timeout(value: object, option: str = "--timeout") -> float:
    """Seconds to wait for an approval; more than 0."""
    seconds = _number(option, value, float)
    if not seconds > 0:
        raise OptionError(f"{option} must be a number of seconds greater than 0 (got {value!r}).")
    return float(seconds)


def approve(value: object, option: str = "--approve") -> PolicyName:
    """One of the policy names (a function policy is for Python code, not for a typed option)."""
    try:
        return cast(PolicyName, check_policy(str(value)))
    except ValueError as exc:
        raise OptionError(f"{option}: {exc}") from None


def model(value: object, option: str = "--model") -> str:
    """A model name that can be resolved later: ``demo``, ``replay:RUN`` or ``provider:model`` with a known
    provider (a missing API key is reported when a run starts, since it may be set meanwhile)."""
    name = str(value).strip()
    if not name:
        raise OptionError(f"{option} needs a model name, e.g. openai:gpt-4o-mini (or demo for the offline one).")
    if name.startswith("replay:"):
        return name
    from ..llm.registry import parse_model_name

    try:
        parse_model_name(name)
    except ValueError as exc:
        raise OptionError(f"{option}: {exc}") from None
    return name


_ALIAS_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")


def alias(value: object, option: str = "--alias") -> tuple[str, str | None]:
    """``fast=openai:gpt-4.1-mini`` → (name, model); ``fast=`` → (name, None), which removes it. A name is a
    word without ``:`` (so it never looks like ``provider:model``); the model follows the model-name rule."""
    text = str(value).strip()
    name, sep, target = text.partition("=")
    name, target = name.strip(), target.strip()
    if not sep or not _ALIAS_NAME.match(name):
        raise OptionError(f"{option} needs NAME=provider:model (NAME a word without ':'), got {text!r}.")
    return name, (model(target, option) if target else None)


def url(value: object, option: str = "--url") -> str:
    """The URL to open, by the one rule every entry point uses (:func:`normalize_url`); a ``{column}`` in it is
    refused, naming it: only a map has rows to fill it (:func:`url_template`)."""
    try:
        refuse_fields(str(value))
        return normalize_url(str(value))
    except URLError as exc:
        raise OptionError(f"{option}: {exc}") from None


def url_template(value: object, option: str = "--url") -> str:
    """A map's start page: a URL, or a template whose ``{column}``s each row fills (browser/url_template.py, the
    one rule of every front); the rows check it when they are read."""
    text = str(value)
    try:
        if url_fields(text):
            return text
    except URLError as exc:
        raise OptionError(f"{option}: {exc}") from None
    return url(text, option)


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)\}")


def no_placeholder(option: str, value: object) -> None:
    """IPython fills ``{name}`` in a magic's line from the notebook and leaves it as written when the name is
    not defined: say so instead of using the text literally."""
    if isinstance(value, str):
        found = _PLACEHOLDER.search(value)
        if found:
            raise OptionError(
                f"{option} {value}: {found.group(1)!r} is not defined in the notebook; define it in a cell above "
                "(or write the value itself)."
            )


_OUTPUT = re.compile(r"^\s*(?:(list|List|typing\.List)\[\s*(?P<inner>[^\[\]]+?)\s*\]|(?P<name>[^\[\]]+?))\s*$")


def _checked_output(option: str, typed: str, found: T) -> T:
    from ..agent.step.typed_output import OutputSpec

    try:
        OutputSpec(found)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"{option} {typed}: {exc}") from None
    return found


def output_in_namespace(value: object, namespace: Mapping[str, Any], option: str = "--output") -> Any:
    """The answer's type named in a notebook: ``Product``, ``list[Product]``, ``models.Product`` (found in
    ``namespace``), or a variable holding a type, ``list[...]`` or a JSON Schema dict."""
    typed = str(value)
    match = _OUTPUT.match(typed)
    if match is None:
        raise OptionError(f"{option} needs a type's name, e.g. --output Product or --output list[Product].")
    wanted = match.group("inner") or match.group("name")
    head, *rest = wanted.split(".")
    if head not in namespace:
        types = [k for k, v in namespace.items() if isinstance(v, type) and not k.startswith("_")]
        close = difflib.get_close_matches(head, types, n=1)
        hint = (
            f" Did you mean {close[0]}?"
            if close
            else " Define it in a cell above (a pydantic model, a TypedDict or a dataclass)."
        )
        raise OptionError(f"{option} {typed}: {head!r} is not defined in the notebook.{hint}")
    found = namespace[head]
    for part in rest:
        if not hasattr(found, part):
            raise OptionError(f"{option} {typed}: {head} has no attribute {part!r}.")
        found = getattr(found, part)
    if match.group("inner"):
        found = list[found]  # type: ignore[valid-type]
    return _checked_output(option, typed, found)


def output_from_file_or_module(value: object, option: str = "--output") -> Any:
    """The answer's type for the terminal: a JSON Schema file (``schema.json``), or ``module:Class`` /
    ``list[module:Class]`` for a pydantic model, TypedDict or dataclass importable from the current folder."""
    import importlib
    import json
    import sys
    from pathlib import Path

    typed = str(value).strip()
    match = _OUTPUT.match(typed)
    wanted = (match.group("inner") or match.group("name")) if match else typed
    if ":" in wanted and not Path(wanted).exists():
        module_name, _, attr = wanted.partition(":")
        if "" not in sys.path and "." not in sys.path:
            sys.path.insert(0, "")  # the current folder, as `python -m` does
        try:
            found: Any = importlib.import_module(module_name)
            for part in attr.split("."):
                found = getattr(found, part)
        except (ImportError, AttributeError) as exc:
            raise OptionError(f"{option} {typed}: cannot import {wanted} ({exc}).") from None
        if match is not None and match.group("inner"):
            found = list[found]
        return _checked_output(option, typed, found)
    path = Path(typed).expanduser()
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise OptionError(
            f"{option} {typed}: cannot read it ({exc.strerror}). Give a JSON Schema file or module:Class."
        ) from None
    except json.JSONDecodeError as exc:
        raise OptionError(f"{option} {typed}: not valid JSON ({exc.msg}, line {exc.lineno}).") from None
    if not isinstance(schema, dict):
        raise OptionError(f"{option} {typed}: a JSON Schema is an object ({{...}}), not a {type(schema).__name__}.")
    return _checked_output(option, typed, schema)


__all__ = [
    "POLICY_NAMES",
    "OptionError",
    "alias",
    "approve",
    "concurrency",
    "max_steps",
    "model",
    "no_placeholder",
    "output_from_file_or_module",
    "output_in_namespace",
    "timeout",
    "url",
]


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`` Did you mean --max-steps?`` for a misspelt option (``--max-step``, ``--maxsteps``), else ``""``.
    Options are never taken by a prefix: ``--max-step 3`` is an unknown option, said with this hint."""
    typed = word.split("=", 1)[0]
    if not typed.startswith("-"):
        return ""
    options = sorted({k for k in known if k.startswith("--")} if typed.startswith("--") else set(known))
    close = difflib.get_close_matches(typed, options, n=5, cutoff=0.75)
    # the fewest edits (a swap of two neighbours is one), then the same letters: --modle is --model, not --mode
    close = sorted(close, key=lambda k: (_edits(typed, k), _letters_apart(typed, k)))
    close = close or [k for k in options if k.startswith(typed) or typed.startswith(k)][:1]
    return f" Did you mean {close[0]}?" if close else ""


def _letters_apart(a: str, b: str) -> int:
    """Letters one word has and the other lacks (0 for the same letters in another order)."""
    ca, cb = Counter(a), Counter(b)
    return sum((ca - cb).values()) + sum((cb - ca).values())


def _edits(a: str, b: str) -> int:
    """Edits from ``a`` to ``b``: insertions, deletions, substitutions and swaps of neighbours (each one)."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def unknown_options_message(message: str, known: Iterable[str]) -> str:
    """argparse's ``unrecognized arguments: --max-step 3`` with a hint for each misspelt option."""
    options = list(known)
    _, sep, rest = message.partition("unrecognized arguments:")
    if not sep:
        return message
    hints = "".join(did_you_mean(word, options) for word in rest.split() if word.startswith("-"))
    return f"{message.rstrip('.')}.{hints}"
