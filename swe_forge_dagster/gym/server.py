"""The gym over HTTP: JSON in, JSON out, a bearer token on every request, so agents in any language and
trainers on other machines can drive environments.

    GET  /health                                    no token: {ok, server_id, environments, max_envs, docker_error}
    GET  /tools                                     {tools: the six schemas (OpenAI function-calling format)}
    GET  /tasks                                     {tasks: [{task_id, repo}], unloadable: [{task_id, reason}]}
    GET  /environments                              {environments: [{env_id, task_id, agent, steps, idle_seconds, ...}]}
    POST /open    {task_id, agent?}                 {env_id, task_id, prompt, tools, workdir, setup_seconds}
    POST /call    {env_id, tool, arguments?}        {observation, error, data, done} (+ the answer's, for `answer`)
    POST /answer  {env_id}                          {reward, status, reason, result, model_patch, done}
    POST /close   {env_id}                          the same, without an answer (`agent_error`, reward 0.0)

`arguments` is an object or the JSON text a model's tool call carries. Errors are `{error}` with a status:
400 a malformed request, 401 no or a wrong token, 404 an unknown task, environment or path, 409 the episode
is over, 413 a body over 32 MiB, 422 the task could not be set up (`{error, status, reason, result}`),
429 the gym is at its cap of environments. Bound to 127.0.0.1 unless told otherwise; the token is compared
in constant time. Requests are served on threads (each Docker call blocks one), connections kept alive.
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
from swe_forge_dagster.gym.service import CapacityError, Gym, UnknownEnvironment
from swe_forge_dagster.gym.tools import ANSWER, TESTBED, ToolError, parse_arguments, tool_schemas
from swe_forge_dagster.harness.models import HarnessTask

log = logging.getLogger(__name__)
MAX_BODY = 32 << 20
MAX_AGENT_NAME = 100


class RequestError(Exception):
    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.extra = status, extra


class GymServer:
    """`gym` served on `host:port` (0: any free port; `url` says which)."""

    def __init__(self, gym: Gym, tasks: dict[str, HarnessTask], token: str, *, host: str = "127.0.0.1",
                 port: int = 0, unloadable: dict[str, str] | None = None) -> None:  # fmt: skip
        if not token:
            raise ValueError("the gym server needs a token (SWE_FORGE_GYM_TOKEN)")
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
            return {"tasks": [{"task_id": t.task_id, "repo": t.repo} for t in self.tasks.values()],
                    "unloadable": [{"task_id": k, "reason": v} for k, v in self.unloadable.items()]}  # fmt: skip
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
        if tool == ANSWER:  # the answer's own fields, and the observation a model gets back
            try:
                parse_arguments(ANSWER, body.get("arguments"))
            except ToolError as exc:
                return {"observation": str(exc), "error": True, "data": {}, "done": False}
            answer = gym.answer(env_id)
            return {"observation": answer.observation().text, "error": False, "data": {}, **answer.payload()}
        observation = gym.get(env_id).call(tool, body.get("arguments"))
        return {"observation": observation.text, "error": observation.error, "data": observation.data, "done": False}

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
        return {"env_id": env.id, "task_id": task.task_id, "prompt": task.prompt, "tools": env.tools(),
                "workdir": TESTBED, "setup_seconds": env.setup_seconds}  # fmt: skip


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
            body = self._body()
            if (method, path) == ("GET", "/health"):
                self._send(200, {"ok": True, "server_id": app.gym.config.server_id,
                                 "environments": len(app.gym.environments()), "max_envs": app.gym.config.max_envs,
                                 "docker_error": app.gym.docker_error})  # fmt: skip
                return
            if not app.authorized(self.headers.get("Authorization")):
                raise RequestError(401, "a valid token is required (Authorization: Bearer <token>)")
            self._send(200, app.route(method, path, body))
        except RequestError as exc:
            self._send(exc.status, {"error": str(exc), **exc.extra})
        except UnknownEnvironment as exc:
            self._send(404, {"error": f"no environment {exc.args[0]!r}"})
        except EpisodeEnded as exc:
            self._send(409, {"error": str(exc), "done": True})
        except CapacityError as exc:
            self._send(429, {"error": str(exc)})
        except OpenFailed as exc:
            result = exc.result
            self._send(422, {"error": str(exc), "status": result.status.value, "reason": result.reason,
                             "result": result.summary()})  # fmt: skip
        except Exception as exc:  # a bug: say so, keep serving
            log.exception("gym server: %s %s", method, path)
            self._send(500, {"error": f"internal error: {type(exc).__name__}: {exc}"})

    def _body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self.close_connection = True
            raise RequestError(413, f"the body is over {MAX_BODY} bytes")
        raw = self.rfile.read(length) if length else b""
        if not raw.strip():
            return {}
        try:
            body = json.loads(raw)
        except ValueError as exc:
            raise RequestError(400, f"the body is not JSON: {exc}") from None
        if not isinstance(body, dict):
            raise RequestError(400, "the body must be a JSON object")
        return body

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, ensure_ascii=False, default=str).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
