"""The managed llama-server of ``local:PATH.gguf``, with a stand-in binary: start, reuse, stop, clear errors.

The stand-in is a small Python script that behaves like llama-server where the manager looks (``--port``,
``/health``), so these tests need neither a build nor a model; the real binary is exercised by the
``local_llm`` integration tests.
"""

from __future__ import annotations

import os
import stat
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from notebook_agent.llm import get_model
from notebook_agent.llm.local import llama_server as local_server
from notebook_agent.llm.local.llama_server import LocalServerError, get_server, gguf_string, template_for

FAKE_SERVER = """#!{python}
import sys, http.server
args = sys.argv[1:]
open({argv_file!r}, "w").write(" ".join(args))
if {fail!r}:
    sys.stderr.write("error: failed to load model: not a GGUF file\\n")
    sys.exit(1)
port = int(args[args.index("--port") + 1])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.end_headers()
        self.wfile.write(b'{{"status": "ok"}}')
    def log_message(self, *a):
        pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


def gguf_with(entries: dict[str, str]) -> bytes:
    """A minimal GGUF header with string metadata (enough for the template detection)."""
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(entries) + 1)
    out += struct.pack("<Q", 14) + b"general.layers" + struct.pack("<II", 4, 24)  # a u32 to skip over
    for key, value in entries.items():
        data = value.encode()
        out += struct.pack("<Q", len(key)) + key.encode() + struct.pack("<IQ", 8, len(data)) + data
    return out


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("NOTEBOOK_AGENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("NOTEBOOK_AGENT_LLAMA_SERVER", raising=False)
    yield tmp_path
    local_server.stop_all()


def fake_binary(tmp_path: Path, *, fail: bool = False) -> Path:
    path = tmp_path / ("llama-server-fail" if fail else "llama-server")
    path.write_text(FAKE_SERVER.format(python=sys.executable, argv_file=str(tmp_path / "argv.txt"), fail=fail))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def qwen_model(tmp_path: Path) -> Path:
    path = tmp_path / "qwen.gguf"
    stock = "{%- if tools %}... within <tool_call></tool_call> XML tags:\\n<tool_call>... <|im_start|>"
    path.write_bytes(gguf_with({"general.name": "Qwen2.5 Coder", "tokenizer.chat_template": stock}))
    return path


def test_gguf_metadata_and_template_choice(tmp_path: Path) -> None:
    model = qwen_model(tmp_path)
    assert gguf_string(model, "general.name") == "Qwen2.5 Coder"
    assert gguf_string(model, "missing.key") is None
    template = template_for(model)
    assert template is not None and template.name == "qwen25_bare_json_tools.jinja"
    text = template.read_text()
    assert "<tool_call>" not in text and "reply with only a json object" in text
    other = tmp_path / "other.gguf"
    other.write_bytes(gguf_with({"tokenizer.chat_template": "{{ messages }}"}))
    assert template_for(other) is None  # models whose template already works are left alone


def test_server_starts_once_per_model_and_stops_at_exit(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTEBOOK_AGENT_LLAMA_SERVER", str(fake_binary(cache)))
    model_path = qwen_model(cache)
    server = get_server(model_path)
    assert server.alive() and server.base_url == f"http://127.0.0.1:{server.port}/v1"
    assert os.getpgid(server.process.pid) != os.getpgid(0)  # an Interrupt to the kernel's group misses it
    argv = (cache / "argv.txt").read_text().split()
    assert argv[argv.index("-m") + 1] == str(model_path) and argv[argv.index("--host") + 1] == "127.0.0.1"
    assert "--jinja" in argv and "--cache-prompt" in argv
    assert argv[argv.index("--chat-template-file") + 1].endswith("qwen25_bare_json_tools.jinja")
    assert get_server(model_path) is server  # kept alive across runs in this process

    model = get_model(f"local:{model_path}")
    assert model.base_url == server.base_url + "/"  # type: ignore[attr-defined]
    assert model.output_mode == "json_schema" and model.provider == "local"  # type: ignore[attr-defined]

    local_server.stop_all()
    assert not server.alive()


def test_missing_model_file(cache: Path) -> None:
    with pytest.raises(LocalServerError, match=r"does not exist\. Pass the path of a \.gguf file"):
        get_model(f"local:{cache / 'nope.gguf'}")


def test_server_that_exits_on_start_shows_its_log(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTEBOOK_AGENT_LLAMA_SERVER", str(fake_binary(cache, fail=True)))
    with pytest.raises(LocalServerError, match=r"exited on start \(code 1\)") as info:
        get_server(qwen_model(cache))
    assert "failed to load model: not a GGUF file" in str(info.value)


def test_bad_server_env_and_no_build(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NOTEBOOK_AGENT_LLAMA_SERVER", str(cache / "missing"))
    with pytest.raises(LocalServerError, match="is not an executable file"):
        get_server(qwen_model(cache))
    monkeypatch.delenv("NOTEBOOK_AGENT_LLAMA_SERVER")
    monkeypatch.setattr(local_server.shutil, "which", lambda name: None)
    with pytest.raises(LocalServerError, match="No llama-server found"):
        get_server(qwen_model(cache), build=False)


def test_build_without_cmake_says_what_to_install(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_server.shutil, "which", lambda name: None if name == "cmake" else f"/usr/bin/{name}")
    with pytest.raises(LocalServerError, match=r"needs cmake, not found on PATH.*apt-get install cmake g\+\+"):
        local_server.build_llama_server(log=None)


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has exited


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux-only")
def test_server_dies_with_a_killed_process(cache: Path) -> None:
    """A kernel killed with SIGKILL runs no atexit: the kernel still stops its server (PR_SET_PDEATHSIG)."""
    import signal
    import subprocess
    import time

    script = (
        "import sys; from notebook_agent.llm.local.llama_server import get_server; "
        f"print(get_server({str(qwen_model(cache))!r}).process.pid, flush=True); sys.stdin.read()"
    )
    env = {**os.environ, "NOTEBOOK_AGENT_LLAMA_SERVER": str(fake_binary(cache)), "PYTHONPATH": os.getcwd()}
    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True
    )
    assert parent.stdout is not None
    server_pid = int(parent.stdout.readline())
    assert _running(server_pid)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 30  # a bound on waiting, not a timing assertion
    while _running(server_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    survived = _running(server_pid)
    if survived:
        os.kill(server_pid, signal.SIGKILL)  # do not leak it when the test fails
    assert not survived
