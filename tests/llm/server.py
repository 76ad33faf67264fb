"""A scripted HTTP server on 127.0.0.1 that replays provider wire formats, for the real SDK clients.

Each request pops the next scripted :class:`Reply` (or, with ``responder`` set, gets the reply that function makes
of it) and is recorded (path, headers, JSON body), so a test can assert both what the adapter produced and what it
sent. Streaming replies are written chunk by chunk with
chunked transfer encoding, which lets a script pause, hang (for abort and deadline tests), drip bytes
forever, or cut the connection in the middle of a body exactly as a dropped network would. While hanging or
dripping the server watches the socket, and counts in ``client_closed`` the connections the client closed.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
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
class Drip:
    """Send ``data`` every ``every`` seconds until the client closes the connection (or ``seconds`` pass)."""

    data: str
    every: float = 0.05
    seconds: float = 30.0


@dataclass
class Cut:
    """Close the socket abruptly, without the terminating chunk: the client sees a truncated body."""


StreamItem = str | bytes | Pause | Hang | Drip | Cut


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    """JSON body for a plain reply."""
    stream: list[StreamItem] | None = None
    """SSE chunks for a streaming reply."""
    hold_headers: float = 0.0
    """Wait this long (or until the client closes) before even the status line: a server that never answers."""


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
        self.client_closed = 0
        self.closed_event = threading.Event()
        self.responder: Callable[[Recorded], Reply] | None = None
        """Answers each request from what it asked (a model that reads its input) instead of the queue."""
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
                    server_ref.responder(server_ref.requests[-1])
                    if server_ref.responder is not None
                    else server_ref.replies.popleft()
                    if server_ref.replies
                    else json_reply(500, {"error": {"message": "no scripted reply left", "type": "server_error"}})
                )
                try:
                    if reply.hold_headers and self._hold(reply.hold_headers):
                        return
                    if reply.stream is None:
                        self._send_json(reply)
                    else:
                        self._send_stream(reply)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    self.close_connection = True
                    self._closed_by_client()

            def _closed_by_client(self) -> None:
                server_ref.client_closed += 1
                server_ref.closed_event.set()

            def _hold(self, seconds: float) -> bool:
                """Wait until released or ``seconds`` pass; True (and counted) if the client closed meanwhile."""
                end = time.monotonic() + seconds
                while time.monotonic() < end and not server_ref.release.is_set():
                    readable, _, _ = select.select([self.connection], [], [], 0.02)
                    if readable:
                        try:
                            closed = self.connection.recv(1, socket.MSG_PEEK) == b""
                        except OSError:
                            closed = True
                        if closed:
                            self.close_connection = True
                            self._closed_by_client()
                            return True
                self.close_connection = True
                return False

            def _write_chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                self.wfile.flush()

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
                        self._hold(item.seconds)
                        return
                    elif isinstance(item, Drip):
                        end = time.monotonic() + item.seconds
                        while time.monotonic() < end and not server_ref.release.is_set():
                            self._write_chunk(item.data.encode())  # raises once the client has gone
                            time.sleep(item.every)
                        self.close_connection = True
                        return
                    elif isinstance(item, Cut):
                        self.wfile.flush()
                        self.connection.shutdown(socket.SHUT_RDWR)
                        self.close_connection = True
                        return
                    else:
                        self._write_chunk(item.encode() if isinstance(item, str) else item)
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
