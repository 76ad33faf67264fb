"""Offline token counting and the ``snapshot`` CLI command."""

from __future__ import annotations

import json
from typing import Any

import pytest

from notebook_agent.browser.urls import URLError, normalize_url
from notebook_agent.cli.snapshot import snapshot_command
from notebook_agent.llm import tokens
from notebook_agent.llm.tokens import count_tokens
from notebook_agent.testing import without_tokenizer


def test_count_tokens_offline() -> None:
    assert tokens.exact_available()
    assert count_tokens("") == 0
    assert count_tokens("hello world") == 2
    assert count_tokens("hello world", "cl100k_base") == 2
    assert count_tokens("<|endoftext|>") > 1  # special tokens are plain text here, never an error
    assert count_tokens("[3]<input type=text name=q placeholder=Search />") < 20


def test_count_tokens_fallback_estimate() -> None:
    with without_tokenizer():
        assert count_tokens("x" * 40) == 10
        assert count_tokens("abc") == 1


def test_one_url_rule(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "p.html"
    page.write_text("<p>x</p>")
    assert normalize_url(str(page)) == page.as_uri()
    monkeypatch.chdir(tmp_path)
    assert normalize_url("p.html") == page.as_uri()
    assert normalize_url("localhost:8000/a") == "http://localhost:8000/a"
    assert normalize_url("127.0.0.1") == "http://127.0.0.1"
    assert normalize_url("intranet:8080/x") == "http://intranet:8080/x"
    assert normalize_url("example.com") == "https://example.com"
    assert normalize_url(" https://example.com/a?b ") == "https://example.com/a?b"
    assert normalize_url("about:blank") == "about:blank"
    for bad, message in [
        ("example", "'example' is not a URL: write the whole address, e.g. https://example.com/"),
        ("/no/such/file.html", "There is no file '/no/such/file.html'."),
        ("javascript:alert(1)", "Cannot open 'javascript:alert(1)': only http(s), file, data and about URLs"),
        ("", "The URL is empty"),
    ]:
        with pytest.raises(URLError) as raised:
            normalize_url(bad)
        assert str(raised.value).startswith(message)
    assert normalize_url("p.html", files=False) == "https://p.html"  # the model's go_to_url opens no files


def test_snapshot_command_text_and_json(servers: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert snapshot_command(servers.url("nav.html")) == 0
    out = capsys.readouterr().out
    assert out.startswith("Current page: [Navigation](") and "[0]<a id=link>Next page />" in out
    assert snapshot_command(servers.url("scroll.html"), full_page=True, as_json=True) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["full_page"] is True and "Bottom button" in data["text"]
    assert data["tokens"] == count_tokens(data["text"]) and data["chars"] == len(data["text"])
    assert {"total_ms", "script_ms", "launch", "load"} <= set(data["timings_ms"])
    first = data["elements"][0]
    assert first["index"] == 0 and first["tag"] == "div" and first["attributes"]["id"] == "list"
    assert snapshot_command("http://127.0.0.1:9/") == 2
    assert "port 9 is on its list of unsafe ports" in capsys.readouterr().err
    assert snapshot_command("example") == 2
    assert capsys.readouterr().err.startswith("error: 'example' is not a URL")
