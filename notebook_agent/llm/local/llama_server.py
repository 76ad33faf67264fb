"""``local:PATH.gguf``: run a GGUF model on this machine behind a managed llama.cpp ``llama-server``.

The model file may also be ``hf:OWNER/REPO/FILE.gguf``, fetched once from the Hugging Face Hub (:mod:`.model_files`).

One job: turn a model file into a ready OpenAI-compatible endpoint on 127.0.0.1 so that a real model works
with no API key and no internet. The binary is taken from ``$NOTEBOOK_AGENT_LLAMA_SERVER``, else ``PATH``,
else built once from the llama.cpp source that ships inside the ``llama-cpp-python`` sdist on PyPI (only the
``llama-server`` target, ~4 minutes on 2 cores) into ``~/.cache/notebook_agent/llama.cpp/<version>/``.

The server is started with ``--jinja``, one slot (all of the context for the one agent, and the prompt cache
reused from step to step), and, for Qwen2.5 models whose stock template asks for ``<tool_call>`` tags the
Coder models never write, the adjusted template shipped in ``templates/qwen25_bare_json_tools.jinja`` (tool
calls as bare JSON, which llama.cpp then parses). It runs in its own process group, so a notebook Interrupt
(SIGINT) does not reach it, is kept alive per model path for the life of the Python process, and is stopped
at exit (and, on Linux, by the kernel when the process dies without running atexit). :func:`get_local_model`
returns the OpenAI Chat adapter pointed at it, in schema-constrained mode.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from ..errors import ModelConfigError
from ..provider_options import FIELDS, ProviderOptions
from .model_files import ModelFileError, model_file

if TYPE_CHECKING:
    from ..providers.openai_chat import OpenAIChatModel

LLAMA_CPP_PYTHON_VERSION = "0.3.36"
"""The ``llama-cpp-python`` sdist whose vendored llama.cpp is built (the bare-JSON template was checked on it)."""
SERVER_ENV = "NOTEBOOK_AGENT_LLAMA_SERVER"
CACHE_ENV = "NOTEBOOK_AGENT_CACHE"
DEFAULT_CONTEXT = 8192
START_TIMEOUT = 120.0
BARE_JSON_TEMPLATE = "qwen25_bare_json_tools.jinja"
_QWEN_TOOL_CALL_MARKER = "within <tool_call></tool_call> XML tags"
_CMAKE_OPTIONS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",  # ON would fetch the web UI from the internet
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
)


class LocalServerError(ModelConfigError):
    """The local model cannot be served: missing file, missing toolchain, failed build or failed start."""


def cache_root() -> Path:
    """``$NOTEBOOK_AGENT_CACHE`` or ``~/.cache/notebook_agent``."""
    root = os.environ.get(CACHE_ENV)
    return Path(root).expanduser() if root else Path.home() / ".cache" / "notebook_agent"


def _tail(path: Path, lines: int = 25) -> str:
    try:
        with path.open("r", errors="replace") as f:
            return "".join(deque(f, maxlen=lines)).rstrip()
    except OSError:
        return "(no log)"


# -- the binary ----------------------------------------------------------------------------------------------


def cached_server_path(version: str = LLAMA_CPP_PYTHON_VERSION) -> Path:
    return cache_root() / "llama.cpp" / version / "llama-server"


def find_llama_server(version: str = LLAMA_CPP_PYTHON_VERSION) -> Path | None:
    """``$NOTEBOOK_AGENT_LLAMA_SERVER``, else ``llama-server`` on PATH, else a cached build; None if none."""
    env = os.environ.get(SERVER_ENV)
    if env:
        path = Path(env).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise LocalServerError(f"{SERVER_ENV}={env} is not an executable file. Fix the path or unset it.")
        return path
    on_path = shutil.which("llama-server")
    if on_path:
        return Path(on_path)
    cached = cached_server_path(version)
    return cached if cached.is_file() and os.access(cached, os.X_OK) else None


class Log(Protocol):  # where build progress is written: print's shape (a text and end=); None writes nothing
    def __call__(self, text: str, /, *, end: str = "\n") -> object: ...


def _say(log: Log | None, text: str, *, end: str = "\n") -> None:
    if log is not None:
        log(text, end=end)


def _print(text: str, end: str = "\n") -> None:
    print(text, end=end, file=sys.stderr, flush=True)


def build_llama_server(version: str = LLAMA_CPP_PYTHON_VERSION, *, log: Log | None = _print) -> Path:
    """Build ``llama-server`` from the llama.cpp vendored in the ``llama-cpp-python`` sdist; return its path.

    Needs cmake and a C++ compiler (ninja is used when present). Builds once per version into the cache; a
    lock file makes concurrent callers wait for the first build instead of building twice."""
    target = cached_server_path(version)
    target.parent.mkdir(parents=True, exist_ok=True)
    import fcntl

    with (target.parent / ".build.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_file():
            return target
        return _build_locked(version, target, log)


def _build_locked(version: str, target: Path, log: Log | None) -> Path:
    cmake = shutil.which("cmake")
    compiler = next((c for c in ("c++", "g++", "clang++") if shutil.which(c)), None)
    if cmake is None or compiler is None:
        missing = " and ".join(n for n, p in (("cmake", cmake), ("a C++ compiler", compiler)) if p is None)
        raise LocalServerError(
            f"Building llama-server needs {missing}, not found on PATH. Install them (Debian/Ubuntu: "
            f"`apt-get install cmake g++`), or install llama-server yourself and set {SERVER_ENV}=/path/to/it."
        )
    ninja = shutil.which("ninja")
    started = time.monotonic()
    _say(log, f"Building llama-server (llama.cpp from llama-cpp-python {version}) once into {target.parent}.")
    _say(log, f"This takes about 4 minutes on 2 cores; later runs reuse it. Log: {target.parent / 'build.log'}")
    build_log = target.parent / "build.log"
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as tmp, build_log.open("w") as out:
        work = Path(tmp)
        # only this package as source: ":all:" would build every build dependency from source too (minutes)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "llama-cpp-python", "-q", "-d", tmp]
        _run([*cmd, f"llama-cpp-python=={version}"], out, build_log, "Downloading the llama-cpp-python sdist")
        (sdist,) = work.glob("llama_cpp_python-*.tar.gz")
        prefix = f"{sdist.name.removesuffix('.tar.gz')}/vendor/llama.cpp/"
        with tarfile.open(sdist) as tar:
            members = [m for m in tar.getmembers() if m.name.startswith(prefix)]
            tar.extractall(work, members=members, filter="data")
        sdist.unlink()
        source = work / prefix
        git_pointer = source / ".git"
        if git_pointer.is_file():
            git_pointer.unlink()  # a dangling submodule pointer; without it the build just notes "no git"
        build = work / "build"
        configure = [cmake, "-S", str(source), "-B", str(build), *_CMAKE_OPTIONS]
        if ninja:
            configure[1:1] = ["-G", "Ninja"]
        _run(configure, out, build_log, "Configuring llama.cpp with cmake")
        jobs = str(os.cpu_count() or 2)
        _run(
            [cmake, "--build", str(build), "--target", "llama-server", "-j", jobs],
            out,
            build_log,
            "Building llama-server",
            progress=log,
        )
        binary = build / "bin" / "llama-server"
        if not binary.is_file():
            raise LocalServerError(f"The build finished but {binary} is missing. See {build_log}.")
        partial = target.with_suffix(".partial")
        shutil.copy2(binary, partial)
        partial.replace(target)
    _say(log, f"Built {target} in {time.monotonic() - started:.0f} s.")
    return target


_STEP = re.compile(rb"^\[(\d+)/(\d+)\]")


def _run(cmd: list[str], out: IO[str], log_path: Path, what: str, progress: Log | None = None) -> None:
    out.write(f"$ {' '.join(cmd)}\n")
    out.flush()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert proc.stdout is not None
    last = 0.0
    for raw in proc.stdout:
        out.write(raw.decode(errors="replace"))
        match = _STEP.match(raw)
        if progress is not None and match and time.monotonic() - last > 2.0:
            last = time.monotonic()
            _say(progress, f"\r{what}: step {int(match[1])}/{int(match[2])}", end="")
    code = proc.wait()
    out.flush()
    if progress is not None and last:
        _say(progress, "")
    if code != 0:
        raise LocalServerError(
            f"{what} failed (exit {code}). The end of {log_path}:\n{_tail(log_path)}\n"
            f"Fix the cause above, or install llama-server yourself and set {SERVER_ENV}."
        )


def ensure_llama_server(*, build: bool = True, log: Log | None = _print) -> Path:
    """The llama-server binary to use, building it if there is none (``build=False``: raise instead)."""
    found = find_llama_server()
    if found is not None:
        return found
    if not build:
        raise LocalServerError(
            f"No llama-server found ({SERVER_ENV}, PATH, {cached_server_path()}). Run "
            f"`python -m notebook_agent.llm.local.llama_server build` once, or set {SERVER_ENV}."
        )
    return build_llama_server(log=log)


# -- the model file ------------------------------------------------------------------------------------------

_GGUF_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def gguf_string(path: Path, key: str) -> str | None:
    """One string value from a GGUF file's metadata (e.g. ``tokenizer.chat_template``), or None."""
    with path.open("rb") as f:

        def number(fmt: str) -> int:
            (value,) = struct.unpack("<" + fmt, f.read(struct.calcsize(fmt)))
            return int(value)

        def skip(kind: int) -> None:
            if kind in _GGUF_SIZES:
                f.seek(_GGUF_SIZES[kind], 1)
            elif kind == 8:
                f.seek(number("Q"), 1)
            elif kind == 9:
                item, count = number("I"), number("Q")
                if item in _GGUF_SIZES:
                    f.seek(_GGUF_SIZES[item] * count, 1)
                else:
                    for _ in range(count):
                        skip(item)
            else:
                raise ValueError(f"unknown GGUF value type {kind}")

        if f.read(4) != b"GGUF":
            return None
        number("I")  # version
        number("Q")  # tensor count
        for _ in range(number("Q")):
            name = f.read(number("Q")).decode(errors="replace")
            kind = number("I")
            if name == key and kind == 8:
                return f.read(number("Q")).decode(errors="replace")
            skip(kind)
    return None


def template_for(model: Path) -> Path | None:
    """The shipped bare-JSON tool template for Qwen2.5 models with the stock ``<tool_call>`` template."""
    try:
        template = gguf_string(model, "tokenizer.chat_template")
    except (OSError, ValueError, struct.error):
        return None
    if template and _QWEN_TOOL_CALL_MARKER in template and "<|im_start|>" in template:
        return Path(__file__).with_name("templates") / BARE_JSON_TEMPLATE
    return None


# -- the server process --------------------------------------------------------------------------------------


def default_threads() -> int:
    """One thread per 4 cores (at most 4). llama.cpp's threads spin while waiting for each other, so on a
    shared machine more threads than free cores collapse: measured with Qwen-0.5B on 2 busy cores, 13 tok/s
    with 1 thread against 0.5 tok/s with 2. Small models are memory-bound; extra threads gain little."""
    return max(1, min(4, (os.cpu_count() or 1) // 4))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class LocalServer:
    """One running llama-server for one model file."""

    model: Path
    binary: Path
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    template: Path | None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible root (``.../v1``)."""
        return self.url + "/v1"

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=5)


_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llama-server-spawner")
"""Servers are started from this one long-lived thread: with PR_SET_PDEATHSIG the kernel stops a server when
the thread that started it ends, i.e. when this process ends in any way (a killed kernel included)."""


def _stop_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def start_server(
    model: Path,
    binary: Path,
    *,
    context: int = DEFAULT_CONTEXT,
    threads: int | None = None,
    timeout: float = START_TIMEOUT,
    extra_args: list[str] | None = None,
    port: int | None = None,
) -> LocalServer:
    """Start llama-server for ``model`` on loopback (``port``, else a free one) and wait until ``/health``
    answers 200."""
    port = port or _free_port()
    template = template_for(model)
    log_dir = cache_root() / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"llama-server-{model.stem}-{port}.log"
    cmd = [str(binary), "-m", str(model), "--host", "127.0.0.1", "--port", str(port), "-c", str(context)]
    cmd += ["-np", "1", "--jinja", "-a", model.stem, "--cache-prompt"]
    cmd += ["-t", str(threads or default_threads())]
    if template is not None:
        cmd += ["--chat-template-file", str(template)]
    cmd += extra_args or []
    with log_path.open("wb") as log:
        log.write(("$ " + " ".join(cmd) + "\n").encode())
        log.flush()
        # Own session/process group: a notebook Interrupt (SIGINT to the kernel's group) must not stop it.
        process = _SPAWNER.submit(
            subprocess.Popen,
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_stop_with_parent if sys.platform == "linux" else None,
        ).result()
    server = LocalServer(model, binary, port, process, log_path, template)
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise LocalServerError(
                f"llama-server exited on start (code {process.returncode}) for {model}. The end of its log "
                f"{log_path}:\n{_tail(log_path)}"
            )
        try:
            with urllib.request.urlopen(server.url + "/health", timeout=2) as response:
                if response.status == 200:
                    return server
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise LocalServerError(
                f"llama-server did not become ready within {timeout:.0f} s for {model}. The end of its log "
                f"{log_path}:\n{_tail(log_path)}"
            )
        time.sleep(0.2)


_SERVERS: dict[Path, LocalServer] = {}
_LOCK = threading.Lock()


def get_server(model: str | Path, *, build: bool = True, log: Log | None = _print, **start_kw: Any) -> LocalServer:
    """The running server for ``model`` (a path or ``hf:`` reference), started (and llama-server built) on
    first use in this process."""
    path = model_file(model)
    if not path.is_file():
        raise LocalServerError(
            f"Model file {path} does not exist. Pass the path of a .gguf file, e.g. "
            f"get_model('local:~/models/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf'), or a file on the Hugging Face "
            f"Hub as get_model('hf:OWNER/REPO/FILE.gguf')."
        )
    with _LOCK:
        server = _SERVERS.get(path)
        if server is not None and server.alive():
            return server
        binary = ensure_llama_server(build=build, log=log)
        server = start_server(path, binary, **start_kw)
        _SERVERS[path] = server
        return server


@atexit.register
def stop_all() -> None:
    """Stop every server this process started (registered with atexit)."""
    with _LOCK:
        for server in _SERVERS.values():
            server.stop()
        _SERVERS.clear()


def get_local_model(path: str, **kw: Any) -> OpenAIChatModel:
    """``get_model("local:PATH")`` (or ``local:hf:...``, ``hf:...``): an :class:`OpenAIChatModel` on a managed
    llama-server, in schema mode.

    Keyword arguments: ``context`` (tokens, default 8192), ``threads``, ``port`` (the server's loopback port,
    default a free one), ``server_args`` (extra llama-server flags), ``build`` (False: fail rather than build
    llama-server); the rest go to the adapter (``output_mode=``, ``max_retries=``, ``timeout=``, ``http_client=``...).
    """
    from ..providers.openai_chat import OpenAIChatModel

    start_kw: dict[str, Any] = {}
    for name in ("context", "threads", "port"):
        if kw.get(name) is not None:
            start_kw[name] = kw.pop(name)
        else:
            kw.pop(name, None)
    if kw.get("server_args"):
        start_kw["extra_args"] = list(kw.pop("server_args"))
    kw.pop("server_args", None)
    server = get_server(path, build=kw.pop("build", True), **start_kw)
    kw.pop("base_url", None)
    kw["api_key"] = kw.get("api_key") or "not-needed"
    kw.setdefault("output_mode", "json_schema")
    return OpenAIChatModel(server.model.stem, base_url=server.base_url, provider="local", server="llamacpp", **kw)


def local_model(model_id: str, options: ProviderOptions, **kw: Any) -> OpenAIChatModel:
    """``local:PATH.gguf`` (the registry's adapter): :func:`get_local_model` with the connection settings given."""
    given = {f: getattr(options, f) for f in FIELDS if getattr(options, f) is not None and f != "base_url"}
    return get_local_model(model_id, **given, **kw)


def hub_model(model_id: str, options: ProviderOptions, **kw: Any) -> OpenAIChatModel:
    """``hf:OWNER/REPO/FILE.gguf`` (the registry's adapter): a file from the Hugging Face Hub on llama-server."""
    return local_model(f"hf:{model_id}", options, **kw)


def main(argv: list[str] | None = None) -> int:
    """``python -m notebook_agent.llm.local.llama_server build|serve MODEL``: build llama-server, or run one."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m notebook_agent.llm.local.llama_server", description=main.__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("build", help="build llama-server once (cached) and print its path")
    serve = sub.add_parser("serve", help="start llama-server for a .gguf and wait (Ctrl-C stops it)")
    serve.add_argument("model", help="a .gguf file or hf:OWNER/REPO/FILE.gguf")
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            print(ensure_llama_server())
            return 0
        server = get_server(args.model)
        print(server.base_url, flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.process.wait()
    except (LocalServerError, ModelFileError) as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
