"""The oracle's plans for the MiniWoB++ email inbox, whose buttons are icons (delete, star, reply, forward).

Registered into ``miniwob_plans.PLANS`` like the others; see that module for what a plan may read. These read
icons by the snapshot's ``icon=`` name, as a person reads the picture.
"""

from __future__ import annotations

import re

from miniwob_oracle import Action, Element, GiveUp, Memory, State, click
from miniwob_plans import fill_then, need, plan, quoted


def scroll_in(box: Element) -> Action:
    return "scroll", {"index": box.index, "down": True, "num_pages": 0.5}


def _icon_after(s: State, line: int, icon: str) -> Element | None:
    return next((e for e in s.elements if e.line > line and e.attr("icon") == icon), None)


@plan("email-inbox", "email-inbox-reply", "email-inbox-forward", "email-inbox-noscroll")
def email_inbox(s: State, m: Memory) -> Action:
    who = re.search(r"email by (\S+)", s.query)
    if not who:
        raise GiveUp(f"unexpected instruction {s.query!r}")
    name = who.group(1)
    reply = s.find(tag="textarea", id="reply-text")
    if reply is not None:  # the reply form: the text, then the send icon
        send = need(s.find(tag="span", id="send-reply"), "send button")
        return fill_then(s, m, [(reply, quoted(s))], lambda: click(send))
    to = s.find(tag="input", type="text")
    if s.find(tag="textarea", id="forward-text") is not None:  # the forward form: the address, then send
        send = need(s.find(tag="span", id="send-forward"), "send button")
        target = re.search(r"forward that email to (\S+?)\.?$", s.query)
        if not target:
            raise GiveUp(f"no one to forward to in {s.query!r}")
        return fill_then(s, m, [(need(to, "address field"), target.group(1))], lambda: click(send))
    action = s.find("Reply" if "reply" in s.query else "Forward", tag="span")
    if action is not None:  # an email is open
        return click(action)
    row = next((e for e in s.elements if e.label.startswith(name + " ")), None)
    if row is None:
        box = s.find(tag="div", id="main")
        if box is not None and "down:" in box.attr("scrollable"):
            return scroll_in(box)
        raise GiveUp(f"no email by {name} in the list")
    if "trash" in s.query or "star" in s.query:
        icon = "trash" if "trash" in s.query else "star"
        return click(need(_icon_after(s, row.line, icon), f"{icon} icon of the email"))
    return click(row)
