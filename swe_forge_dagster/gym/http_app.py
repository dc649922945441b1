"""The gym's ASGI app (Starlette, served by uvicorn in `server`): routes, the guard in front of them, errors.

The guard runs before routing and before any body is read: the framing (a chunked body: 411; a
Content-Length that is not one non-negative integer: 400; over `MAX_BODY`: 413), then the bearer token
(401) on every path but `/health` and `/openapi.json`. A response sent before its request's body was read
closes the connection, so an unread body (a refused upload of 1 GB, say) is never waited for. Each wait
for the client's body is bounded by the server's `client_timeout` (408); `ClientTimeoutH11Protocol` bounds
the waits for a request's headers the same way, which uvicorn leaves unbounded. Handlers run on worker
threads (`GymServer.in_thread`), so a long Docker call holds a thread, not the event loop. Replies are
JSON written with `backslashreplace`: text UTF-8 cannot hold (a lone surrogate) never turns into a 500.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import anyio
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from swe_forge_dagster.gym import routes
from swe_forge_dagster.gym.environment import EpisodeEnded, OpenFailed
from swe_forge_dagster.gym.openapi import openapi_schema
from swe_forge_dagster.gym.routes import GymServer, RequestError
from swe_forge_dagster.gym.service import CapacityError, GymStopping, UnknownEnvironment

log = logging.getLogger(__name__)
MAX_BODY = 32 << 20
PUBLIC = frozenset({"/health", "/openapi.json"})
SERVER_HEADER = (b"server", b"swe-forge-gym")


class JSONReply(Response):
    """JSON as the gym writes it: UTF-8, non-ASCII kept, what UTF-8 cannot hold escaped (never a 500)."""

    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False, default=str).encode("utf-8", "backslashreplace")


def build_app(server: GymServer) -> ASGIApp:
    """The routes of `routes` (and the schema) behind the guard."""
    table: list[tuple[str, str, routes.Handler]] = [
        ("GET", "/health", routes.health),
        ("GET", "/tools", routes.tools),
        ("GET", "/tasks", routes.tasks),
        ("GET", "/environments", routes.environments),
        ("POST", "/open", routes.open_environment),
        ("POST", "/call", routes.call),
        ("POST", "/answer", routes.answer),
        ("POST", "/close", routes.close),
    ]
    schema = openapi_schema()
    app = Starlette(
        routes=[
            *(
                Route(path, _endpoint(server, handler, reads_body=path not in PUBLIC), methods=[method])
                for method, path, handler in table
            ),
            Route("/openapi.json", lambda _request: JSONReply(schema), methods=["GET"]),
        ],
        exception_handlers={HTTPException: _no_route},
    )
    return _Guard(app, server)


def _endpoint(server: GymServer, handler: routes.Handler, *, reads_body: bool) -> Any:
    async def endpoint(request: Request) -> Response:
        try:
            raw = await _read_body(request, server.client_timeout) if reads_body else b""
            return JSONReply(await server.in_thread(lambda: handler(server, _parse(raw))))
        except Exception as exc:
            return _error_reply(exc, request)

    return endpoint


async def _read_body(request: Request, timeout: float) -> bytes:
    """The body, each wait for the client bounded by `timeout` (the guard already capped its length)."""
    chunks: list[bytes] = []
    stream = request.stream()
    while True:
        try:
            with anyio.fail_after(timeout):
                chunk = await anext(stream)
        except StopAsyncIteration:
            return b"".join(chunks)
        except (TimeoutError, ClientDisconnect) as exc:
            raise RequestError(408, f"the body did not arrive: {type(exc).__name__}") from None
        chunks.append(chunk)


def _parse(raw: bytes) -> dict[str, Any]:
    """A JSON object (or nothing: `{}`); anything else is a 400 saying what is wrong."""
    if not raw.strip():
        return {}
    try:
        body = json.loads(raw)
    except RecursionError:
        raise RequestError(400, "the body is nested too deeply") from None
    except ValueError as exc:
        raise RequestError(400, f"the body is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise RequestError(400, "the body must be a JSON object")
    return body


def _error_reply(exc: Exception, request: Request) -> JSONReply:
    """The status and `{error, ...}` of a refused request; an unexpected exception is a logged 500."""
    if isinstance(exc, RequestError):
        return JSONReply({"error": str(exc), **exc.extra}, exc.status)
    if isinstance(exc, UnknownEnvironment):
        return JSONReply({"error": f"no environment {exc.args[0]!r}"}, 404)
    if isinstance(exc, EpisodeEnded):
        return JSONReply({"error": str(exc), "done": True}, 409)
    if isinstance(exc, CapacityError):
        return JSONReply({"error": str(exc)}, 429)
    if isinstance(exc, GymStopping):
        return JSONReply({"error": str(exc)}, 503)
    if isinstance(exc, OpenFailed):
        result = exc.result
        payload = {"error": str(exc), "status": result.status.value, "reason": result.reason}
        return JSONReply({**payload, "result": result.summary()}, 422)
    log.error("gym server: %s %s", request.method, request.url.path, exc_info=exc)
    return JSONReply({"error": f"internal error: {type(exc).__name__}: {exc}"}, 500)


async def _no_route(request: Request, _exc: Exception) -> Response:
    """An unknown path and a known path with the wrong method alike: 404, as the routes are one table."""
    return JSONReply({"error": f"no route {request.method} {request.url.path}"}, 404)


class _Guard:
    """Framing and token before routing; `connection: close` on a reply sent before the body was read."""

    def __init__(self, app: ASGIApp, server: GymServer) -> None:
        self.app, self.server = app, server

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        scope["path"] = scope["path"].rstrip("/") or "/"
        headers = Headers(scope=scope)
        body_read = False

        async def tracked_receive() -> Message:
            nonlocal body_read
            message = await receive()
            body_read = body_read or message["type"] != "http.request" or not message.get("more_body", False)
            return message

        async def closing_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = [SERVER_HEADER] + ([] if body_read else [(b"connection", b"close")])
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        try:
            length = _length(headers)
            body_read = length == 0
            if scope["path"] not in PUBLIC:
                if not self.server.authorized(headers.get("authorization")):
                    raise RequestError(401, "a valid token is required (Authorization: Bearer <token>)")
                if length > MAX_BODY:
                    raise RequestError(413, f"the body is over {MAX_BODY} bytes")
        except RequestError as exc:
            return await JSONReply({"error": str(exc)}, exc.status)(scope, receive, closing_send)
        await self.app(scope, tracked_receive, closing_send)


def _length(headers: Headers) -> int:
    """The body's length from a strict Content-Length (the HTTP parser already refuses most bad ones)."""
    if "chunked" in (headers.get("transfer-encoding") or "").lower():
        raise RequestError(411, "chunked bodies are not accepted: send Content-Length")
    values = [value.strip() for value in headers.getlist("content-length")]
    if not values:
        return 0
    text = values[0]
    if len(set(values)) > 1 or not text.isascii() or not text.isdigit():
        raise RequestError(400, f"bad Content-Length {', '.join(values)[:40]!r}: a non-negative integer")
    return int(text)


class ClientTimeoutH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the wait for a request's headers bounded too.

    uvicorn arms its keep-alive timer only after a response, so a client that connects and sends nothing,
    or half a request line, would hold a connection forever; here the same timer (`timeout_keep_alive`,
    the server's `client_timeout`) also runs from the connection's start and after every piece of an
    unfinished request head. h11 caps that head at 16 KiB."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._await_client()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is None or self.cycle.response_complete:  # still no complete request head
            self._await_client()

    def _await_client(self) -> None:
        if self.transport.is_closing():
            return
        self._unset_keepalive_if_required()
        self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self.timeout_keep_alive_handler)
