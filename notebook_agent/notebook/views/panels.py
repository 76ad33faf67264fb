"""The Approve / Deny panel of one approval: what the action is, its target, a crop of it, the buttons.

The buttons answer the :class:`~notebook_agent.agent.Approval` itself (from whatever thread the widget callback
runs on); :class:`~.run_view.RunView` places the panel on the current card and removes it when the run says the
approval was answered.
"""

from __future__ import annotations

import ipywidgets as w

from ...agent import Approval
from .html import args_html, esc


def approval_panel(approval: Approval, warning: w.HTML) -> w.VBox:
    """The panel for ``approval``, with ``warning`` (the "this kernel can't receive the click" line) last."""
    request = approval.request
    approve = w.Button(description="Approve", button_style="success", icon="check")
    approve.add_class("na-approve")
    deny = w.Button(description="Deny", button_style="danger", icon="times")
    deny.add_class("na-deny")
    reason = w.Text(
        placeholder="reason (optional, the model sees it)", continuous_update=False, layout=w.Layout(width="320px")
    )
    reason.add_class("na-deny-reason")
    approve.on_click(lambda _b: approval.approve())
    deny.on_click(lambda _b: approval.deny(reason.value))
    target = ""
    if request.element:
        el = request.element
        target = f"<div class='na-kv'><span class='k'>Target</span> &lt;{esc(el.get('tag', ''))}&gt; "
        target += f"{esc((el.get('text') or '')[:120])}</div>"
    info = w.HTML(
        f"<div class='na-kv'><b>Approve this action?</b> <span class='na-warn'>{esc(request.reason)}</span>"
        f"</div><div class='na-kv'><span class='k'>Action</span> <span class='na-code'>{esc(request.action)} "
        f"{args_html(request.args)}</span></div>{target}<div class='na-kv'><span class='k'>Page</span> "
        f"{esc(request.url)}</div>"
    )
    parts: list[w.Widget] = [info]
    crop = approval.crop
    if crop:
        width = int.from_bytes(crop[16:20], "big") if crop[:4] == b"\x89PNG" else 480  # IHDR width
        img = w.Image(
            value=crop,
            format="png",
            layout=w.Layout(width=f"{min(width, 480)}px", max_width="100%", height="auto", object_fit="contain"),
        )
        img.add_class("na-approval-crop")
        parts.append(img)
    parts.append(w.HBox([approve, deny, reason]))
    parts.append(warning)
    panel = w.VBox(parts)
    panel.add_class("na-approval")
    return panel
