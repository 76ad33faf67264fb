"""An event loop that refuses subprocesses the way Windows' ``SelectorEventLoop`` does, for testing the threaded
browser on Linux.

Jupyter on Windows runs its kernel on a selector loop, whose ``subprocess_exec`` raises NotImplementedError, so
Playwright's async API cannot start its driver there. :class:`RefusingEventLoop` is the Linux selector loop with
exactly that one difference (it still passes the cheap class check, so the package's real probe, a spawn, is
what has to find out). :func:`install` makes it the policy's loop, before a kernel creates its loop.
"""

from __future__ import annotations

import asyncio
from typing import Any


class RefusingEventLoop(asyncio.SelectorEventLoop):
    """A selector loop whose subprocess support is missing, as on Windows."""

    async def _make_subprocess_transport(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("this event loop cannot start subprocesses (like Windows' SelectorEventLoop)")


class RefusingPolicy(asyncio.DefaultEventLoopPolicy):
    """The default policy, handing out :class:`RefusingEventLoop` (as ``WindowsSelectorEventLoopPolicy`` hands
    out selector loops)."""

    _loop_factory = RefusingEventLoop


def install() -> None:
    asyncio.set_event_loop_policy(RefusingPolicy())


#: How to start an ipykernel whose loop refuses subprocesses (``{connection_file}`` is filled in by
#: jupyter_client).
KERNEL_CODE = (
    "import tests.refusing_loop as r; r.install(); from ipykernel import kernelapp; kernelapp.launch_new_instance()"
)
