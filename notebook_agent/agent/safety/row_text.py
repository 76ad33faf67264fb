"""Text filled from a table's rows is data, never instructions: a row's value can never become a secret's
placeholder.

The vault (:mod:`.secrets`) fills ``<secret>NAME</secret>`` in what the model types. A placeholder is the
user's to write: in their task, in the steps of a recording as it was recorded. A row's value is not theirs in
that sense (a CSV from anywhere, a page's text kept in a table), so a template filled from a row (a map's task,
a recipe's step) goes through :class:`DataFormatter`, the one filler of row values: every placeholder of the
filled text, and every ``<secret>`` tag, that a row's value makes or takes part in (the whole placeholder, its
name, one of its tags) has its brackets turned into ``‹ ›``. The model reads ``‹secret›pw‹/secret›``, and
whatever it types of it, the vault never sees a placeholder there. A placeholder written wholly in the template
is the user's, and stays.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from typing import Any

from .secrets import PLACEHOLDER

#: A ``<secret>`` or ``</secret>`` tag however spaced or cased: a row's part of one is defused.
SECRET_TAG = re.compile(r"<\s*/?\s*secret\s*>", re.IGNORECASE)


def defused(text: str) -> str:
    """``text`` with the angle brackets of every secret tag in it made ``‹ ›`` (same length, so spans hold)."""
    return SECRET_TAG.sub(lambda m: "‹" + m.group()[1:-1] + "›", text)


def user_placeholders_only(pieces: list[tuple[str, bool]]) -> str:
    """The pieces joined (``(text, from_a_row)``), with every placeholder or secret tag that overlaps a row's
    piece defused, so only placeholders the user wrote whole remain."""
    text = "".join(piece for piece, _ in pieces)
    spans: list[tuple[int, int]] = []
    at = 0
    for piece, data in pieces:
        if data and piece:
            spans.append((at, at + len(piece)))
        at += len(piece)
    while spans:
        hit = next(
            (
                m
                for pattern in (PLACEHOLDER, SECRET_TAG)
                for m in pattern.finditer(text)
                if any(start < m.end() and m.start() < end for start, end in spans)
            ),
            None,
        )
        if hit is None:
            break
        text = text[: hit.start()] + defused(hit.group()) + text[hit.end() :]
    return text


class DataFormatter(string.Formatter):
    """``str.format`` over a row (``fill(template, row)``) where the template is the user's and the values are
    data: see the module docstring. Subclasses change how a value is written (``format_field``) or found
    (``get_field``), never that it is data."""

    def fill(self, template: str, values: Mapping[str, Any]) -> str:
        pieces: list[tuple[str, bool]] = []
        for literal, name, spec, conversion in self.parse(template):
            if literal:
                pieces.append((literal, False))
            if name is None:
                continue
            value, _ = self.get_field(name, (), values)
            value = self.convert_field(value, conversion)
            spec = self.vformat(spec, (), values) if spec and "{" in spec else spec or ""
            pieces.append((self.format_field(value, spec), True))
        return user_placeholders_only(pieces)


ROW_FILLER = DataFormatter()


def fill_row(template: str, row: Mapping[str, Any]) -> str:
    """``template.format_map(row)``, the row's values as data (:class:`DataFormatter`)."""
    return ROW_FILLER.fill(template, row)
