"""The painted text layer is matched the way a reader reads a picture: a value in any spelling the lookalike rule
reads as it (case, white space, invisible characters, compatibility forms), cut over any number of adjacent
text boxes, is found, and every box holding part of it is covered; boxes around it are not.

A generator writes the spellings and the cuts; the boxes are plain data (the browser test of the same rule on
real pictures is test_painted_mask.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from notebook_agent.browser.page.painted import Box, needles, snapshot_boxes, text_matches
from tests.agent.safety.test_lookalike_secrets import spelled

SECRET = "Hunter2-horse"
FILLER = st.text(alphabet="0156789#~ \u200b", max_size=6)


def box(k: int) -> Box:
    return (float(10 * k), 0.0, 10.0, 10.0)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_value_cut_over_adjacent_boxes_is_covered_box_by_box(data: st.DataObject) -> None:
    spelling = data.draw(spelled(SECRET), label="spelling")
    cuts = sorted(data.draw(st.sets(st.integers(1, len(spelling) - 1), max_size=5), label="cuts"))
    pieces = [spelling[a:b] for a, b in zip([0, *cuts], [*cuts, len(spelling)], strict=True)]
    before = data.draw(st.lists(FILLER, max_size=3), label="before")
    after = data.draw(st.lists(FILLER, max_size=3), label="after")
    texts = [*before, *pieces, *after]
    boxes = [(text, box(k)) for k, text in enumerate(texts)]
    found = set(text_matches(boxes, needles([SECRET])))
    held = {box(len(before) + k) for k, piece in enumerate(pieces) if needles([piece])}
    assert held <= found, (texts, sorted(held - found))
    around = {box(k) for k in [*range(len(before)), *range(len(before) + len(pieces), len(texts))]}
    assert not found & around, (texts, sorted(found & around))


def test_text_that_does_not_read_as_the_value_is_not_covered() -> None:
    boxes = [("Hunter2-hors", box(0)), ("Hunter2 - hose", box(1)), ("Нunter2-horse", box(2))]  # Cyrillic Н
    assert text_matches(boxes, needles([SECRET])) == []


def test_a_frame_document_is_moved_into_its_frame_and_clipped_to_it() -> None:
    """Boxes of an in-process frame's document move by its frame element's content box (border and padding
    taken off) less the frame's scroll, and what lies outside the frame's box is not covered."""
    strings = ["#text", "IFRAME", "Hunter2-horse", "4px", "3px", "none", ""]
    styles = [5] * 4  # the image styles: none
    top = {
        "nodes": {"nodeName": [1], "contentDocumentIndex": {"index": [0], "value": [1]}},
        "layout": {"nodeIndex": [0], "bounds": [[100, 200, 214, 114]], "text": [-1], "styles": [[3, 3, 4, 4, *styles]]},
        "textBoxes": {},
    }
    inner = {
        "nodes": {"nodeName": [0, 0]},
        "layout": {"nodeIndex": [0, 1], "bounds": [[5, 50, 120, 20], [5, 500, 120, 20]], "text": [2, 2]},
        "textBoxes": {
            "layoutIndex": [0, 1],
            "bounds": [[5, 50, 120, 20], [5, 500, 120, 20]],
            "start": [0, 0],
            "length": [13, 13],
        },
        "scrollOffsetX": 0,
        "scrollOffsetY": 20,
    }
    found = snapshot_boxes({"strings": strings, "documents": [top, inner]}, needles([SECRET]))
    assert found == [(112.0, 237.0, 120.0, 20.0)]  # 100 + 4 + 3 + 5, 200 + 4 + 3 + 50 - 20; the second is below
