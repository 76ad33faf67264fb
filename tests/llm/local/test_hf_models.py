"""``hf:OWNER/REPO/FILE.gguf`` model references: the real huggingface_hub client against a stand-in Hub.

The stand-in speaks the Hub's wire format for file downloads as ``hf_hub_download`` reads it
(huggingface_hub/file_download.py, ``get_hf_file_metadata``; utils/_http.py, ``hf_raise_for_status``):
``HEAD``/``GET /{repo_id}/resolve/{revision}/{filename}`` answers a large (LFS) file with a 302 to a "CDN" on
another origin (a second port), carrying ``X-Repo-Commit``, ``X-Linked-Etag``, ``X-Linked-Size`` and ``ETag``;
errors carry ``X-Error-Code`` (``RepoNotFound``, ``RevisionNotFound``, ``EntryNotFound``, ``GatedRepo``) with
the status the Hub uses (401 without a token, 403 with a token that has no access, 404). It also answers
``GET /api/agent-harnesses``, which huggingface_hub's telemetry fetches (at most once a day) when it first builds
request headers. Every request is logged, so a test can say which ones a resolution made. The content is a few
bytes with the GGUF magic, never a real model.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from notebook_agent.llm import get_model
from notebook_agent.llm.local import llama_server as local_server
from notebook_agent.llm.local import model_files
from notebook_agent.llm.local.model_files import ModelFileError, model_file, parse_hf_ref, split_parts
from notebook_agent.llm.registry import PROVIDERS
from tests.llm.local.test_local_server import fake_binary

hub_constants = pytest.importorskip("huggingface_hub.constants")

COMMIT = "0123456789abcdef0123456789abcdef01234567"
OTHER_COMMIT = "89abcdef0123456789abcdef0123456789abcdef"
TOKEN = "hf_test_token_for_the_gated_repo"
CONTENT = b"GGUF\x03\x00\x00\x00" + b"\x00" * 16 + b"a stand-in model, not a real one"


@dataclass
class Repo:
    files: dict[str, bytes]
    revisions: dict[str, str] = field(default_factory=lambda: {"main": COMMIT})
    token: str | None = None
    """Set: a gated repo that only this token may read."""


class FakeHub:
    """The Hub's ``/resolve/`` endpoint on 127.0.0.1, and a "CDN" on a second port that serves the blobs."""

    def __init__(self, repos: dict[str, Repo]) -> None:
        self.repos = repos
        self.blobs = {hashlib.sha256(data).hexdigest(): data for r in repos.values() for data in r.files.values()}
        self.log: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self.hub = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.cdn = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._threads = [
            threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            for s in (self.hub, self.cdn)
        ]
        for thread in self._threads:
            thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.hub.server_address[1]}"

    @property
    def cdn_url(self) -> str:
        return f"http://127.0.0.1:{self.cdn.server_address[1]}"

    def stop(self) -> None:
        if not self._threads[0].is_alive():
            return
        for server in (self.hub, self.cdn):
            server.shutdown()
            server.server_close()
        for thread in self._threads:
            thread.join(timeout=5)

    def requests(self, method: str | None = None) -> list[str]:
        with self._lock:
            return [path for m, path in self.log if method in (None, m)]

    def downloads(self) -> list[str]:
        """The GETs of file content (from the "CDN")."""
        return [path for path in self.requests("GET") if path.startswith("/cdn/")]

    def answer(self, method: str, path: str, auth: str | None) -> tuple[int, dict[str, str], bytes]:
        with self._lock:
            self.log.append((method, path))
        path = urlsplit(path).path
        if path == "/api/agent-harnesses":
            return 200, {"Content-Type": "application/json"}, b'{"standardEnvVars": [], "harnesses": {}}'
        if path.startswith("/cdn/"):
            blob = self.blobs.get(path.removeprefix("/cdn/"))
            if blob is None:
                return 404, {}, b"no such blob"
            return 200, {"ETag": f'"{path.removeprefix("/cdn/")}"', "Content-Type": "application/octet-stream"}, blob
        repo_part, sep, rest = path.lstrip("/").partition("/resolve/")
        revision, _, filename = rest.partition("/")
        if not sep or repo_part.count("/") != 1 or not filename:
            return 404, {}, b"Not Found"
        repo_id, revision, filename = unquote(repo_part), unquote(revision), unquote(filename)
        repo = self.repos.get(repo_id)
        token = auth.removeprefix("Bearer ") if auth else None
        if repo is None:  # the Hub does not tell a missing repo from a private one
            status = 404 if token else 401
            return status, {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"}, b""
        if repo.token is not None and token != repo.token:
            message = f"Access to model {repo_id} is restricted and you are not in the authorized list."
            return 403 if token else 401, {"X-Error-Code": "GatedRepo", "X-Error-Message": message}, b""
        commit = repo.revisions.get(revision) or (revision if revision in repo.revisions.values() else None)
        if commit is None:
            return 404, {"X-Error-Code": "RevisionNotFound", "X-Error-Message": "Invalid rev id"}, b""
        data = repo.files.get(filename)
        if data is None:
            headers = {"X-Error-Code": "EntryNotFound", "X-Error-Message": "Entry not found", "X-Repo-Commit": commit}
            return 404, headers, b""
        sha256 = hashlib.sha256(data).hexdigest()
        headers = {
            "X-Repo-Commit": commit,
            "ETag": f'"{hashlib.sha1(sha256.encode()).hexdigest()}"',  # the LFS pointer's git oid
            "X-Linked-Etag": f'"{sha256}"',
            "X-Linked-Size": str(len(data)),
            "Location": f"{self.cdn_url}/cdn/{sha256}",
        }
        return 302, headers, b""

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _reply(self, with_body: bool) -> None:
                status, headers, body = hub.answer(self.command, self.path, self.headers.get("Authorization"))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if with_body:
                    self.wfile.write(body)

            def do_HEAD(self) -> None:
                self._reply(with_body=False)

            def do_GET(self) -> None:
                self._reply(with_body=True)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


REPO = "acme/tiny-GGUF"
FILE = "tiny-q4_k_m.gguf"
SPLIT = ["big-00001-of-00002.gguf", "big-00002-of-00002.gguf"]


def forget_agent_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """As in a new process: huggingface_hub keeps the telemetry's agent registry in memory once fetched."""
    try:
        from huggingface_hub.utils import _detect_agent
    except ImportError:  # older huggingface_hub: no such telemetry
        return
    monkeypatch.setattr(_detect_agent, "_registry", None)


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The stand-in Hub, and huggingface_hub pointed at it with its cache in ``tmp_path``.

    huggingface_hub reads ``HF_ENDPOINT``/``HF_HOME``/``HF_HUB_CACHE`` into ``huggingface_hub.constants`` when it is
    imported, so the environment is set for any subprocess and the constants are patched for this process.
    """
    fake = FakeHub(
        {
            REPO: Repo(
                {FILE: CONTENT, "sub/dir/other.gguf": CONTENT + b"2", "README.md": b"# tiny\n"}
                | {name: CONTENT + name.encode() for name in SPLIT},
                revisions={"main": COMMIT, "v1": OTHER_COMMIT},
            ),
            "acme/gated-GGUF": Repo({FILE: CONTENT}, token=TOKEN),
        }
    )
    home = tmp_path / "hf"
    endpoint = fake.url
    for name, value in (("HF_ENDPOINT", endpoint), ("HF_HOME", str(home)), ("HF_HUB_CACHE", str(home / "hub"))):
        monkeypatch.setenv(name, value)
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "HF_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    patches = {
        "ENDPOINT": endpoint,
        "HUGGINGFACE_CO_URL_TEMPLATE": endpoint + "/{repo_id}/resolve/{revision}/{filename}",
        "HF_HOME": str(home),
        "HF_HUB_CACHE": str(home / "hub"),
        "HF_TOKEN_PATH": str(home / "token"),  # never the user's own token
        "HF_HUB_OFFLINE": False,
    }
    import huggingface_hub.file_download as file_download  # huggingface_hub < 1.0 copies some of the constants

    for constant, setting in patches.items():
        monkeypatch.setattr(hub_constants, constant, setting)
        if hasattr(file_download, constant):
            monkeypatch.setattr(file_download, constant, setting)
    monkeypatch.setattr(hub_constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"), raising=False)
    monkeypatch.setattr(hub_constants, "AGENT_HARNESSES_PATH", str(home / ".agent_harnesses.json"), raising=False)
    forget_agent_registry(monkeypatch)
    yield fake
    fake.stop()


def test_download_arrives_in_the_hub_cache_and_is_reused_without_network(
    hub: FakeHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = model_file(f"hf:{REPO}/{FILE}")
    assert path.read_bytes() == CONTENT
    assert path.name == FILE and path.parent.name == COMMIT  # the cache's snapshot path, named as in the repo
    assert path.is_relative_to(Path(hub_constants.HF_HUB_CACHE) / "models--acme--tiny-GGUF")
    assert hub.requests("HEAD") == [f"/{REPO}/resolve/main/{FILE}"]
    assert len(hub.downloads()) == 1
    assert set(hub.requests("GET")) <= {*hub.downloads(), "/api/agent-harnesses"}

    hub.log.clear()
    forget_agent_registry(monkeypatch)
    Path(hub_constants.HF_HOME, ".agent_harnesses.json").unlink(missing_ok=True)
    assert model_file(f"hf:{REPO}/{FILE}") == path
    assert hub.requests() == []  # no HEAD, and not the telemetry's GET either: only the disk was looked at


def test_cached_file_is_used_when_the_hub_is_gone(hub: FakeHub) -> None:
    path = model_file(f"hf:{REPO}/{FILE}")
    hub.stop()
    assert model_file(f"hf:{REPO}/{FILE}") == path


def test_plain_hf_hub_download_would_ask_the_hub_again(hub: FakeHub) -> None:
    """Why model_file asks the cache first: with a branch as revision, hf_hub_download sends a HEAD every time."""
    from huggingface_hub import hf_hub_download

    hf_hub_download(REPO, FILE)
    hub.log.clear()
    hf_hub_download(REPO, FILE)
    assert hub.requests("HEAD") == [f"/{REPO}/resolve/main/{FILE}"] and hub.downloads() == []


def test_files_in_folders_revisions_and_split_models(hub: FakeHub) -> None:
    nested = model_file(f"hf:{REPO}/sub/dir/other.gguf")
    assert nested.read_bytes() == CONTENT + b"2" and nested.parts[-3:] == ("sub", "dir", "other.gguf")

    pinned = model_file(f"hf:{REPO}@v1/{FILE}")
    assert pinned.parent.name == OTHER_COMMIT and pinned.read_bytes() == CONTENT
    assert f"/{REPO}/resolve/v1/{FILE}" in hub.requests("HEAD")

    first = model_file(f"hf:{REPO}/{SPLIT[0]}")
    assert first.name == SPLIT[0]
    assert sorted(p.name for p in first.parent.glob("big-*")) == SPLIT  # side by side, as llama-server needs
    assert (first.parent / SPLIT[1]).read_bytes() == CONTENT + SPLIT[1].encode()
    assert split_parts("m-00002-of-00003.gguf") == [f"m-0000{i}-of-00003.gguf" for i in (1, 2, 3)]


def test_get_model_hf_and_local_hf_start_the_server_on_the_downloaded_file(
    hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTEBOOK_AGENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("NOTEBOOK_AGENT_LLAMA_SERVER", str(fake_binary(tmp_path)))
    try:
        model = get_model(f"hf:{REPO}/{FILE}")
        argv = (tmp_path / "argv.txt").read_text().split()
        served = Path(argv[argv.index("-m") + 1])
        assert served == model_file(f"hf:{REPO}/{FILE}") and served.read_bytes() == CONTENT
        assert argv[argv.index("-a") + 1] == "tiny-q4_k_m"  # the file's name, not the cache's blob hash
        assert model.id == "tiny-q4_k_m" and model.provider == "local"

        again = get_model(f"local:hf:{REPO}/{FILE}")
        assert again.base_url == model.base_url  # type: ignore[attr-defined]  # the same server
    finally:
        local_server.stop_all()
    assert len(hub.downloads()) == 1


def test_hf_is_a_provider() -> None:
    info = PROVIDERS["hf"]
    assert info.package == "huggingface_hub" and "notebook-agent[local]" in (info.install or "")
    assert "hf:OWNER/REPO/FILE.gguf" in info.description and not info.key_envs


@pytest.mark.parametrize(
    ("ref", "says"),
    [
        ("hf:acme/tiny-GGUF", "needs an owner, a repo and a file name"),
        ("hf:tiny.gguf", "needs an owner, a repo and a file name"),
        ("hf://acme/tiny-GGUF/x.gguf", "no '/' or '//' goes after 'hf:'"),
        ("hf:acme//x.gguf", "separated by single '/'"),
        ("hf:acme/tiny@/x.gguf", "the revision after '@' is empty"),
        ("hf:ac me/tiny/x.gguf", "'ac me' is not a valid owner name"),
        ("hf:acme/../x.gguf", "'..' is not a valid repo name"),
        ("hf:acme/tiny/../x.gguf", "may not contain '.', '..'"),
    ],
)
def test_malformed_references_are_refused_before_any_network_access(hub: FakeHub, ref: str, says: str) -> None:
    for name in (ref, f"local:{ref}"):
        with pytest.raises(ModelFileError, match="Malformed Hugging Face model reference") as info:
            get_model(name)
        message = str(info.value)
        assert says in message and "hf:OWNER/REPO/FILE.gguf or hf:OWNER/REPO@REVISION/FILE.gguf" in message
        assert model_files.EXAMPLE in message
    assert hub.requests() == []


def test_a_file_that_is_not_gguf_is_refused(hub: FakeHub) -> None:
    with pytest.raises(ModelFileError, match=r"does not name a \.gguf file \('README\.md'\)") as info:
        model_file(f"hf:{REPO}/README.md")
    assert "llama-server runs GGUF model files" in str(info.value)
    assert hub.requests() == []
    assert parse_hf_ref(f"hf:{REPO}@v1/a/b.GGUF").filename == "a/b.GGUF"


def test_missing_repo_file_and_revision(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ModelFileError) as info:
        model_file("hf:acme/nothing-here/x.gguf")
    message = str(info.value)
    assert "The Hugging Face repo acme/nothing-here was not found" in message and "(HTTP 401)" in message
    assert "A private repo looks missing to an account without access: set HF_TOKEN" in message

    monkeypatch.setenv("HF_TOKEN", "hf_some_other_token")
    with pytest.raises(
        ModelFileError, match=r"acme/nothing-here was not found at http://127\.0\.0\.1:\d+ \(HTTP 404\)"
    ):
        model_file("hf:acme/nothing-here/x.gguf")

    with pytest.raises(ModelFileError) as info:
        model_file(f"hf:{REPO}/missing.gguf")
    message = str(info.value)
    assert f"The Hugging Face repo {REPO} has no file 'missing.gguf' at revision 'main' (HTTP 404)" in message
    assert f"{hub.url}/{REPO}/tree/main" in message

    with pytest.raises(ModelFileError, match=rf"{REPO} has no revision 'v9' \(HTTP 404\)\. Use a branch, tag"):
        model_file(f"hf:{REPO}@v9/{FILE}")


def test_gated_repo_needs_hf_token(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    ref = f"hf:acme/gated-GGUF/{FILE}"
    with pytest.raises(ModelFileError) as info:
        model_file(ref)
    message = str(info.value)
    assert "Access to the Hugging Face repo acme/gated-GGUF was refused (HTTP 401): it is gated or private" in message
    assert "Set HF_TOKEN to an access token of an account that may read it" in message
    assert f"must first accept the model's terms on {hub.url}/acme/gated-GGUF" in message

    monkeypatch.setenv("HF_TOKEN", "hf_a_token_without_access")
    with pytest.raises(ModelFileError, match=r"\(HTTP 403\).*The token in HF_TOKEN was sent, but its account may not"):
        model_file(ref)

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert model_file(ref).read_bytes() == CONTENT


def test_unreachable_hub(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.utils._http as hub_http

    hub.stop()
    monkeypatch.setattr(hub_http.time, "sleep", lambda seconds: None)  # its retries back off for ~20 s
    with pytest.raises(ModelFileError) as info:
        model_file(f"hf:{REPO}/{FILE}")
    message = str(info.value)
    assert f"Could not reach the Hugging Face Hub at {hub.url} to download {FILE} from {REPO}" in message
    assert "HF_ENDPOINT" in message and "pass its path instead of the hf: reference" in message

    monkeypatch.setattr(hub_constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ModelFileError, match="HF_HUB_OFFLINE is set: unset it to download the file"):
        model_file(f"hf:{REPO}/{FILE}")


def test_without_huggingface_hub(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # import fails as if it were not installed
    with pytest.raises(
        ModelFileError, match=r"needs the huggingface_hub package: pip install 'notebook-agent\[local\]'"
    ):
        model_file(f"hf:{REPO}/{FILE}")


def test_plain_paths_are_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert model_file("~/models/m.gguf") == tmp_path / "models" / "m.gguf"
    assert model_file(str(tmp_path / "x.bin")) == tmp_path / "x.bin"  # any name; get_server checks it exists
    monkeypatch.chdir(tmp_path)
    assert model_file("rel.gguf") == tmp_path / "rel.gguf"
    assert model_file(Path("hf:acme/tiny/x.gguf")) == tmp_path / "hf:acme" / "tiny" / "x.gguf"  # a Path is a path
    (tmp_path / "blob").write_bytes(CONTENT)
    (tmp_path / "named.gguf").symlink_to(tmp_path / "blob")
    assert model_file("named.gguf").name == "named.gguf"  # the link's name, as for a Hub cache snapshot file


def test_the_environment_alone_points_it_at_a_hub(hub: FakeHub, tmp_path: Path) -> None:
    """In a fresh process huggingface_hub takes HF_ENDPOINT and HF_HUB_CACHE from the environment."""
    cache = tmp_path / "elsewhere"
    env = {**os.environ, "HF_HUB_CACHE": str(cache), "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    code = f"from notebook_agent.llm.local.model_files import model_file; print(model_file('hf:{REPO}/{FILE}'))"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.strip())
    assert path.is_relative_to(cache) and path.read_bytes() == CONTENT
    assert "Downloading tiny-q4_k_m.gguf from acme/tiny-GGUF on the Hugging Face Hub" in done.stderr
