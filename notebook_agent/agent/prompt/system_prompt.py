"""The page agent's system prompt: the packaged default and the content hash that names a prompt version.

The prompt text is package data (``prompts/system_prompt.md``) so it can be read, diffed and replaced
without touching code; runs record the hash of the prompt they used so they can be compared and repeated.
"""

from __future__ import annotations

import hashlib
from importlib import resources


def default_system_prompt() -> str:
    """The packaged system prompt (``agent/prompt/prompts/system_prompt.md``), for reading or editing."""
    return resources.files(__package__).joinpath("prompts/system_prompt.md").read_text(encoding="utf-8")


def prompt_hash(text: str) -> str:
    """Content hash that names a prompt version (runs record which one they used)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
