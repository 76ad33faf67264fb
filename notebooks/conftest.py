"""nbval runs these notebooks with --nbval-lax: a cell fails only if it raises. The magics report a mistake
(a bad option, a run reference that matches nothing) as one printed line instead of raising, so a notebook
could pass while a cell shows an error. This hook fails such a cell: every magic error line starts the way
``notebook_agent.notebook.commands.ERROR_LINE`` says (``%agent compare: ...``, ``%%agent: ...``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from notebook_agent.notebook.commands import ERROR_LINE


def magic_errors(outputs: list[Any]) -> list[str]:
    """The magic error lines in a cell's outputs (streams and text/plain displays)."""
    texts = [o.get("text", "") for o in outputs if o.get("output_type") == "stream"]
    texts += [o.get("data", {}).get("text/plain", "") for o in outputs if "data" in o]
    return [line for text in texts for line in text.splitlines() if ERROR_LINE.match(line)]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    result = yield
    errors = magic_errors(getattr(item, "test_outputs", None) or [])
    if errors:
        source = getattr(getattr(item, "cell", None), "source", "")
        pytest.fail(f"The cell printed a magic error:\n  {source}\n" + "\n".join(errors), pytrace=False)
    return result
