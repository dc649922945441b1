"""The gym over HTTP: JSON in, JSON out, a bearer token on every request, so agents in any language and
trainers on other machines can drive environments.

    GET  /health                                    no token: {ok, server_id, environments, max_envs, docker}
    GET  /openapi.json                              no token: this API's OpenAPI 3.1 schema
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
compared in constant time; `/health` says whether Docker answers, not where it is.

A Starlette app (`http_app`: the guard, the routes of `routes`, the errors) served by uvicorn on its own
event-loop thread: a library's HTTP parser and keep-alive instead of our framing, while each handler runs on
a worker thread (a Docker call blocks one, never the loop). A connection whose client sends nothing for
`client_timeout` seconds is closed (the time a call runs is not bounded by it).
"""

from __future__ import annotations

import hmac
import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread
import uvicorn

from swe_forge_dagster.gym.http_app import MAX_BODY, ClientTimeoutH11Protocol, build_app
from swe_forge_dagster.gym.service import Gym
from swe_forge_dagster.harness.models import HarnessTask

__all__ = ["CLIENT_TIMEOUT_S", "MAX_BODY", "GymServer", "check_token"]

log = logging.getLogger(__name__)
MIN_TOKEN = 16
CLIENT_TIMEOUT_S = 120.0
SHUTDOWN_GRACE_S = 2
T = TypeVar("T")


def check_token(token: str) -> str:
    """The token, or ValueError saying why it cannot be one (empty, blank, shorter than 16 characters)."""
    if not token or not token.strip():
        raise ValueError("the gym server needs a token (SWE_FORGE_GYM_TOKEN)")
    if token != token.strip() or len(token) < MIN_TOKEN:
        raise ValueError(f"the gym token must be at least {MIN_TOKEN} characters, without surrounding spaces")
    return token


class GymServer:
    """`gym` served on `host:port` (0: any free port; `url` says which). The socket is bound here, so a
    port in use is an OSError at construction, before anything is served."""

    def __init__(
        self,
        gym: Gym,
        tasks: dict[str, HarnessTask],
        token: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        unloadable: dict[str, str] | None = None,
        client_timeout: float = CLIENT_TIMEOUT_S,
    ) -> None:
        check_token(token)
        self.gym, self.tasks, self.unloadable = gym, tasks, unloadable or {}
        self.client_timeout = client_timeout
        self._token = token.encode()
        self._socket = socket.create_server((host, port))
        config = uvicorn.Config(
            build_app(self),
            http=ClientTimeoutH11Protocol,  # h11 caps a request head at 16 KiB; the subclass bounds its wait
            lifespan="off",
            log_config=None,  # leave the process's logging as it is
            log_level="warning",
            access_log=False,
            server_header=False,  # the app says `swe-forge-gym`
            timeout_keep_alive=client_timeout,  # type: ignore[arg-type]
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
        )
        self._uvicorn = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        self._limiter: anyio.CapacityLimiter | None = None

    @property
    def url(self) -> str:
        host, port = self._socket.getsockname()[:2]
        return f"http://{host}:{port}"

    def start(self) -> GymServer:
        """Serve on a background thread (its own event loop) until `stop()`; returns once serving."""
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._uvicorn.run, kwargs={"sockets": [self._socket]}, name="gym-server", daemon=True
            )
            self._thread.start()
            while not self._uvicorn.started and self._thread.is_alive():
                time.sleep(0.01)
            if not self._uvicorn.started:
                raise RuntimeError("the gym server did not start (see the log)")
        return self

    def serve_forever(self) -> None:
        """Serve until interrupted: Ctrl-C or the CLI's SIGTERM handler raise KeyboardInterrupt here (the
        server's loop runs on its own thread, so uvicorn installs no signal handlers of its own)."""
        self.start()
        assert self._thread is not None
        while self._thread.is_alive():
            self._thread.join(0.2)

    def stop(self) -> None:
        """Stop serving: in-flight requests get `SHUTDOWN_GRACE_S` seconds, then are cancelled."""
        self._uvicorn.should_exit = True
        if self._thread is not None:
            self._thread.join(SHUTDOWN_GRACE_S + 10)
        self._socket.close()

    def authorized(self, header: str | None) -> bool:
        scheme, _, value = (header or "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode(), self._token)

    async def in_thread(self, work: Callable[[], T]) -> T:
        """Run a blocking handler on a worker thread; at shutdown a cancelled request leaves its thread
        behind (`Gym.close` ends what it waits on) instead of holding the loop."""
        if self._limiter is None:  # made on the loop (anyio needs one); threads: a few per environment
            self._limiter = anyio.CapacityLimiter(max(40, 4 * self.gym.config.max_envs))
        return await anyio.to_thread.run_sync(work, abandon_on_cancel=True, limiter=self._limiter)
