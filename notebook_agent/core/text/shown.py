"""Text a person reads, escaped for the output it goes to: one function, :func:`shown`, for every view.

A view shows text from outside (a model's memory and goals, an action's result, a page's title, a table cell,
an error) inside markup it writes itself. Escaped one way in one place, nothing in that text can become markup:
no tag from ``<``, no emphasis from ``*``, no code from a backtick, no table cell from ``|``, no break lost to a
newline, no lone surrogate that fails to encode when the output is sent or saved.

Jupyter typesets every HTML and Markdown output with MathJax, which reads two ``$`` in the text as a formula:
"AeroBeat $89.00; Summit $149.00" shows as "89.00; *Summit* 149.00". No escape of the character prevents that
(MathJax reads the rendered text, not the source), but MathJax skips an element whose class is
``mathjax_ignore`` (MathJax 3: JupyterLab, Notebook 7) or ``tex2jax_ignore`` (MathJax 2: nbconvert's HTML), and
everything inside it. So every output block a view writes is wrapped once, by :func:`html_block` or
:func:`markdown_block`, with :data:`NO_MATH`.

May import nothing of the package but ``core.text`` (this is the base layer).
"""

from __future__ import annotations

import html
import re
from typing import Literal

from . import clean_text

Output = Literal["html", "attribute", "markdown", "plain"]
"""Where text goes: HTML text, an HTML attribute's value, Markdown text (a table cell too), plain text."""

NO_MATH = "mathjax_ignore tex2jax_ignore"
"""The classes that keep MathJax (3, then 2) out of an element and everything in it."""

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|$~^=:])")
"""ASCII punctuation Markdown (CommonMark, GFM tables, Jupyter's math) may read as syntax; escaped with a
backslash, which CommonMark allows before any ASCII punctuation."""


def shown(value: object, to: Output = "html") -> str:
    """``value`` as text for ``to``: lone surrogates made U+FFFD, then

    * ``html``: ``&``, ``<``, ``>`` and quotes as entities, a newline as ``<br>``;
    * ``attribute``: the same, with a newline as ``&#10;`` (an attribute holds no tag);
    * ``markdown``: ``&``, ``<``, ``>`` as entities, Markdown's punctuation backslash-escaped, a newline as
      ``<br>`` (so a table cell stays one line);
    * ``plain``: the text itself.

    Put inside :func:`html_block` / :func:`markdown_block`, where MathJax does not look.
    """
    text = clean_text(value if isinstance(value, str) else str(value))
    text = text.replace("\x00", "").replace("\r\n", "\n").replace("\r", "\n")
    if to == "plain":
        return text
    if to == "markdown":
        escaped = html.escape(text, quote=False)
        return _MARKDOWN_SPECIAL.sub(r"\\\1", escaped).replace("\n", "<br>")
    escaped = html.escape(text, quote=True)
    return escaped.replace("\n", "&#10;" if to == "attribute" else "<br>")


def html_block(inner: str, *, cls: str = "", style: str = "", tag: str = "div") -> str:
    """One output's HTML: ``inner`` (built from :func:`shown` text) in an element MathJax leaves alone."""
    classes = f"{cls} {NO_MATH}".strip()
    styled = f' style="{style}"' if style else ""
    return f'<{tag} class="{classes}"{styled}>{inner}</{tag}>'


def markdown_block(inner: str) -> str:
    """One output's Markdown: ``inner`` (built from :func:`shown` text) in a ``div`` MathJax leaves alone; the
    blank lines keep it Markdown inside the HTML element (CommonMark's rule for HTML blocks)."""
    return f'<div class="{NO_MATH}">\n\n{inner}\n\n</div>'
