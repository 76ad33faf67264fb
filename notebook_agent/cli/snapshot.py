"""``notebook-agent snapshot URL [--full-page] [--json]``: print what the model would see on a page.

Useful to check a site before pointing an agent at it, and to measure snapshot size and speed.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

from ..browser.session.browser_session import BrowserSession
from ..browser.session.launch import BrowserNotFoundError
from ..browser.urls import URLError, normalize_url
from ..llm.tokens import count_tokens, exact_available


async def _snapshot(url: str, full_page: bool, as_json: bool) -> int:
    started = time.perf_counter()
    async with BrowserSession() as browser:
        launched = time.perf_counter()
        try:
            await browser.open(url)
        except URLError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        loaded = time.perf_counter()
        snap = await browser.snapshot(full_page=full_page)
        if not as_json:
            print(snap.text)
            return 0
        tokens = count_tokens(snap.text)
        out: dict[str, Any] = {
            "url": snap.url,
            "title": snap.title,
            "full_page": snap.full_page,
            "viewport": list(snap.viewport),
            "page_size": list(snap.page_size),
            "scroll": list(snap.scroll),
            "pixels_above": snap.pixels_above,
            "pixels_below": snap.pixels_below,
            "frames": snap.frame_count,
            "elements": [
                {
                    "index": e.index,
                    "tag": e.tag,
                    "role": e.role,
                    "text": e.text,
                    "attributes": e.attributes,
                    "frame": e.frame,
                    "box": list(e.box) if e.box else None,
                    "new": e.is_new,
                    "in_viewport": e.in_viewport,
                    "disabled": e.disabled,
                }
                for e in snap.elements.values()
            ],
            "text": snap.text,
            "chars": len(snap.text),
            "tokens": tokens,
            "tokens_exact": exact_available(),
            "timings_ms": {
                **snap.timings,
                "launch": round((launched - started) * 1000, 1),
                "load": round((loaded - launched) * 1000, 1),
            },
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
        return 0


def snapshot_command(url: str, full_page: bool = False, as_json: bool = False) -> int:
    """Entry point for the main CLI. Returns the process exit code (0 ok, 1 no browser, 2 page failed)."""
    try:
        return asyncio.run(_snapshot(normalize_url(url), full_page, as_json))
    except BrowserNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except URLError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover - manual use: python -m notebook_agent.cli.snapshot URL
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        print("usage: python -m notebook_agent.cli.snapshot URL [--full-page] [--json]", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(snapshot_command(args[0], "--full-page" in sys.argv, "--json" in sys.argv))

__all__ = ["snapshot_command"]
