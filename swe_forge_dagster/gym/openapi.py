"""The gym server's OpenAPI 3.1 schema (served at `GET /openapi.json`), built from pydantic models.

Why a schema: agents and trainers in other languages generate their clients from it, and it is the one
place the request and reply shapes are written down. The models describe; `routes` checks (its messages
are the API's errors), and tests/test_gym_server.py holds the two together: every route served is here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field
from pydantic.json_schema import models_json_schema


class Error(BaseModel):
    """Every refusal: `error` says why (422 adds the harness's `status`, `reason`, `result`; 409 `done`)."""

    error: str


class Health(BaseModel):
    ok: bool
    server_id: str
    environments: int
    max_envs: int
    docker: bool = Field(description="whether the Docker engine answers (not where it is)")


class Tools(BaseModel):
    tools: list[dict[str, Any]] = Field(description="the six tools, OpenAI function-calling format")


class TaskRef(BaseModel):
    task_id: str
    repo: str


class Unloadable(BaseModel):
    task_id: str
    reason: str


class Tasks(BaseModel):
    tasks: list[TaskRef]
    unloadable: list[Unloadable]


class Environments(BaseModel):
    environments: list[dict[str, Any]] = Field(
        description="env_id, task_id, agent, steps, seconds, idle_seconds, busy, done, workdir"
    )


class OpenRequest(BaseModel):
    task_id: str
    agent: str | None = Field(None, max_length=100, description="a printable name; default `agent`")


class Opened(BaseModel):
    env_id: str
    task_id: str
    prompt: str
    tools: list[dict[str, Any]]
    workdir: str
    setup_seconds: float


class CallRequest(BaseModel):
    env_id: str
    tool: str = Field(description="bash | view | str_replace | insert | create | answer")
    arguments: dict[str, Any] | str | None = Field(
        None, description="an object, or the JSON text a model's call carries"
    )


class Called(BaseModel):
    observation: str
    error: bool
    data: dict[str, Any] | None = None
    done: bool = Field(description="true after `answer`, whose reply then also carries Answered's fields")


class EnvRequest(BaseModel):
    env_id: str


class Answered(BaseModel):
    reward: float | None = Field(description="1.0 or 0.0; null when the episode ended without an answer")
    status: str
    reason: str | None = None
    answered: bool
    done: bool
    result: dict[str, Any]
    model_patch: str | None = None


# (method, path, summary, request body, reply, error statuses)
OPERATIONS: list[tuple[str, str, str, type[BaseModel] | None, type[BaseModel], tuple[int, ...]]] = [
    ("get", "/health", "Liveness; no token", None, Health, ()),
    ("get", "/tools", "The six tool schemas", None, Tools, (401,)),
    ("get", "/tasks", "The tasks served, and those that could not be loaded", None, Tasks, (401,)),
    ("get", "/environments", "The open environments", None, Environments, (401,)),
    ("post", "/open", "Open an environment on a task", OpenRequest, Opened, (400, 401, 404, 413, 422, 429, 503)),
    ("post", "/call", "Call a tool in an environment", CallRequest, Called, (400, 401, 404, 409, 413)),
    ("post", "/answer", "Grade the diff and end the episode", EnvRequest, Answered, (400, 401, 404, 409, 413)),
    ("post", "/close", "End the episode without an answer", EnvRequest, Answered, (400, 401, 404, 409, 413)),
]


def openapi_schema() -> dict[str, Any]:
    """The OpenAPI document: paths from `OPERATIONS`, components from their models."""
    models = {Error, *(m for op in OPERATIONS for m in (op[3], op[4]) if m is not None)}
    _, defs = models_json_schema(
        [(model, "validation") for model in sorted(models, key=lambda m: m.__name__)],
        ref_template="#/components/schemas/{model}",
    )
    paths: dict[str, dict[str, Any]] = {}
    for method, path, summary, request, reply, errors in OPERATIONS:
        operation: dict[str, Any] = {"summary": summary, "responses": {"200": _content(reply)}}
        if request is not None:
            operation["requestBody"] = {"required": True, "content": _content(request)["content"]}
        for status in errors:
            operation["responses"][str(status)] = _content(Error)
        if path != "/health":
            operation["security"] = [{"bearer": []}]
        paths.setdefault(path, {})[method] = operation
    return {
        "openapi": "3.1.0",
        "info": {"title": "swe-forge gym", "version": "1", "description": "Interactive environments over tasks."},
        "paths": paths,
        "components": {
            "schemas": defs.get("$defs", {}),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
    }


def _content(model: type[BaseModel]) -> dict[str, Any]:
    schema = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"description": model.__doc__ or model.__name__, "content": {"application/json": {"schema": schema}}}
