"""What the running Jupyter kernel can do for a run, by ipykernel version (measured, see the runtime notes).

The one difference that matters to a user: whether a widget click reaches the kernel while a cell is blocked
in ``await agent_run``. A kernel runs one shell message at a time, and a cell sitting in ``await`` holds that
turn, so the click (a comm message on the same channel) waits behind the cell:

- ipykernel >= 7.4 dispatches comm messages concurrently with an awaiting cell: the click arrives.
- ipykernel 7.0-7.3 only lets it through when the front end sends comms on a kernel *subshell* (JupyterLab
  >= 4.4 does by default, and has then created at least one subshell); otherwise it waits.
- ipykernel 6 has no subshells: the click waits until the cell ends, which it never does on its own.

The run cannot fix this, but it can say so in the panel that waits for the click, instead of hanging silently
until the approval timeout.
"""

from __future__ import annotations

import re
import sys
from typing import Any

CONCURRENT_COMMS = (7, 4)
"""The first ipykernel that handles widget messages while a cell awaits."""


def _version_tuple(version: str) -> tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", version)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def clicks_blocked_while_awaiting(version: str, subshells: int) -> bool:
    """Whether a click cannot reach an ipykernel of ``version`` while a cell awaits (``subshells``: how many
    subshells the front end has created; only 7.0-7.3 route comms through them)."""
    v = _version_tuple(version)
    if v >= CONCURRENT_COMMS:
        return False
    return not (v >= (7, 0) and subshells > 0)


def _running_kernel() -> Any:
    """The ipykernel kernel object of this process, or None (plain IPython, a script, a test shell)."""
    if "ipykernel" not in sys.modules:
        return None
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return getattr(shell, "kernel", None)


def _subshell_count(kernel: Any) -> int:  # ipykernel's, whose shape changes across versions
    try:
        return len(kernel.shell_channel_thread.manager.list_subshell())
    except Exception:  # ipykernel 6 has no subshells; any other shape: assume none
        return 0


def blocked_kernel_version() -> str | None:
    """The ipykernel version if this kernel cannot receive a click while a cell awaits a run, else None."""
    kernel = _running_kernel()
    if kernel is None:
        return None
    import ipykernel

    version = str(getattr(ipykernel, "__version__", "0"))
    return version if clicks_blocked_while_awaiting(version, _subshell_count(kernel)) else None


def blocked_wait_message(version: str, what: str = "click") -> str:
    """What the panel says when a cell awaits the run on a kernel that cannot receive ``what`` meanwhile."""
    return (
        f"This kernel (ipykernel {version}) can't receive the {what} while a cell waits on the run; interrupt the "
        f"waiting cell (the run keeps waiting here), or upgrade to ipykernel ≥ "
        f"{CONCURRENT_COMMS[0]}.{CONCURRENT_COMMS[1]}."
    )
