"""HTTP plumbing of the GitHub twin: the reply value, ETag/304 handling and the loopback server.

Kept apart from what the twin answers (`github_rest_shapes`, `github_graphql_schema`) and from its
bookkeeping (`github_twin_faults`): this is only how a reply gets onto the wire the way
api.github.com sends it (HTTP/1.1 keep-alive, a length on every reply, bodiless 304s).
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from swe_forge_dagster.demo.twins.loopback import HOST  # noqa: F401 - one loopback address

JSON = "application/json; charset=utf-8"
# How api.github.com spells header names on HTTP/1.1 (the recordings in the shared fixtures): the
# twin keeps them lowercase inside and writes them GitHub's way, because some clients read them
# case-sensitively (ghapi, which SWE-bench's collector uses, looks up `Content-Type` in a dict).
_WIRE_NAMES = {
    "content-type": "Content-Type",
    "content-length": "Content-Length",
    "cache-control": "Cache-Control",
    "etag": "ETag",
    "link": "Link",
    "retry-after": "Retry-After",
    "x-github-media-type": "X-GitHub-Media-Type",
    "x-github-request-id": "X-GitHub-Request-Id",
    "x-ratelimit-limit": "X-RateLimit-Limit",
    "x-ratelimit-remaining": "X-RateLimit-Remaining",
    "x-ratelimit-used": "X-RateLimit-Used",
    "x-ratelimit-reset": "X-RateLimit-Reset",
    "x-ratelimit-resource": "X-RateLimit-Resource",
}


@dataclass
class Reply:
    """One answer before it is sent; `counted` when it consumed primary rate limit."""

    status: int
    body: bytes = b""
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)
    counted: bool = False


def json_reply(status: int, payload: Any, **headers: str) -> Reply:
    return Reply(status, json.dumps(payload, separators=(",", ":")).encode(), headers=headers)


def finish_get(handler: BaseHTTPRequestHandler, reply: Reply) -> Reply:
    """Strong ETag on every 200 GET; a matching If-None-Match turns it into a bodiless 304."""
    if reply.status != 200:
        return reply
    etag = f'"{hashlib.sha256(reply.body).hexdigest()}"'
    reply.headers = {**reply.headers, "etag": etag, "cache-control": "private, max-age=60, s-maxage=60"}
    wanted = {t.strip().removeprefix("W/") for t in (handler.headers.get("If-None-Match") or "").split(",")}
    if etag in wanted or "*" in wanted:
        return Reply(304, b"", reply.content_type, reply.headers, counted=False)
    return reply


def send_reply(handler: BaseHTTPRequestHandler, method: str, reply: Reply, headers: dict[str, str]) -> None:
    """Status line, `headers`, then the body with its length; a 304 gets neither, as from GitHub."""
    handler.send_response(reply.status)
    for name, value in headers.items():
        handler.send_header(_WIRE_NAMES.get(name.lower(), name), value)
    if reply.status != 304:
        handler.send_header("Content-Length", str(len(reply.body)))
    handler.end_headers()
    if reply.status != 304 and method != "HEAD":
        handler.wfile.write(reply.body)


class Serves(Protocol):
    """What the HTTP layer needs of the twin (`GithubTwin`): one entry point per request."""

    def _serve(self, handler: BaseHTTPRequestHandler, method: str) -> None: ...


class TwinServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # never wait on handlers still sleeping for a client that left
    twin: Serves
    open_connections = 0
    """Connections accepted and not yet closed (a handler thread each), so that a restart can wait for them."""
    _connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self.open_connections += 1
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        try:
            super().shutdown_request(request)
        finally:
            with self._connections_lock:
                self.open_connections -= 1

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up mid-reply (timeouts in tests) is normal, not a traceback on stderr."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class TwinHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like api.github.com; every reply has a length
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall
    server: TwinServer

    def version_string(self) -> str:
        return "GitHub.com"

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request stderr logging; the twin keeps its own records."""

    def do_GET(self) -> None:
        self.server.twin._serve(self, "GET")

    def do_POST(self) -> None:
        self.server.twin._serve(self, "POST")
