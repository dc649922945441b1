"""What each gym route does, as plain functions of (server, JSON body) -> JSON reply: no HTTP here.

`http_app` maps them onto Starlette routes and their errors onto statuses (`RequestError` carries its own;
the gym's own exceptions are mapped there). They block (a Docker call, an image build), so they run on
worker threads, never on the event loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

from swe_forge_dagster.gym.service import Gym
from swe_forge_dagster.gym.tools import ANSWER, TESTBED, tool_schemas
from swe_forge_dagster.harness.models import HarnessTask

MAX_AGENT_NAME = 100
T = TypeVar("T")


class GymServer(Protocol):
    """What the routes and the app need of `server.GymServer` (named here so neither imports the server)."""

    gym: Gym
    tasks: dict[str, HarnessTask]
    unloadable: dict[str, str]
    client_timeout: float

    def authorized(self, header: str | None) -> bool: ...

    def in_thread(self, work: Callable[[], T]) -> Awaitable[T]: ...


Handler = Callable[[GymServer, dict[str, Any]], dict[str, Any]]


class RequestError(Exception):
    """A request the gym refuses, with the HTTP status that says why."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.extra = status, extra


def health(server: GymServer, _body: dict[str, Any]) -> dict[str, Any]:
    """Whether Docker answers, not where it is (the engine's address stays private)."""
    gym = server.gym
    return {
        "ok": True,
        "server_id": gym.config.server_id,
        "environments": len(gym.environments()),
        "max_envs": gym.config.max_envs,
        "docker": gym.docker_error is None,
    }


def tools(server: GymServer, _body: dict[str, Any]) -> dict[str, Any]:
    return {"tools": tool_schemas(server.gym.config.bash_timeout)}


def tasks(server: GymServer, _body: dict[str, Any]) -> dict[str, Any]:
    return {
        "tasks": [{"task_id": t.task_id, "repo": t.repo} for t in server.tasks.values()],
        "unloadable": [{"task_id": k, "reason": v} for k, v in server.unloadable.items()],
    }


def environments(server: GymServer, _body: dict[str, Any]) -> dict[str, Any]:
    return {"environments": [env.describe() for env in server.gym.environments()]}


def open_environment(server: GymServer, body: dict[str, Any]) -> dict[str, Any]:
    task_id = _text(body, "task_id")
    agent = body.get("agent") or "agent"
    if not isinstance(agent, str) or len(agent) > MAX_AGENT_NAME or not agent.isprintable():
        raise RequestError(400, f"agent must be a printable name of at most {MAX_AGENT_NAME} characters")
    task = server.tasks.get(task_id)
    if task is None:
        why = server.unloadable.get(task_id)
        raise RequestError(404, f"task {task_id!r} could not be loaded: {why}" if why else f"no task {task_id!r}")
    env = server.gym.open(task, agent=agent)
    return {
        "env_id": env.id,
        "task_id": task.task_id,
        "prompt": task.prompt,
        "tools": env.tools(),
        "workdir": TESTBED,
        "setup_seconds": env.setup_seconds,
    }


def call(server: GymServer, body: dict[str, Any]) -> dict[str, Any]:
    env_id, tool = _text(body, "env_id"), _text(body, "tool")
    env = server.gym.get(env_id)  # 404 / 409 first, whatever the tool
    observation = env.call(tool, body.get("arguments"))  # `answer` too: counted and logged as any call
    reply = {"observation": observation.text, "error": observation.error, "data": observation.data, "done": False}
    if tool == ANSWER and not observation.error:  # the answer's own fields (the same answer again)
        reply.update(env.answer().payload())
    return reply


def answer(server: GymServer, body: dict[str, Any]) -> dict[str, Any]:
    return server.gym.answer(_text(body, "env_id")).payload()


def close(server: GymServer, body: dict[str, Any]) -> dict[str, Any]:
    return server.gym.close_environment(_text(body, "env_id")).payload()


def _text(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise RequestError(400, f"the request needs `{key}` (a string)")
    return value
