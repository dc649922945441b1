"""The gym over HTTP: JSON in, JSON out, a bearer token on every request, so agents in any language and
trainers on other machines can drive environments.

    GET  /health                                    no token: {ok, server_id, environments, max_envs, docker}
    GET  /tools                                     {tools: the six schemas (OpenAI function-calling format)}
    GET  /tasks                                     {tasks: [{task_id, repo}], unloadable: [{task_id, reason}]}
    GET  /environments                              {environments: [{env_id, task_id, agent, steps, idle_seconds, ...}]}
    POST /open    {task_id, agent?}                 {env_id, task_id, prompt, tools, workdir, setup_seconds}
    POST /call    {env_id, tool, arguments?}        {observation, error, data, done} (+ the answer's, for `answer`)
    POST /answer  {env_id}                          {reward, status, reason, result, model_patch, done}
    POST /close   {env_id}                          the same, without an answer (`agent_error`, reward 0.0)

`arguments` is an object or the JSON text a model's tool call carries. Errors are `{error}` with a status:
400 a malformed request (a body that is not a JSON object, a bad Content-Length), 401 no or a wrong token
(checked before the body is read), 404 an unknown task, environment or path, 408 the client stopped sending
its body, 409 the episode is over, 411 a chunked body (send Content-Length), 413 a body over 32 MiB, 422 the
task could not be set up (`{error, status, reason, result}`), 429 the gym is at its cap of environments,
503 the gym is stopping. Bound to 127.0.0.1 unless told otherwise; the token (at least 16 characters) is
compared in constant time; `/health` says whether Docker answers, not where it is. Requests are served on
threads (each Docker call blocks one), connections kept alive; a connection whose client sends nothing for
`_Handler.timeout` seconds is closed (the time a call runs is not bounded by it).
"""

from __future__ import annotations

import hmac
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from swe_forge_dagster.gym.environment import EpisodeEnded, OpenFailed
from swe_forge_dagster.gym.service import CapacityError, Gym, GymStopping, UnknownEnvironment
from swe_forge_dagster.gym.tools import ANSWER, TESTBED, tool_schemas
from swe_forge_dagster.harness.models import HarnessTask

log = logging.getLogger(__name__)
MAX_BODY = 32 << 20
MAX_AGENT_NAME = 100
MIN_TOKEN = 16
CLIENT_TIMEOUT_S = 120.0


def check_token(token: str) -> str:
    """The token, or ValueError saying why it cannot be one (empty, blank, shorter than 16 characters)."""
    if not token or not token.strip():
        raise ValueError("the gym server needs a token (SWE_FORGE_GYM_TOKEN)")
    if token != token.strip() or len(token) < MIN_TOKEN:
        raise ValueError(f"the gym token must be at least {MIN_TOKEN} characters, without surrounding spaces")
    return token


class RequestError(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.extra = status, extra


class GymServer:
    """`gym` served on `host:port` (0: any free port; `url` says which)."""

    def __init__(
        self,
        gym: Gym,
        tasks: dict[str, HarnessTask],
        token: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        unloadable: dict[str, str] | None = None,
    ) -> None:
        check_token(token)
        self.gym, self.tasks, self.unloadable = gym, tasks, unloadable or {}
        self._token = token.encode()
        self.httpd = _Server((host, port), _Handler)
        self.httpd.app = self
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.2)

    def start(self) -> GymServer:
        """Serve on a background thread (tests and embedding); `stop()` ends it."""
        self._thread = threading.Thread(target=self.serve_forever, name="gym-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self.httpd.shutdown()
        self.httpd.server_close()

    def authorized(self, header: str | None) -> bool:
        scheme, _, value = (header or "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), self._token)

    # -- routes -----------------------------------------------------------------------------------

    def route(self, method: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        gym = self.gym
        if (method, path) == ("GET", "/tools"):
            return {"tools": tool_schemas(gym.config.bash_timeout)}
        if (method, path) == ("GET", "/tasks"):
            return {
                "tasks": [{"task_id": t.task_id, "repo": t.repo} for t in self.tasks.values()],
                "unloadable": [{"task_id": k, "reason": v} for k, v in self.unloadable.items()],
            }
        if (method, path) == ("GET", "/environments"):
            return {"environments": [env.describe() for env in gym.environments()]}
        if method != "POST" or path not in ("/open", "/call", "/answer", "/close"):
            raise RequestError(404, f"no route {method} {path}")
        if path == "/open":
            return self._open(body)
        env_id = _text(body, "env_id")
        if path == "/answer":
            return gym.answer(env_id).payload()
        if path == "/close":
            return gym.close_environment(env_id).payload()
        tool = _text(body, "tool")
        env = gym.get(env_id)  # 404 / 409 first, whatever the tool
        observation = env.call(tool, body.get("arguments"))  # `answer` too: counted and logged as any call
        reply = {"observation": observation.text, "error": observation.error, "data": observation.data, "done": False}
        if tool == ANSWER and not observation.error:  # the answer's own fields (the same answer again)
            reply.update(env.answer().payload())
        return reply

    def _open(self, body: dict[str, Any]) -> dict[str, Any]:
        task_id = _text(body, "task_id")
        agent = body.get("agent") or "agent"
        if not isinstance(agent, str) or len(agent) > MAX_AGENT_NAME or not agent.isprintable():
            raise RequestError(400, f"agent must be a printable name of at most {MAX_AGENT_NAME} characters")
        task = self.tasks.get(task_id)
        if task is None:
            why = self.unloadable.get(task_id)
            raise RequestError(404, f"task {task_id!r} could not be loaded: {why}" if why else f"no task {task_id!r}")
        env = self.gym.open(task, agent=agent)
        return {
            "env_id": env.id,
            "task_id": task.task_id,
            "prompt": task.prompt,
            "tools": env.tools(),
            "workdir": TESTBED,
            "setup_seconds": env.setup_seconds,
        }


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise RequestError(400, f"the request needs `{key}` (a string)")
    return value


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    app: GymServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: a trainer's many calls reuse one connection
    # headers and body go out in two writes: with Nagle's algorithm the body waits for the client's delayed ACK
    # (40 ms on Linux) on every response of a kept-alive connection
    disable_nagle_algorithm = True
    # bounds each wait for the client (request line, headers, body) on this connection, not a call's run time
    timeout = CLIENT_TIMEOUT_S
    server: _Server

    def version_string(self) -> str:
        return "swe-forge-gym"

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("gym %s: " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        app = self.server.app
        path = urlsplit(self.path).path.rstrip("/") or "/"
        try:
            length = self._length()
            if (method, path) == ("GET", "/health"):
                self.close_connection = self.close_connection or length > 0  # a body nobody reads
                self._send(
                    200,
                    {
                        "ok": True,
                        "server_id": app.gym.config.server_id,
                        "environments": len(app.gym.environments()),
                        "max_envs": app.gym.config.max_envs,
                        "docker": app.gym.docker_error is None,
                    },
                )
                return
            if not app.authorized(self.headers.get("Authorization")):
                self.close_connection = self.close_connection or length > 0  # its body is not read
                raise RequestError(401, "a valid token is required (Authorization: Bearer <token>)")
            self._send(200, app.route(method, path, self._body(length)))
        except RequestError as exc:
            self._send(exc.status, {"error": str(exc), **exc.extra})
        except UnknownEnvironment as exc:
            self._send(404, {"error": f"no environment {exc.args[0]!r}"})
        except EpisodeEnded as exc:
            self._send(409, {"error": str(exc), "done": True})
        except CapacityError as exc:
            self._send(429, {"error": str(exc)})
        except GymStopping as exc:
            self._send(503, {"error": str(exc)})
        except OpenFailed as exc:
            result = exc.result
            self._send(
                422,
                {"error": str(exc), "status": result.status.value, "reason": result.reason, "result": result.summary()},
            )
        except Exception as exc:  # a bug: say so, keep serving
            log.exception("gym server: %s %s", method, path)
            self._send(500, {"error": f"internal error: {type(exc).__name__}: {exc}"})

    def _length(self) -> int:
        """The body's length from a strict Content-Length; a framing error closes the connection (400, 411)."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            self.close_connection = True
            raise RequestError(411, "chunked bodies are not accepted: send Content-Length")
        values = [value.strip() for value in self.headers.get_all("Content-Length") or []]
        if not values:
            return 0
        text = values[0]
        if len(set(values)) > 1 or not text.isascii() or not text.isdigit():
            self.close_connection = True
            raise RequestError(400, f"bad Content-Length {', '.join(values)[:40]!r}: a non-negative integer")
        return int(text)

    def _body(self, length: int) -> dict[str, Any]:
        if length > MAX_BODY:
            self.close_connection = True
            raise RequestError(413, f"the body is over {MAX_BODY} bytes")
        try:
            raw = self.rfile.read(length) if length else b""
        except (TimeoutError, ConnectionError) as exc:
            self.close_connection = True
            raise RequestError(408, f"the body did not arrive: {exc}") from None
        if len(raw) < length:
            self.close_connection = True
            raise RequestError(400, f"the body ended after {len(raw)} of {length} bytes")
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

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8", "backslashreplace")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
