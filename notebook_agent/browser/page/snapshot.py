"""The browser state the model reads: indexed interactive elements plus the page text around them.

The heavy lifting runs in the page (``snapshot.js``, one call per frame, returning one JSON string), in
Playwright's isolated script world rather than the page's own, so page script can neither see it nor change
what it reads (hooked DOM prototypes, a swapped ``JSON``); how Python reaches it is ``page_script.py``. This
module holds the data types and the Python half: merging frames (iframes nest under their ``<iframe>``, with
coordinates offset into the top viewport), numbering, the budget with viewport-first truncation, and the text.

Choices the model can rely on (documented here because they shape what it sees):

* Interactive = native controls and links, ARIA widget roles, contenteditable hosts, ``on*`` handlers, click
  listeners added with ``addEventListener`` (tracked by an init script), ``tabindex>=0``, the element where a
  pointer cursor starts, and scrollable containers. A ``<label>`` is indexed only when its control is hidden
  (custom checkboxes), and then shows the control's state.
* Hidden elements (``display:none``, ``visibility:hidden``, zero opacity, zero size, ``aria-hidden``/``inert``
  subtrees, 1-pixel screen-reader-only text) are left out. Disabled controls keep their index and show
  ``disabled`` so the model learns why a button does nothing. In the viewport, an element whose centre and
  corners are all covered by another element (a modal, a cookie banner) is left out, since a person could not
  click it either; elements outside the viewport (full-page mode) are not checked.
* Form state is live: the ``.value`` property, ``checked``, the selected option (every selected one of a
  multiple select: ``selected=A|B``) and the option list. Passwords and fields marked as card numbers, one-time
  codes and the like show ``value=[masked]``. A value is shown whole up to 160 characters (2,000 for a textarea,
  whose text is page text too); a longer one shows its start and its end around `` … ``, so the last words typed
  or written can be checked.
* An element known by its picture alone (no text, label, title or readable id) shows ``icon=`` with what the
  page calls the picture: an SVG's ``<title>`` or symbol, an image's file name, its class words ("trash",
  ``fa-star``), its CSS image's file name; framework words, state words and hashes are left out.
* Elements that look the same (tag, text, identifying attributes: :func:`element_look`) are numbered in page
  order (``ElementInfo.twin``), which tells the second "Odd" button from the first when an index cannot.
* A form control's (or ARIA field's) accessible name follows its tag, ``[1]<input type=checkbox
  checked=false />HF2``, taken from ``aria-labelledby``, ``aria-label`` or its ``<label>``s; a label's text is
  then not printed again as page text. An ``id`` is shown when it reads as a name (not ``:r3:``,
  ``ember123``, UUIDs, hashes or long digit runs) and does not repeat the name.
* ``*[N]`` marks an element that appeared (or became visible) since the previous snapshot of the same
  document; the first snapshot of a page marks nothing, except a frame that appeared since the last snapshot.
* A table of data (``<table>`` or an ARIA table or grid, not a presentational one, nor one holding another
  table) is named where it starts, ``[Table T1]`` (:func:`table_marker`), numbered like the elements, so
  ``extract_table`` can read one that holds nothing interactive; the reader finds it again by that name.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, TypeVar

# Re-exported: the built-in actions read the page through it from here.
from .page_script import call_page_api as call_page_api

MISSING = "__notebook_agent_missing__"
F = TypeVar("F")  # a frame, the key of a snapshot's frame results (Playwright's, or a test's stand-in)

#: The default text budget of a full-page snapshot (about 10k tokens): a 1,500-row table otherwise sends 47k
#: tokens on every step. The lines nearest the viewport are kept and the state says what was cut.
FULL_PAGE_MAX_CHARS = 40_000

#: A named table's line in the state: where it starts on the page (see the module text).
TABLE_LINE = re.compile(r"\t*\[Table (T\d+)\]$")


def table_marker(name: str) -> str:
    """The line naming table ``name`` ("T1") where it starts: what ``extract_table(table=...)`` takes."""
    return f"[Table {name}]"


def without_tables(text: str) -> str:
    """``text`` (a snapshot's) without its table lines, for a run that cannot read tables."""
    return "\n".join(line for line in text.split("\n") if not TABLE_LINE.match(line))


# -- data --------------------------------------------------------------------------------------------------


@dataclass
class ElementInfo:
    """One indexed element as the model saw it. ``box`` is (x, y, width, height) in CSS pixels relative to the
    top-level viewport at snapshot time (iframe offsets applied)."""

    index: int
    tag: str
    role: str
    text: str
    attributes: dict[str, str]
    line: str
    frame: str = ""
    frame_index: int = 0
    box: tuple[float, float, float, float] | None = None
    is_new: bool = False
    in_viewport: bool = True
    disabled: bool = False
    sensitive: bool = False
    control: str = ""
    """For a ``<label>``: the control it activates (type, text, value, names), which a click on it is judged as."""
    depth: int = 0
    plain: str = ""
    """``line`` without the element's state (value, checked, selected, files), for action results."""
    form: int = -1
    """The form a control belongs to, numbered within its frame (-1: none)."""
    submits: bool = False
    """A control that submits its form (a submit button)."""
    required: bool = False
    twin: int = 0
    """How many elements listed before it in this snapshot look the same (:func:`element_look`, in the same
    frame): the second of two "Odd" buttons is twin 1. What tells look-alikes apart where the index cannot (it
    shifts when the page changes)."""

    def describe(self, limit: int = 100) -> str:
        """``[N]<tag ...>text />`` as in the snapshot, without the state it had then, shortened for action
        results: "Clicked [2]<input type=checkbox checked=false />Email. It is now checked." read as a
        contradiction to small models, which then clicked again."""
        text = f"[{self.index}]{self.plain or self.line}"
        return text if len(text) <= limit else text[: limit - 4] + "… />"


@dataclass
class TabInfo:
    id: int
    url: str
    title: str
    current: bool = False


@dataclass
class Snapshot:
    """What :meth:`~notebook_agent.browser.session.browser_session.BrowserSession.snapshot` returns; ``text`` is exactly
    what the model reads."""

    url: str
    title: str
    text: str
    elements: dict[int, ElementInfo]
    tabs: list[TabInfo] = field(default_factory=list)
    viewport: tuple[int, int] = (0, 0)
    page_size: tuple[int, int] = (0, 0)
    scroll: tuple[int, int] = (0, 0)
    pixels_above: int = 0
    pixels_below: int = 0
    full_page: bool = False
    truncated: bool = False
    omitted_elements: int = 0
    notices: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    frame_count: int = 1
    snapshot_id: int = 0
    announced: list[tuple[str, str]] | None = None
    """The main document's announcing regions and headings as ``(kind, text)`` (what
    :func:`~.page_script.announced_text` reads), read in the same call as the snapshot; None when not read."""
    calls: frozenset[str] | None = None
    """The actions the main document calls for beyond the everyday ones (``agent/prompt/offers.py``), read in the
    same call; None when not read."""
    tables: list[str] = field(default_factory=list)
    """The names of the tables the text names (``T1``, ...), in page order."""
    status: int = 0
    """The HTTP status of the top document when the server answered it with an error (4xx, 5xx), else 0."""

    @property
    def pages_above(self) -> float:
        return self.pixels_above / self.viewport[1] if self.viewport[1] else 0.0

    @property
    def pages_below(self) -> float:
        return self.pixels_below / self.viewport[1] if self.viewport[1] else 0.0

    def element(self, index: int) -> ElementInfo | None:
        return self.elements.get(index)

    def __str__(self) -> str:
        return self.text

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["elements"] = [asdict(e) for e in self.elements.values()]
        data["pages_above"] = round(self.pages_above, 2)
        data["pages_below"] = round(self.pages_below, 2)
        return data


# -- assembly ----------------------------------------------------------------------------------------------


@dataclass
class FrameResult:
    """One frame's script output plus what the merge needs to place it."""

    frame: Any  # a Playwright Frame (Any so tests can use stand-ins)
    data: dict[str, Any]
    children: list[Any]  # child frames, in the order their handles were passed to the script
    url: str = ""


@dataclass
class _Line:
    kind: int  # 0 element, 1 text, 3 a table starts
    depth: int
    text: str
    box: tuple[float, float, float, float]
    in_view: bool
    element: dict[str, Any] | None = None
    frame: Any = None
    frame_index: int = 0
    frame_url: str = ""
    new: bool = False


Rect = tuple[float, float, float, float]  # left, top, right, bottom

#: The implicit ARIA role of tags whose role the element info reports without a ``role`` attribute.
IMPLICIT_ROLES = {"a": "link", "button": "button", "select": "combobox", "textarea": "textbox", "option": "option"}


def element_line(el: dict[str, Any]) -> str:
    """``<tag k=v flag>text />name``, the element as the model reads it, from the page script's fields."""
    parts = [f"<{el['tag']}"]
    for k, v in el.get("a") or ():
        parts.append(f" {k}" if v is True else f" {k}={v}")
    text = el.get("text") or ""
    parts.append(f">{text} />" if text else " />")
    parts.append(el.get("name") or "")
    return "".join(parts)


#: Attributes that report an element's live state rather than what it is.
STATE_ATTRIBUTES = frozenset({"value", "selected", "checked", "files"})

#: The attributes that say which element it is (not its state): with its tag and text, an element's look, which
#: look-alikes share (``ElementInfo.twin``) and the loop guard knows a move's element by.
IDENTITY_ATTRIBUTES = ("id", "name", "href", "aria-label", "type", "placeholder", "role", "title", "icon")


def element_look(tag: str, text: str, attributes: dict[str, str]) -> tuple[str, ...]:
    """An element by what it is: tag, text (spaces folded, at most 80 characters), identifying attributes."""
    who = (tag, " ".join(text.split())[:80])
    return who + tuple(f"{k}={attributes[k]}" for k in IDENTITY_ATTRIBUTES if k in attributes)


def element_attributes(el: dict[str, Any]) -> dict[str, str]:
    """The attributes an action or approval policy sees: the displayed ones (flags as ""), plus href and id."""
    out = {k: "" if v is True else str(v) for k, v in el.get("a") or ()}
    if el.get("href"):
        out["href"] = el["href"]
    if el.get("id"):
        out["id"] = el["id"]
    return out


def _intersect(a: Rect, b: Rect) -> Rect:
    return (max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3]))


def _overlaps(box: tuple[float, float, float, float], clip: Rect) -> bool:
    x, y, w, h = box
    return x + w > clip[0] and x < clip[2] and y + h > clip[1] and y < clip[3]


def _distance(box: tuple[float, float, float, float], view_h: float) -> float:
    """Signed distance from the viewport: 0 inside, negative above, positive below."""
    _, y, _, h = box
    if y + h <= 0:
        return y + h - 1
    if y >= view_h:
        return y - view_h + 1
    return 0.0


def merge_frames(results: dict[F, FrameResult], main: F, full_page: bool) -> list[_Line]:
    """Flatten frames into one document-order list; child frames appear where their iframe is."""
    main_data = results[main].data
    view: Rect = (0.0, 0.0, float(main_data["vw"]), float(main_data["vh"]))
    main_first = bool(main_data.get("first"))
    frame_order = {frame: i for i, frame in enumerate(results)}
    lines: list[_Line] = []

    def expand(frame: F, depth0: int, ox: float, oy: float, clip: Rect, visiting: set[int]) -> None:
        res = results.get(frame)
        if res is None or id(frame) in visiting:
            return
        visiting = visiting | {id(frame)}
        data = res.data
        els = data["els"]
        # a frame seen for the first time while its page was already known: everything in it is new
        all_new = frame is not main and bool(data.get("first")) and not main_first
        for item in data["items"]:
            kind = item[0]
            if kind == 0:
                el = els[item[2]]
                x, y, w, h = el["box"]
                box = (x + ox, y + oy, w, h)
                in_view = bool(el["v"]) and _overlaps(box, clip)
                if not full_page and not in_view:
                    continue
                lines.append(
                    _Line(
                        0,
                        depth0 + item[1],
                        element_line(el),
                        box,
                        in_view,
                        el,
                        frame,
                        frame_order.get(frame, 0),
                        res.url,
                        bool(el.get("n")) or all_new,
                    )
                )
            elif kind in (1, 3):
                box = (item[3] + ox, item[4] + oy, item[5], item[6])
                in_view = bool(item[7]) and _overlaps(box, clip)
                if not full_page and not in_view:
                    continue
                if kind == 1:
                    lines.append(_Line(1, depth0 + item[1], item[2], box, in_view))
                else:  # the name is given once the lines kept are known
                    lines.append(_Line(3, depth0 + item[1], table_marker("T00"), box, in_view, {"t": item[2]}, frame))
            elif kind == 2:
                k = item[2]
                if k >= len(res.children):
                    continue
                child_clip = _intersect(clip, (item[5] + ox, item[6] + oy, item[7] + ox, item[8] + oy))
                if not full_page and (child_clip[2] <= child_clip[0] or child_clip[3] <= child_clip[1]):
                    continue
                expand(res.children[k], depth0 + item[1], item[3] + ox, item[4] + oy, child_clip, visiting)

    expand(main, 0, 0.0, 0.0, view, set())
    return lines


def _pages(px: int, vh: int) -> str:
    return f"{px / vh:.1f}" if vh else "0"


def build_snapshot(
    results: dict[F, FrameResult],
    main: F,
    *,
    full_page: bool,
    max_elements: int | None = None,
    max_chars: int | None = None,
    tabs: list[TabInfo] | None = None,
    notices: list[str] | None = None,
    snapshot_id: int = 0,
) -> tuple[Snapshot, dict[int, tuple[Any, int]], dict[str, tuple[Any, int]]]:
    """Assemble the snapshot, the index → (frame, frame-local index) map actions resolve through, and the table
    name → (frame, frame-local table index) map ``extract_table`` resolves through."""
    data = results[main].data
    vw, vh = int(data["vw"]), int(data["vh"])
    sx, sy = int(data["sx"]), int(data["sy"])
    pw, ph = int(data["pw"]), int(data["ph"])
    above = max(0, sy)
    below = max(0, ph - (sy + vh))
    tabs = tabs or []
    notices = notices or []

    lines = merge_frames(results, main, full_page)
    total_elements = sum(1 for ln in lines if ln.kind == 0)

    # header / footer
    status = int(data.get("status") or 0)
    error_page = f" (the server answered HTTP {status}: an error page)" if status >= 400 else ""
    head = [f"Current page: [{data.get('title') or '(untitled)'}]({data.get('url', '')}){error_page}"]
    if len(tabs) > 1:
        head.append(
            "Tabs: " + " | ".join(f"{t.id} {t.title or t.url}" + (" (current)" if t.current else "") for t in tabs)
        )
    head.extend(f"Note: {n}" for n in notices)
    if not full_page and above > 4:
        head.append(f"... {above} pixels above ({_pages(above, vh)} pages) - scroll up to see more ...")
    else:
        head.append("[Start of page]")
    if not full_page and below > 4:
        foot = [f"... {below} pixels below ({_pages(below, vh)} pages) - scroll down to see more ..."]
    else:
        foot = ["[End of page]"]

    # budget: keep the lines nearest the viewport, in document order
    keep = [True] * len(lines)
    omitted_above = omitted_below = 0
    truncated = False
    if max_elements is not None or max_chars is not None:
        digits = len(str(max(total_elements, 1))) + 3
        budget_chars = None
        if max_chars is not None:
            # room for the cut markers and the truncation note, sized with worst-case numbers
            worst = f"... {total_elements} more elements below are not listed (snapshot budget) ...\n"
            note = (
                f"[Snapshot truncated (max_elements={max_elements}, max_chars={max_chars}): showing {total_elements} "
                f"of {total_elements} elements, those nearest the viewport first. Scroll to bring the others into "
                "view.]\n"
            )
            budget_chars = max_chars - sum(len(s) + 1 for s in head + foot) - 2 * len(worst) - len(note)
        order = sorted(range(len(lines)), key=lambda k: (abs(_distance(lines[k].box, vh)), k))
        keep = [False] * len(lines)
        n_el = 0
        used = 0
        for k in order:
            ln = lines[k]
            cost = len(ln.text) + ln.depth + 1 + (digits if ln.kind == 0 else 0)
            if ln.kind == 0 and max_elements is not None and n_el >= max_elements:
                break
            if budget_chars is not None and used + cost > budget_chars:
                break
            keep[k] = True
            used += cost
            n_el += ln.kind == 0
        for k, ln in enumerate(lines):
            if not keep[k] and ln.kind == 0:
                truncated = True
                if _distance(ln.box, vh) < 0:
                    omitted_above += 1
                else:
                    omitted_below += 1
            elif not keep[k]:
                truncated = True

    body: list[str] = []
    elements: dict[int, ElementInfo] = {}
    refs: dict[int, tuple[Any, int]] = {}
    tables: dict[str, tuple[Any, int]] = {}
    if omitted_above:
        body.append(f"... {omitted_above} more elements above are not listed (snapshot budget) ...")
    index = 0
    looks: dict[tuple[str, ...], int] = {}
    for k, ln in enumerate(lines):
        if not keep[k]:
            continue
        indent = "\t" * ln.depth
        if ln.kind == 1:
            body.append(indent + ln.text)
            continue
        if ln.kind == 3:
            assert ln.element is not None
            name = f"T{len(tables) + 1}"
            body.append(indent + table_marker(name))
            tables[name] = (ln.frame, int(ln.element["t"]))
            continue
        el = ln.element
        assert el is not None
        body.append(f"{indent}{'*' if ln.new else ''}[{index}]{ln.text}")
        attributes = element_attributes(el)
        look = (ln.frame_url, *element_look(el["tag"], el.get("text") or "", attributes))
        twin = looks[look] = looks.get(look, -1) + 1
        elements[index] = ElementInfo(
            index=index,
            tag=el["tag"],
            role=el.get("role") or IMPLICIT_ROLES.get(el["tag"], ""),
            text=el.get("text") or "",
            attributes=attributes,
            line=ln.text,
            plain=element_line({**el, "a": [a for a in el.get("a") or () if a[0] not in STATE_ATTRIBUTES]}),
            frame=ln.frame_url,
            frame_index=ln.frame_index,
            box=ln.box,
            is_new=ln.new,
            in_viewport=ln.in_view,
            disabled=bool(el.get("dis")),
            sensitive=bool(el.get("s")),
            control=str(el.get("ctl") or ""),
            depth=ln.depth,
            form=int(el.get("f", -1)),
            submits=bool(el.get("sub")),
            required=bool(el.get("req")),
            twin=twin,
        )
        refs[index] = (ln.frame, int(el["i"]))
        index += 1
    if omitted_below:
        body.append(f"... {omitted_below} more elements below are not listed (snapshot budget) ...")
    if truncated:
        limits = []
        if max_elements is not None:
            limits.append(f"max_elements={max_elements}")
        if max_chars is not None:
            limits.append(f"max_chars={max_chars}")
        foot.append(
            f"[Snapshot truncated ({', '.join(limits)}): showing {len(elements)} of {total_elements} elements, "
            "those nearest the viewport first. Scroll to bring the others into view.]"
        )

    text = "\n".join(head + body + foot)
    snap = Snapshot(
        url=str(data.get("url", "")),
        title=str(data.get("title", "")),
        text=text,
        elements=elements,
        tabs=list(tabs),
        viewport=(vw, vh),
        page_size=(pw, ph),
        scroll=(sx, sy),
        pixels_above=above,
        pixels_below=below,
        full_page=full_page,
        truncated=truncated,
        omitted_elements=total_elements - len(elements),
        notices=list(notices),
        frame_count=len(results),
        snapshot_id=snapshot_id,
        tables=list(tables),
        status=status if status >= 400 else 0,
    )
    return snap, refs, tables
