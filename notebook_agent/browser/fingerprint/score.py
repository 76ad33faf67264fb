"""How much a candidate element agrees with a recorded fingerprint, and when the best candidate is clear enough
to act on. Pure Python: finder.py reads the candidates from the page and acts on the decision.

The rules that keep a replay from acting on the wrong element (a tie or a weak best goes to the model):

* Every part the recording has counts for a candidate that has the same value and against one that has
  another value *or none*. A part renamed on the page therefore costs the right element no more than any
  other, so renaming never makes a wrong element win. The name counts even when the recording has none: a
  nameless icon button is not any of the named buttons around it.
* No index counts (not the ``nth``, not a CSS path): a reordered list cannot promote the element that now
  sits where the target was. Two candidates that agree equally are a tie, not a guess.
* Context (landmark, the heading before, the texts beside) counts as much as a weak identity signal: it is
  what tells apart the "Add to cart" buttons of a product list. When what the element is was shared (its
  ``nth``) or is shared now, a candidate whose context contradicts the recording is a lookalike, not the
  element, unless its own test id, id or link agrees (:func:`_elsewhere`).

``confidence`` is the share of the recorded evidence that agrees, net of what contradicts it (1.0: every
recorded part agrees). A candidate is accepted at :data:`MIN_CONFIDENCE` or more and at least
:data:`MIN_MARGIN` points ahead of the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .model import Fingerprint

#: part: (points when it agrees, points taken when it differs). Test ids are meant to survive redesigns;
#: ids and name attributes are renamed by builds; the name is what a person reads.
WEIGHTS: dict[str, tuple[float, float]] = {
    "test id": (3.0, 3.0),
    "name": (3.0, 1.5),
    "role": (1.0, 2.0),
    "label": (1.0, 0.5),
    "id": (1.0, 0.5),
    "name attr": (1.0, 0.5),
    "href": (1.5, 1.0),
    "placeholder": (0.75, 0.5),
    "text": (0.75, 0.5),
    "tag": (0.5, 1.0),
    "type": (0.5, 1.0),
    "landmark": (0.75, 0.5),
    "heading": (1.0, 1.0),
    "before": (1.0, 1.0),
    "after": (0.75, 0.75),
    "frame": (0.5, 0.5),
    "no name": (1.0, 1.5),
}
#: A name equal but for case and spacing ("ADD TO CART") agrees for this many points instead of 3, so that an
#: element with the exact name still wins over one with the name in other case by the margin.
NAME_LOOSE = 2.0
MIN_CONFIDENCE = 0.6
MIN_MARGIN = 1.0

#: Which agreeing part names how an element was found, strongest first ("context" when none of these).
HOW = ("test id", "name", "label", "id", "name attr", "href", "placeholder", "text")


#: Parts that say where an element is rather than what it is.
CONTEXT = ("landmark", "heading", "before", "after")
#: Parts that name one element rather than a kind of element (a list's "Add to cart" buttons share the rest).
DISTINCT = ("test id", "id", "href")


@dataclass(frozen=True)
class Score:
    points: float
    total: float
    agreed: tuple[str, ...]
    loose_name: bool = False
    differs: tuple[str, ...] = ()

    @property
    def confidence(self) -> float:
        return round(max(0.0, self.points) / self.total, 3) if self.total > 0 else 0.0

    @property
    def how(self) -> str:
        for part in HOW:
            if part in self.agreed:
                if part == "name":
                    return "role+name (case-insensitive)" if self.loose_name else "role+name"
                return part
        return "context"


def _loose(text: str) -> str:
    return " ".join(text.split()).casefold()


def score(recorded: Fingerprint, candidate: Fingerprint) -> Score:
    """How far ``candidate`` (an element read the same way, its ``frame`` its own chain) agrees with
    ``recorded``. Parts the recording left empty do not count either way, except the name: a nameless
    element (an icon button) is told from named ones by that. A label or text equal to the name is the name
    again and counts once."""
    pairs: list[tuple[str, str, str]] = [
        ("test id", recorded.test_id, candidate.test_id),
        ("role", recorded.role, candidate.role),
        ("id", recorded.id, candidate.id),
        ("name attr", recorded.name_attr, candidate.name_attr),
        ("href", recorded.href, candidate.href),
        ("placeholder", recorded.placeholder, candidate.placeholder),
        ("tag", recorded.tag, candidate.tag),
        ("type", recorded.type, candidate.type),
        ("heading", recorded.landmark.heading, candidate.landmark.heading),
        ("before", recorded.neighbours.before, candidate.neighbours.before),
        ("after", recorded.neighbours.after, candidate.neighbours.after),
    ]
    if recorded.label and recorded.label != recorded.name:
        pairs.append(("label", recorded.label, candidate.label))
    if recorded.text and _loose(recorded.text) != _loose(recorded.name):
        pairs.append(("text", recorded.text, candidate.text))
    if recorded.landmark.kind:
        pairs.append(
            (
                "landmark",
                f"{recorded.landmark.kind}:{recorded.landmark.label}",
                f"{candidate.landmark.kind}:{candidate.landmark.label}",
            )
        )
    points = total = 0.0
    agreed: list[str] = []
    differs: list[str] = []
    for part, want, got in pairs:
        if not want:
            continue
        plus, minus = WEIGHTS[part]
        total += plus
        if want == got:
            points += plus
            agreed.append(part)
        else:
            points -= minus
            differs.append(part)
    loose = False
    if recorded.name:
        plus, minus = WEIGHTS["name"]
        total += plus
        if recorded.name == candidate.name:
            points += plus
            agreed.append("name")
        elif _loose(recorded.name) == _loose(candidate.name):
            points += NAME_LOOSE
            agreed.append("name")
            loose = True
        else:
            points -= minus
            differs.append("name")
    else:  # nameless then: an element with a name now is another one (or was given one)
        plus, minus = WEIGHTS["no name"]
        total += plus
        if candidate.name:
            points -= minus
            differs.append("no name")
        else:
            points += plus
            agreed.append("no name")
    plus, minus = WEIGHTS["frame"]  # the top frame is a recorded place too
    total += plus
    if _chain(recorded) == _chain(candidate):
        points += plus
        agreed.append("frame")
    else:
        points -= minus
        differs.append("frame")
    return Score(points, total, tuple(agreed), loose, tuple(differs))


def _chain(fp: Fingerprint) -> list[tuple[str, str, str]]:
    return [(f.name, f.id, f.src) for f in fp.frame]


@dataclass(frozen=True)
class Decision:
    """The chosen candidate's position in the list given to :func:`decide` (None: none), its score, and why
    none was chosen."""

    index: int | None
    score: Score | None
    why_not: str = ""


def decide(recorded: Fingerprint, scored: Sequence[tuple[Score, bool, Fingerprint]]) -> Decision:
    """The clear winner among ``scored`` (score, visible, the candidate), or why there is none. Visible
    candidates compete first; a hidden one is named only when it would have won."""
    what = recorded.describe()
    if not scored:
        return Decision(
            None,
            None,
            f"No element shares a role and name, test id, id, label, text or link with the recorded {what}.",
        )
    order = sorted(range(len(scored)), key=lambda i: -scored[i][0].points)
    visible = [i for i in order if scored[i][1]]
    chosen = _pick(recorded, scored, visible) if visible else None
    if chosen is not None and chosen.index is not None:
        return chosen
    overall = _pick(recorded, scored, order)
    if overall.index is not None and not scored[overall.index][1]:  # the clear winner is hidden
        return Decision(None, overall.score, f"The element that matches the recorded {what} is hidden.")
    return chosen or overall


def _pick(recorded: Fingerprint, scored: Sequence[tuple[Score, bool, Fingerprint]], order: list[int]) -> Decision:
    """The first of ``order`` (best first) when it is confident and ahead of the rest by the margin."""
    what = recorded.describe()
    best = scored[order[0]][0]
    if best.confidence < MIN_CONFIDENCE:
        closest = scored[order[0]][2].describe()
        return Decision(
            None,
            best,
            f"No element matches the recorded {what} well enough: the closest, {closest}, agrees with "
            f"{best.confidence:.0%} of it ({MIN_CONFIDENCE:.0%} needed).",
        )
    close = [i for i in order if best.points - scored[i][0].points < MIN_MARGIN]
    if len(close) > 1:
        return Decision(
            None,
            best,
            f"{len(close)} elements match {what} about equally well ({best.confidence:.0%}); nothing recorded "
            "tells them apart.",
        )
    elsewhere = _elsewhere(recorded, scored, order[0], order)
    if elsewhere:
        return Decision(None, best, f"No element matches the recorded {what} in its place: {elsewhere}.")
    return Decision(order[0], best)


def _elsewhere(
    recorded: Fingerprint, scored: Sequence[tuple[Score, bool, Fingerprint]], i: int, order: list[int]
) -> str:
    """Why candidate ``i``, whose place contradicts the recording, is one of the recorded element's lookalikes,
    or "". When what the element is (role and name, text, ...) was shared with others (its ``nth``), or is now
    shared by another candidate, only its place told it apart: the "Add to cart" of a product that is gone is
    not the "Add to cart" of the next product, however well the rest agrees. A test id, id or link that agrees
    is the element's own, and overrules its place."""
    best, _, candidate = scored[i]
    wrong = [p for p in best.differs if p in CONTEXT]
    if not wrong or any(p in best.agreed for p in DISTINCT):
        return ""
    what = {p for p in best.agreed if p not in CONTEXT and p != "frame"}
    alike = [j for j in order if j != i and what <= set(scored[j][0].agreed)]
    if recorded.nth is None and not alike:
        return ""
    place = candidate.landmark.heading if "heading" in wrong else candidate.neighbours.before
    shown = f" ({place[:40]!r})" if place and {"heading", "before"} & set(wrong) else ""
    why = (
        f"{len(alike)} other element{'s' if len(alike) > 1 else ''} share{'' if len(alike) > 1 else 's'} what it "
        "agrees on"
        if alike
        else "the recorded element was one of several with its role and name, told apart only by its place"
    )
    return f"the closest, {candidate.describe()}, has another {' and '.join(wrong)}{shown}, and {why}"
