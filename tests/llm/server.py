"""A scripted HTTP server on 127.0.0.1 that replays provider wire formats, for the real SDK clients.

Each request pops the next scripted :class:`Reply` and is recorded (path, headers, JSON body), so a test can
assert both what the adapter produced and what it sent. Streaming replies are written chunk by chunk with
chunked transfer encoding, which lets a script pause, hang (for abort tests) or cut the connection in the
middle of a body exactly as a dropped network would.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Pause:
    """Sleep this long before the next chunk."""

    seconds: float


@dataclass
class Hang:
    """Stop sending and hold the connection open until the test ends (or ``seconds`` pass)."""

    seconds: float = 10.0


@dataclass
class Cut:
    """Close the socket abruptly, without the terminating chunk: the client sees a truncated body."""


StreamItem = str | bytes | Pause | Hang | Cut


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    """JSON body for a plain reply."""
    stream: list[StreamItem] | None = None
    """SSE chunks for a streaming reply."""


def json_reply(status: int, body: Any, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=status, body=body, headers=headers or {})


def sse_reply(items: list[StreamItem], headers: dict[str, str] | None = None) -> Reply:
    return Reply(status=200, stream=items, headers={"content-type": "text/event-stream", **(headers or {})})


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


class ScriptedServer:
    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Recorded] = []
        self.release = threading.Event()
        self.got_request = threading.Event()
        self.finished_streams = 0
        server_ref = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                self.do_POST()

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                server_ref.requests.append(
                    Recorded(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                server_ref.got_request.set()
                reply = (
                    server_ref.replies.popleft()
                    if server_ref.replies
                    else json_reply(500, {"error": {"message": "no scripted reply left", "type": "server_error"}})
                )
                try:
                    if reply.stream is None:
                        self._send_json(reply)
                    else:
                        self._send_stream(reply)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    self.close_connection = True

            def _send_json(self, reply: Reply) -> None:
                data = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("content-type", "application/json")
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

            def _send_stream(self, reply: Reply) -> None:
                self.send_response(reply.status)
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.send_header("transfer-encoding", "chunked")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                self.wfile.flush()
                for item in reply.stream or []:
                    if isinstance(item, Pause):
                        time.sleep(item.seconds)
                    elif isinstance(item, Hang):
                        server_ref.release.wait(item.seconds)
                        self.close_connection = True
                        return
                    elif isinstance(item, Cut):
                        self.wfile.flush()
                        self.connection.shutdown(socket.SHUT_RDWR)
                        self.close_connection = True
                        return
                    else:
                        data = item.encode() if isinstance(item, str) else item
                        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                        self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                server_ref.finished_streams += 1

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def enqueue(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    @property
    def last_body(self) -> Any:
        return self.requests[-1].body

    def start(self) -> ScriptedServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()


def free_port() -> int:
    """A port nothing listens on (for connection-refused tests)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
