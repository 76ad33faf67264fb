"""``check_models`` / ``%agent models`` / ``notebook-agent models``: key names only, packages, local servers."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from notebook_agent.llm.availability import check_models, models_table
from notebook_agent.llm.registry import PROVIDERS

FAKE_KEY = "sk-fake-value-that-must-never-be-printed-1234"


class _Tags(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = json.dumps({"models": [{"name": "qwen3:4b"}, {"name": "llama3.2:1b"}]}).encode()
        self.send_response(200 if self.path == "/api/tags" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def fake_ollama() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Tags)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for info in PROVIDERS.values():
        for name in info.key_envs:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    monkeypatch.setenv("GEMINI_API_KEY", FAKE_KEY)
    return monkeypatch


def test_keys_by_name_and_a_running_ollama(clean_env: pytest.MonkeyPatch, fake_ollama: str) -> None:
    clean_env.setenv("OLLAMA_HOST", fake_ollama)
    statuses = {s.name: s for s in check_models()}
    assert set(statuses) == set(PROVIDERS)
    assert statuses["anthropic"].keys_set == ("ANTHROPIC_API_KEY",) and statuses["anthropic"].ready
    assert statuses["openai"].keys_set == () and not statuses["openai"].ready
    assert statuses["ollama"].server == f"running at http://{fake_ollama} (2 models)"
    table = models_table(list(statuses.values()))
    assert FAKE_KEY not in table
    assert "ANTHROPIC_API_KEY" in table and "none (set OPENAI_API_KEY)" in table
    assert f"running at http://{fake_ollama}" in table


def test_ollama_not_running(clean_env: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    clean_env.setenv("OLLAMA_HOST", f"http://127.0.0.1:{port}")
    (ollama,) = [s for s in check_models() if s.name == "ollama"]
    assert ollama.server == f"not running at http://127.0.0.1:{port}" and not ollama.ready


def test_the_notebook_command_and_the_cli(
    clean_env: pytest.MonkeyPatch, fake_ollama: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from notebook_agent.cli.main import main
    from notebook_agent.notebook.commands import COMMANDS, Commands

    clean_env.setenv("OLLAMA_HOST", fake_ollama)
    assert "models" in COMMANDS and "trace" in COMMANDS
    Commands(lambda *a, **k: None).models([])
    notebook = capsys.readouterr().out
    assert main(["models"]) == 0
    terminal = capsys.readouterr().out
    for out in (notebook, terminal):
        assert FAKE_KEY not in out
        assert "GEMINI_API_KEY" in out and "running at" in out and "provider" in out
