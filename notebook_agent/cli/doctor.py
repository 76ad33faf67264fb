"""``notebook-agent doctor``: which browser and which model a run would use here, and why."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


def doctor_command() -> int:
    from ..browser.session.launch import BrowserNotFoundError, find_browser

    ok = True
    try:
        print(f"browser: {find_browser()}")
    except BrowserNotFoundError as exc:
        ok = False
        print(f"browser: NOT FOUND\n{exc}")
    name = os.environ.get("NOTEBOOK_AGENT_MODEL")
    if not name:
        print("model:   none configured (the offline demo model is used); set NOTEBOOK_AGENT_MODEL=provider:model")
    else:
        from ..llm import get_model
        from ..llm.errors import ModelConfigError

        try:
            m = get_model(name)
            print(f"model:   {m.provider}:{m.id}")
        except ModelConfigError as exc:
            ok = False
            print(f"model:   {name}: {exc}")
    return 0 if ok else 1
