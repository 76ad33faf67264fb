"""Form actions: type into a field (reporting its live value), choose a dropdown option (native, datalist and
ARIA listboxes; exact, case-insensitive, then substring match) and press keys.
"""

from __future__ import annotations

import time
from typing import Any

from playwright.async_api import Error as PlaywrightError

from ...core.abort import AbortSignal
from ...core.action_facts import ActionFacts, ScriptCall
from ..errors import ActionError, first_line
from .base import ActionHost, BrowserTool, is_connected, match_option, quote, read_after
from .params import InputTextParams, SelectParams, SendKeysParams
from .scripts import (
    ACTIVE_JS,
    EDIT_INFO_JS,
    KEY_TARGET_JS,
    OPTION_HANDLE_JS,
    OPTIONS_INFO_JS,
    SELECT_FALLBACK_JS,
    SHOWN_JS,
    SYNTHETIC_CLICK_JS,
    SYNTHETIC_INPUT_JS,
    VALUE_JS,
)


class InputTextTool(BrowserTool):
    name = "input_text"
    description = "Replace the value of a text field or contenteditable."
    parameters = InputTextParams
    failure = "Failed to input text"
    risk = "typing"
    facts = ActionFacts(
        on_element=True,
        order=4,
        small="Type text into field [index].",
        slots={"text": "text"},
        script=lambda c: [f"{c.aw}{c.target}.fill({c.typed(c.args.get('text'))})"],
    )

    async def run(self, args: InputTextParams, signal: AbortSignal) -> str:
        el, info, frame, _ = await signal.race(self.browser.resolve(args.index))
        kind = await signal.race(el.evaluate(EDIT_INFO_JS))
        target = el
        if kind["tag"] == "select":
            raise ActionError(f"{info.describe()} is a dropdown; use select_dropdown_option.")
        if kind["tag"] == "input" and kind["type"] in ("checkbox", "radio"):
            raise ActionError(f"{info.describe()} is a {kind['type']}; click it with click_element_by_index.")
        if kind["tag"] == "input" and kind["type"] == "file":
            raise ActionError(f"{info.describe()} is a file input; typing into it is not supported.")
        if not kind["editable"]:
            # Wrappers and custom editors: a click often focuses the real text field inside. Never click
            # buttons or links for this (that would submit or navigate).
            active = None
            if info.tag not in ("button", "a", "input", "summary") and info.role not in ("button", "link"):
                try:
                    await signal.race(el.click(timeout=self.timeout_ms))
                except PlaywrightError:
                    pass
                active = (await signal.race(frame.evaluate_handle(ACTIVE_JS, el))).as_element()
            inner = await signal.race(active.evaluate(EDIT_INFO_JS)) if active is not None else None
            if active is None or not inner or not inner["editable"]:
                clicked = " and clicking it did not focus one" if info.tag not in ("button", "a") else ""
                raise ActionError(
                    f"{info.describe()} is not a text field (input, textarea or contenteditable){clicked}."
                )
            target, kind = active, inner
        if kind["disabled"]:
            raise ActionError(f"{info.describe()} is disabled.")
        if kind["readonly"]:
            raise ActionError(f"{info.describe()} is read-only.")
        via = ""
        secret = info.sensitive or kind.get("type") == "password"
        typing = f"{len(args.text)} characters" if secret else quote(args.text)
        await self.progress(f"typing {typing} into {info.describe()}")
        async with self.browser.watch() as watch:
            try:
                await signal.race(target.fill(args.text, timeout=self.timeout_ms))
            except PlaywrightError as exc:
                message = first_line(exc)
                if "Malformed value" in message or "Cannot type text into" in message or "cannot be filled" in message:
                    raise ActionError(f"could not type {quote(args.text)} into {info.describe()}: {message}") from None
                if not await is_connected(target):
                    raise ActionError(
                        f"{info.describe()} disappeared before typing. Use the latest browser state."
                    ) from None
                await signal.race(target.evaluate(SYNTHETIC_INPUT_JS, args.text))
                via = f" (using a JavaScript fallback: {message})"
            await self.progress("typed; waiting for the page to react")
            # a field with no input/change handler (nor one above it) cannot navigate on typing: one round trip
            # checks, and lets a navigation already started show up, instead of a grace wait on every field
            nav, _ = await signal.race(read_after(target))
            await watch.settle(signal, grace=0.02, may_navigate=nav or watch.saw_anything)
            effects = watch.describe()
        value = ""
        try:
            value = str(await signal.race(target.evaluate(VALUE_JS)))
        except PlaywrightError:
            pass
        if info.sensitive or kind.get("type") == "password":
            shown = (
                f"Typed {len(args.text)} characters into {info.describe()}{via}; "
                f"it now holds {len(value)} characters (masked)."
            )
        else:
            shown = f"Typed {quote(args.text)} into {info.describe()}{via}; its value is now {quote(value, 200)}."
            if value != args.text and value.strip() != args.text.strip():
                shown += " (The page changed or limited the input.)"
        return shown + (" " + effects if effects else "")


def _select_script(call: ScriptCall) -> list[str]:
    """A native select by its option's label; a field with suggestions (a datalist) by typing the option's text;
    an ARIA listbox or combobox by opening it and clicking the option."""
    text = call.literal(call.args.get("text"))
    if call.tag == "select":
        return [f"{call.aw}{call.target}.select_option(label={text})"]
    if call.tag == "input":
        return [f"{call.aw}{call.target}.fill({text})"]
    return [f"{call.aw}{call.target}.click()", f'{call.aw}page.get_by_role("option", name={text}).first.click()']


class SelectDropdownOptionTool(BrowserTool):
    name = "select_dropdown_option"
    description = "Choose the option with this text in a select, combobox or listbox."
    parameters = SelectParams
    failure = "Failed to select option"
    risk = "element"
    facts = ActionFacts(
        on_element=True,
        order=5,
        small="Choose the option with this text in dropdown [index].",
        slots={"text": "option"},
        script=_select_script,
    )

    async def run(self, args: SelectParams, signal: AbortSignal) -> str:
        el, info, _, _ = await signal.race(self.browser.resolve(args.index))
        data = await signal.race(el.evaluate(OPTIONS_INFO_JS, False))
        opened = False
        if data["kind"] == "custom" and not data["options"] and not data.get("popup"):
            # Never act when the action does not apply: clicking a plain button to "open" it could submit.
            raise ActionError(
                f"{info.describe()} is not a dropdown (not a <select>, an input with suggestions, or an element "
                "marked as a listbox/combobox), so nothing was clicked. If it opens a menu, click it, then click the "
                "option."
            )
        if data["kind"] == "custom" and not data["options"]:
            # Open it like a person would, then look for options (they may render elsewhere on the page).
            try:
                await signal.race(el.click(timeout=self.timeout_ms))
                opened = True
            except PlaywrightError:
                pass
            deadline = time.monotonic() + 1.5
            while True:
                data = await signal.race(el.evaluate(OPTIONS_INFO_JS, True))
                if data["options"] or time.monotonic() > deadline:
                    break
                await signal.sleep(0.1)
        options = data["options"]
        if not options:
            raise ActionError(
                f"{info.describe()} has no options to choose from (not a <select>, and no role=option items appeared"
                f"{' after clicking it' if opened else ''}). Click it to open it, then click the option."
            )
        texts = [o["text"] for o in options]
        k, candidates = match_option(texts, args.text)
        if k is None and data["kind"] in ("select", "datalist"):
            values = [o["value"] for o in options]
            if args.text in values:
                k = values.index(args.text)
        if k is None:
            if candidates:
                listed = ", ".join(quote(texts[i], 40) for i in candidates[:10])
                raise ActionError(
                    f"{quote(args.text)} matches several options of {info.describe()}: {listed}. Give the full text."
                )
            listed = ", ".join(quote(t, 40) for t in texts[:30])
            more = f" and {len(texts) - 30} more" if len(texts) > 30 else ""
            raise ActionError(
                f"no option matching {quote(args.text)} in {info.describe()}. Available options: {listed}{more}."
            )
        chosen = options[k]
        if chosen.get("disabled"):
            raise ActionError(f"option {quote(chosen['text'])} of {info.describe()} is disabled.")
        multiple = data["kind"] == "select" and bool(data.get("multiple"))
        if data["kind"] == "select" and chosen.get("selected"):
            # Small models re-select the same option step after step; say plainly that this step is done.
            held = ", ".join(quote(o["text"]) for o in options if o.get("selected"))
            return (
                f"Option {quote(chosen['text'])} is already selected in {info.describe()}; nothing changed."
                + (f" Its selected options are {held}." if multiple else "")
                + " Go on with the next part of the task."
            )
        # a multiple select adds the option to those already selected (as a ctrl-click does): selecting the
        # options a task names one after another leaves them all selected, not only the last
        chosen_indices = [i for i, o in enumerate(options) if o.get("selected")] + [k] if multiple else [k]
        via = ""
        async with self.browser.watch() as watch:
            if data["kind"] == "select":
                try:
                    await signal.race(el.select_option(index=chosen_indices, timeout=self.timeout_ms))
                except PlaywrightError as exc:
                    await signal.race(el.evaluate(SELECT_FALLBACK_JS, k))
                    via = f" (using a JavaScript fallback: {first_line(exc)})"
            elif data["kind"] == "datalist":
                await signal.race(el.fill(chosen["value"], timeout=self.timeout_ms))
            else:
                option = (await signal.race(el.evaluate_handle(OPTION_HANDLE_JS, k))).as_element()
                if option is None:
                    raise ActionError(f"the options of {info.describe()} changed while selecting; try again.")
                try:
                    await signal.race(option.click(timeout=self.timeout_ms))
                except PlaywrightError as exc:
                    await signal.race(option.evaluate(SYNTHETIC_CLICK_JS))
                    via = f" (using a JavaScript click: {first_line(exc)})"
            # a native select or datalist input navigates only through a handler or listener (onchange): check,
            # in a round trip that also lets a navigation already started show up; custom dropdowns keep the grace
            quiet = False
            if data["kind"] in ("select", "datalist"):
                nav, _ = await signal.race(read_after(el))
                quiet = not nav and not watch.saw_anything
            await watch.settle(signal, may_navigate=not quiet)
            effects = watch.describe()
        shown = ""
        try:
            shown = str(await signal.race(el.evaluate(SHOWN_JS)))
        except PlaywrightError:
            pass
        text = f"Selected option {quote(chosen['text'])} in {info.describe()}{via}."
        if multiple:
            text += f" Its selected options are now {shown} (each option selected is added to those already selected)."
        elif data["kind"] == "select":
            text += f" The selected option is now {quote(shown)}"
            if chosen["value"] and chosen["value"] != chosen["text"]:
                text += f" (value {quote(chosen['value'])})"
            text += "."
        elif shown:
            text += f" It now shows {quote(shown)}."
        return text + (" " + effects if effects else "")


class SendKeysTool(BrowserTool):
    name = "send_keys"
    description = (
        "Press keys (Playwright names: Enter to submit, Tab, Escape, ArrowDown, Control+A; several: separated by "
        "spaces) on the focused element, or on [index]."
    )
    parameters = SendKeysParams
    failure = "Failed to send keys"
    risk = "keys"
    facts = ActionFacts(
        on_element=True,
        order=9,
        small="Press keys (Enter, Tab, Escape, ArrowDown, Control+A; several: space between), on [index] if given.",
        script=lambda c: [
            f"{c.aw}{c.target if c.args.get('index') is not None else 'page.keyboard'}.press({c.literal(key)})"
            for key in key_sequence(c.args.get("keys"))
        ],
    )

    async def run(self, args: SendKeysParams, signal: AbortSignal) -> str:
        page = await self.browser.ensure_page()
        keys = args.keys.strip()
        if not keys:
            raise ActionError("no keys given.")
        sequence = key_sequence(keys)
        target = ""
        if args.index is not None:
            el, info, _, _ = await signal.race(self.browser.resolve(args.index))
            await signal.race(el.focus())
            target = f" on {info.describe()}"
        async with self.browser.watch() as watch:
            for key in sequence:
                try:
                    await signal.race(page.keyboard.press(key))
                except PlaywrightError as exc:
                    msg = first_line(exc)
                    if "Unknown key" in msg:
                        raise ActionError(
                            f"unknown key {quote(key)}. Use names like Enter, Tab, Escape, ArrowDown, Control+A; "
                            "to type text use input_text."
                        ) from None
                    raise
            await watch.settle(signal)
            effects = watch.describe()
        return f"Pressed {keys}{target}." + (" " + effects if effects else "")


def key_sequence(keys: object) -> list[str]:
    """The keys a ``send_keys`` presses, in order: several are separated by spaces (a lone space is the Space
    key)."""
    text = keys.strip() if isinstance(keys, str) else ""
    return text.split() if " " in text and text != " " else [text] if text else []


async def key_target(browser: ActionHost, index: int | None) -> dict[str, Any] | None:
    """What keys pressed now would act on: element ``[index]`` or the focused element, with whether Enter
    submits its form and that form's submit buttons (``{tag, text, attributes, enter_submits, submits}``), so
    an approval policy can judge "Enter" by the button it presses. None when nothing is focused."""
    try:
        if index is not None:
            el, _, _, _ = await browser.resolve(index)
            return await el.evaluate(KEY_TARGET_JS)
        page = await browser.ensure_page()
        return await page.evaluate(KEY_TARGET_JS, None)
    except (ActionError, PlaywrightError):
        return None
