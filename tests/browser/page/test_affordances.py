"""The elements taken out of a form action's decoding schema are ones the action would certainly refuse: tried
on real Chromium for every kind of element the generator makes (tag × type × role × contenteditable)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notebook_agent.browser import BrowserSession
from notebook_agent.browser.page.actionable import cannot_choose_in, cannot_type_into, unfilled, unfit

TAGS = ["input", "button", "a", "select", "textarea", "div", "span", "summary"]
TYPES = [None, "text", "email", "search", "number", "password", "checkbox", "radio", "file", "submit", "button",
         "reset", "image", "range", "color", "date"]  # fmt: skip
ROLES = [None, "button", "link", "checkbox", "textbox", "combobox", "listbox", "switch", "tab", "menuitem"]


def element_html(tag: str, kind: str | None, role: str | None, editable: bool) -> str:
    attrs = ' id="t" onclick="void 0"'  # a handler, so even a plain div or span gets an index
    attrs += f' type="{kind}"' if kind and tag in ("input", "button") else ""
    attrs += f' role="{role}"' if role else ""
    attrs += ' contenteditable="true"' if editable else ""
    attrs += ' href="#x"' if tag == "a" else ""
    if tag == "input":
        return f"<input{attrs} aria-label='Field'>"
    if tag == "select":
        return f"<select{attrs}><option>One</option><option>Two</option></select>"
    if tag == "summary":
        return f"<details><summary{attrs}>More</summary><p>x</p></details>"
    return f"<{tag}{attrs}>Thing</{tag}>"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(TAGS), st.sampled_from(TYPES), st.sampled_from(ROLES), st.booleans())
async def test_an_element_left_out_is_one_the_action_refuses(
    browser: BrowserSession, tag: str, kind: str | None, role: str | None, editable: bool
) -> None:
    await browser.page.set_content(f"<p>Form</p>{element_html(tag, kind, role, editable)}")
    snapshot = await browser.snapshot()
    targets = [e for e in snapshot.elements.values() if e.attributes.get("id") == "t"]
    if not targets:
        return  # not indexed (e.g. a disabled-looking control): nothing the model could name
    (e,) = targets
    left_out = unfit(snapshot.elements.values())
    if e.index in left_out["input_text"]:
        result = await browser.act({"input_text": {"index": e.index, "text": "hello"}})
        assert result.is_error, (e.line, result.text_content)
    if e.index in left_out["select_dropdown_option"]:
        await browser.snapshot()
        result = await browser.act({"select_dropdown_option": {"index": e.index, "text": "Two"}})
        assert result.is_error, (e.line, result.text_content)


async def test_what_can_work_stays_in(browser: BrowserSession) -> None:
    await browser.page.set_content(
        "<input aria-label=Name><textarea aria-label=Message></textarea><div contenteditable=true>Note</div>"
        "<input type=email aria-label=Email><input type=search aria-label=Find list=l><datalist id=l>"
        "<option>lamp</option></datalist><select aria-label=Topic><option>Sales</option></select>"
        "<div role=combobox tabindex=0>Pick</div><button>Send</button><a href='#'>Home</a>"
        "<input type=checkbox aria-label=Email-me>"
    )
    snapshot = await browser.snapshot()
    by_text = {e.text or e.line.rsplit("/>", 1)[-1]: e for e in snapshot.elements.values()}  # text, else its label
    typable = {k for k, e in by_text.items() if not cannot_type_into(e)}
    choosable = {k for k, e in by_text.items() if not cannot_choose_in(e)}
    assert {"Name", "Message", "Note", "Email", "Find"} <= typable
    assert not {"Send", "Home", "Topic", "Email-me"} & typable
    assert {"Topic", "Pick", "Find", "Send"} <= choosable  # a button may open a listbox: it stays
    assert not {"Home", "Message", "Email-me"} & choosable


FIELD = st.tuples(
    st.sampled_from(["text", "email", "password", "number", "checkbox", "textarea", "select"]),
    st.booleans(),  # required
    st.booleans(),  # filled
    st.booleans(),  # disabled
    st.sampled_from(["a", "b", "out"]),  # in form a, form b, or outside any form (form=a by attribute)
)


def field_html(i: int, kind: str, required: bool, filled: bool, disabled: bool, where: str) -> str:
    flags = (" required" if required else "") + (" disabled" if disabled else "")
    flags += ' form="a"' if where == "out" else ""
    if kind == "textarea":
        return f"<textarea id=f{i} aria-label=F{i}{flags}>{'x' if filled else ''}</textarea>"
    if kind == "select":
        return f"<select id=f{i} aria-label=F{i}{flags}><option>x</option></select>"
    value = (" checked" if kind == "checkbox" else " value=x") if filled else ""
    return f"<input id=f{i} type={kind} aria-label=F{i}{flags}{value}>"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(FIELD, min_size=1, max_size=6), st.sampled_from(["a", "b"]), st.sampled_from(["submit", "button"]))
async def test_unfilled_names_exactly_the_empty_fields_its_form_needs(
    browser: BrowserSession, fields: list[tuple[str, bool, bool, bool, str]], form: str, kind: str
) -> None:
    """What a click on a button would submit empty although its form needs it (a password, a required field),
    against the browser's own answer: the form's elements (``button.form.elements``, which counts the fields
    outside the form that name it) that are empty, enabled text fields, and required or a password."""
    html = {"a": "", "b": "", "out": ""}
    for i, f in enumerate(fields):
        html[f[4]] += field_html(i, *f)
    html[form] += f"<button id=go type={kind}>Go</button>"
    await browser.page.set_content(f"<form id=a>{html['a']}</form><form id=b>{html['b']}</form>{html['out']}<p>end</p>")
    truth = await browser.page.evaluate(
        """() => {
            const go = document.getElementById('go');
            if (go.type !== 'submit' || !go.form) return [];
            return Array.from(go.form.elements).filter((e) =>
                !e.disabled && !e.value && (e.localName === 'textarea' ||
                  (e.localName === 'input' && ['text', 'email', 'password', 'number'].includes(e.type))) &&
                (e.required || e.type === 'password')).map((e) => e.id).sort();
        }"""
    )
    snapshot = await browser.snapshot()
    go = next(e for e in snapshot.elements.values() if e.attributes.get("id") == "go")
    found = sorted(e.attributes.get("id", "") for e in unfilled(snapshot.elements, go.index))
    assert found == truth, (html, found, truth)
