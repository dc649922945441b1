"""A loopback twin of an OpenAI-compatible Chat Completions endpoint (OpenAI, OpenRouter, vLLM).

The project's LLM client runs against it unchanged but for the base URL, through the real `openai`
SDK, so what makes a provider hard is reproduced on the wire rather than mocked in Python: Bearer
auth, 400s on malformed requests, 429 + `Retry-After`, 5xx, stalls past the client timeout, invalid
JSON in tool arguments, a model that answers text instead of calling the tool, usage and cost.

    with OpenAITwin() as twin:  # answers with the deterministic `triage_responder`
        client = OpenAI(base_url=twin.url, api_key="test-key", max_retries=0)
        twin.queue(HttpError(429, headers={"retry-after": "1"}), ToolCall("f", {"x": 1}))
        ...
        assert twin.count() == 2

Queued actions are consumed first (FIFO, one per request that passes auth and validation); when
the queue is empty the `responder` decides. What gets answered lives in `openai_twin_script`.
"""

from __future__ import annotations

import copy
import json
import sys
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from swe_forge_dagster.demo.twins.openai_twin_script import (
    TIERS,
    Action,
    HttpError,
    MultipleToolCalls,
    Responder,
    Slow,
    Text,
    ToolCall,
    Usage,
    classify_text,
    fill_from_schema,
    forced_tool_name,
    tool_schemas,
    triage_responder,
)

__all__ = [
    "TIERS",
    "Action",
    "HttpError",
    "MultipleToolCalls",
    "OpenAITwin",
    "RecordedRequest",
    "Responder",
    "Slow",
    "Text",
    "ToolCall",
    "Usage",
    "classify_text",
    "fill_from_schema",
    "triage_responder",
]

from swe_forge_dagster.demo.twins.loopback import LoopbackService

COMPLETION_PATHS = ("/v1/chat/completions", "/chat/completions")
_DEFAULT_MESSAGES = {
    400: "Bad request.",
    401: "Incorrect API key provided",
    403: "You are not allowed to access this resource.",
    404: "The requested resource does not exist.",
    429: "Rate limit reached for requests. Please try again later.",
    500: "The server had an error while processing your request. Sorry about that!",
    502: "Bad gateway.",
    503: "The engine is currently overloaded, please try again later.",
}


@dataclass
class RecordedRequest:
    """One request as received; `replied_status` is None until the twin has decided its answer."""

    method: str
    path: str
    headers: dict[str, str]  # lower-case names
    json: Any  # the parsed body; None when absent or not JSON
    received_at: float
    replied_status: int | None = None


@dataclass(frozen=True)
class _Reply:
    status: int
    payload: dict[str, Any]
    headers: dict[str, str] | None = None


def error_reply(
    status: int, message: str | None = None, code: str | None = None, headers: dict[str, str] | None = None
) -> _Reply:
    """OpenAI's error body, which the SDK unwraps into `exc.body`, `exc.code` and the exception message."""
    kind = "requests" if status == 429 else "server_error" if status >= 500 else "invalid_request_error"
    code = code or ("rate_limit_exceeded" if status == 429 else None)
    text = message or _DEFAULT_MESSAGES.get(status, f"Error {status} from the OpenAI twin.")
    return _Reply(status, {"error": {"message": text, "type": kind, "code": code}}, headers)


def request_problem(body: Any) -> tuple[str, str | None] | None:
    """(message, code) of the 400 a real server gives this body, or None when it is acceptable."""
    if not isinstance(body, dict):
        return "We could not parse the JSON body of your request.", None
    if not body.get("model"):
        return "you must provide a model parameter", None
    messages = body.get("messages")
    if messages is None:
        return "Missing required parameter: 'messages'.", "missing_required_parameter"
    if not isinstance(messages, list) or not messages:
        return "Invalid 'messages': expected a non-empty array.", "invalid_value"
    if body.get("stream"):
        return "The OpenAI twin does not stream; send stream=false.", "unsupported_value"
    choice, names = body.get("tool_choice"), tool_schemas(body)
    if choice is not None and choice not in ("none", "auto") and not names:
        return "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.", None
    forced = forced_tool_name(body)
    if isinstance(choice, dict) and forced not in names:
        return f"Invalid value for 'tool_choice': function {forced!r} is not in 'tools'.", "invalid_value"
    return None


class OpenAITwin(LoopbackService):
    """Serves Chat Completions on 127.0.0.1; `queue`, `responder`, `set_latency` are thread-safe and live."""

    url_path = "/v1"
    thread_name = "openai-twin"

    def __init__(
        self,
        responder: Responder | None = None,
        api_key: str | None = "test-key",
        latency: float = 0.0,
        cost_per_mtok: tuple[float, float] | None = None,
    ) -> None:
        self.responder: Responder = responder or triage_responder
        self.api_key = api_key
        self.cost_per_mtok = cost_per_mtok  # (USD per 1M prompt tokens, per 1M completion tokens)
        self.url = ""
        self.max_in_flight = 0
        self._latency = latency
        self._queue: deque[Action] = deque()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()  # guards the queue, records and counters
        self._in_flight = 0
        self._seq = 0

    # --- scripting -------------------------------------------------------------------------
    def queue(self, *actions: Action) -> None:
        """Answer the next requests with these actions, in order, before the responder is asked again."""
        with self._lock:
            self._queue.extend(actions)

    def pending(self) -> int:
        """Queued actions not yet consumed (a test can assert its whole script was used)."""
        with self._lock:
            return len(self._queue)

    def clear_queue(self) -> None:
        with self._lock:
            self._queue.clear()

    def set_latency(self, seconds: float) -> None:
        """Delay added to every request, so a client's concurrency (`max_in_flight`) becomes observable."""
        with self._lock:
            self._latency = seconds

    # --- records ---------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of the requests received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def count(self) -> int:
        with self._lock:
            return len(self._requests)

    def reset(self) -> None:
        """Forget records and counters (the queue is kept: it is the script, not a record)."""
        with self._lock:
            self._requests.clear()
            self.max_in_flight = self._in_flight

    # --- request handling ------------------------------------------------------------------
    def _serve(self, handler: _Handler, method: str) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self._seq += 1
            seq, latency = self._seq, self._latency
        finished = False
        try:
            length = int(handler.headers.get("Content-Length") or 0)
            raw = handler.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            headers = {name.lower(): value for name, value in handler.headers.items()}
            record = RecordedRequest(method, urlsplit(handler.path).path, headers, body, time.time())
            with self._lock:
                self._requests.append(record)
            if latency:
                time.sleep(latency)
            try:
                reply = self._reply(handler, method, record.path, body, seq)
            except Exception as exc:  # a twin or responder bug: say so loudly instead of hanging up
                traceback.print_exc()
                reply = error_reply(500, f"openai twin error: {exc!r}")
            # Out of flight before the reply is written: the client may hold the whole response (and
            # start its next request) before this thread returns from the write.
            with self._lock:
                record.replied_status = reply.status
                self._in_flight -= 1
                finished = True
            data = json.dumps(reply.payload).encode()
            handler.send_response(reply.status)
            extra = {"content-type": "application/json", "x-request-id": f"req_{seq:08x}", **(reply.headers or {})}
            for name, value in extra.items():
                handler.send_header(name, value)
            handler.send_header("content-length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        finally:
            if not finished:
                with self._lock:
                    self._in_flight -= 1

    def _reply(self, handler: _Handler, method: str, path: str, body: Any, seq: int) -> _Reply:
        """Route, auth, validation, then the scripted action, in the order a real provider applies them."""
        if method != "POST" or path.rstrip("/") not in COMPLETION_PATHS:
            return error_reply(404, f"Unknown request URL: {method} {path}.", "unknown_url")
        if self.api_key is not None:
            scheme, _, value = (handler.headers.get("Authorization") or "").partition(" ")
            if scheme.lower() != "bearer" or value.strip() != self.api_key:
                return error_reply(401, "Incorrect API key provided", "invalid_api_key")
        problem = request_problem(body)
        if problem is not None:
            return error_reply(400, *problem)
        with self._lock:
            action = self._queue.popleft() if self._queue else None
        if action is None:
            action = self.responder(copy.deepcopy(body))
        while isinstance(action, Slow):
            time.sleep(action.seconds)
            action = action.then
        if isinstance(action, HttpError):
            return error_reply(action.status, action.message, headers=action.headers)
        return _Reply(200, self._completion(action, body, seq))

    def _completion(self, action: Action, request: dict[str, Any], seq: int) -> dict[str, Any]:
        """The exact `chat.completion` object the SDK parses, with OpenRouter-style usage.cost when priced."""
        if isinstance(action, ToolCall):
            calls: list[ToolCall] = [action]
        elif isinstance(action, MultipleToolCalls):
            calls = list(action.calls)
        elif isinstance(action, Text):
            calls = []
        else:
            raise TypeError(f"not an OpenAI twin action: {action!r}")
        message: dict[str, Any] = {"role": "assistant", "content": action.content if isinstance(action, Text) else None}
        if calls:
            message["tool_calls"] = [
                {
                    "id": call.id or f"call_{seq:08x}{i:02x}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_json()},
                }
                for i, call in enumerate(calls)
            ]
        produced = action.content if isinstance(action, Text) else "".join(c.arguments_json() for c in calls)
        usage = action.usage or Usage(len(json.dumps(request["messages"])) // 4, len(produced) // 4 + 1)
        usage_json: dict[str, Any] = {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        }
        cost = usage.cost
        if cost is None and self.cost_per_mtok is not None:
            price_in, price_out = self.cost_per_mtok
            cost = usage.prompt_tokens * price_in / 1e6 + usage.completion_tokens * price_out / 1e6
        if cost is not None:
            usage_json["cost"] = cost
        return {
            "id": f"chatcmpl-twin{seq:08x}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": usage_json,
        }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # never wait on handlers still sleeping (Slow) for a client that left
    request_queue_size = 128  # a burst of concurrent connects must not overflow the accept backlog
    twin: OpenAITwin

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up mid-reply (SDK timeouts in tests) is normal, not a traceback on stderr."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive like real providers; every reply has a length
    disable_nagle_algorithm = True  # headers and body go out in two writes: no delayed-ACK stall
    server: _Server

    def version_string(self) -> str:
        return "openai-twin"

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request stderr logging; the twin keeps its own records."""

    def do_GET(self) -> None:
        self.server.twin._serve(self, "GET")

    def do_POST(self) -> None:
        self.server.twin._serve(self, "POST")


# The server and handler are defined after the twin they serve.
OpenAITwin.server_class = _Server
OpenAITwin.handler_class = _Handler
