"""Fixtures for the opt-in real-model tests (marker ``local_llm``): a model file, llama-server, page server.

Opt in with ``NOTEBOOK_AGENT_LOCAL_LLM=1``: the model is fetched (``scripts/fetch_test_model.py``) and
llama-server built if missing, and any failure to do so fails the test. Without the variable the tests run
only when both are already cached, and skip with the reason otherwise.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from notebook_agent.llm.local.llama_server import LocalServerError, ensure_llama_server, find_llama_server
from tests.browser.conftest import browser, shared_browser  # noqa: F401

OPT_IN_ENV = "NOTEBOOK_AGENT_LOCAL_LLM"
ROOT = Path(__file__).resolve().parents[2]
PAGES = Path(__file__).parent / "pages"


def _fetch_script() -> ModuleType:
    if "fetch_test_model" in sys.modules:
        return sys.modules["fetch_test_model"]
    spec = importlib.util.spec_from_file_location("fetch_test_model", ROOT / "scripts" / "fetch_test_model.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fetch_test_model"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def local_model_file(size: str) -> Path:
    """The GGUF for ``size`` ("0.5b"/"1.5b") with llama-server available, or a skip/fail as the doc says."""
    fetch = _fetch_script()
    if not os.environ.get(OPT_IN_ENV):
        missing = [
            what
            for what, ok in (
                (f"the {size} model (scripts/fetch_test_model.py {size})", fetch.cached(size) is not None),
                ("llama-server (scripts/build_llama_server.py)", find_llama_server() is not None),
            )
            if not ok
        ]
        if missing:
            pytest.skip(f"not cached: {' and '.join(missing)}; set {OPT_IN_ENV}=1 to fetch/build them")
    try:
        ensure_llama_server()
        path: Path = fetch.fetch(size)
    except (SystemExit, LocalServerError) as exc:
        pytest.fail(f"{OPT_IN_ENV} is set but the local model is not available: {exc}")
    return path


@dataclass
class Recorder:
    """Request bodies as the openai SDK put them on the wire (an httpx request hook)."""

    bodies: list[dict[str, Any]] = field(default_factory=list)

    async def hook(self, request: Any) -> None:
        if request.url.path.endswith("/chat/completions"):
            self.bodies.append(json.loads(request.content))

    def client(self) -> Any:
        import openai

        return openai.DefaultAsyncHttpxClient(event_hooks={"request": [self.hook]})


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture(scope="session")
def pages() -> Iterator[str]:
    """``tests/local_llm/pages`` on 127.0.0.1; yields the base URL."""

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(PAGES)))
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


_PROMPT = re.compile(r"prompt eval time =\s*([\d.]+) ms /\s*(\d+) tokens")
_GEN = re.compile(r"(?<!prompt )eval time =\s*([\d.]+) ms /\s*(\d+) tokens .*?([\d.]+) tokens per second")


def server_timings(log: Path, since: int = 0) -> list[dict[str, float]]:
    """llama-server's per-request timings from its log (after byte offset ``since``)."""
    text = log.read_bytes()[since:].decode(errors="replace")
    prompts, gens = _PROMPT.findall(text), _GEN.findall(text)
    return [
        {"prompt_ms": float(a), "prompt_tokens": int(b), "gen_ms": float(c), "gen_tokens": int(d), "tok_s": float(e)}
        for (a, b), (c, d, e) in zip(prompts, gens, strict=False)
    ]
