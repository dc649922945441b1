"""Driving an environment of `swe-forge gym serve` instead of a local checkout (standard library only).

The second way of running an agent: the harness runs `python -m baseagent` inside the task's container;
here baseagent runs anywhere, opens an environment over HTTP, gives the model the environment's own six
tools (bash, view, str_replace, insert, create, answer), forwards each call, and ends with `answer`, whose
reward (1.0 or 0.0) and harness result it prints as JSON on stdout.

    SWE_FORGE_GYM_TOKEN=... python -m baseagent --gym http://127.0.0.1:8765 --task acme-labs__tinycalc-12
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

TOKEN_VARS = ("BASEAGENT_GYM_TOKEN", "SWE_FORGE_GYM_TOKEN")
SYSTEM = """You are an expert software engineer. The repository at /testbed has an issue to fix.
Investigate with the tools (bash, view), make the smallest change to the source code that fixes the
issue (str_replace, insert, create), check it (e.g. run a snippet or the relevant tests with bash),
then call answer: your changes are graded by the task's hidden tests, and answer ends the episode.
Do not modify existing tests to make them pass. There is no network."""


class GymError(RuntimeError):
    """The server refused a request (its status and message), or could not be reached."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"gym HTTP {status}: {message}" if status else f"gym unreachable: {message}")
        self.status = status


class GymSession:
    """The server's HTTP API (see `swe_forge_dagster.gym.server`), one JSON request per method."""

    def __init__(self, url: str, token: str, timeout: float = 3600.0) -> None:
        self.url, self.token, self.timeout = url.rstrip("/"), token, timeout

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        request = urllib.request.Request(self.url + path, data=data, headers=headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            try:
                message = json.loads(exc.read()).get("error", "")
            except ValueError:
                message = exc.reason
            raise GymError(exc.code, str(message)[:1000]) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            raise GymError(0, str(exc)) from None

    def open(self, task_id: str, agent: str) -> dict[str, Any]:
        return self.request("POST", "/open", {"task_id": task_id, "agent": agent})

    def call(self, env_id: str, tool: str, arguments: str | dict[str, Any]) -> dict[str, Any]:
        return self.request("POST", "/call", {"env_id": env_id, "tool": tool, "arguments": arguments})

    def answer(self, env_id: str) -> dict[str, Any]:
        return self.request("POST", "/answer", {"env_id": env_id})

    def close(self, env_id: str) -> dict[str, Any]:
        return self.request("POST", "/close", {"env_id": env_id})


class GymTools:
    """The agent loop's toolbox for an environment: each call goes to the server; `answer` ends the loop."""

    def __init__(self, session: GymSession, env_id: str, finished: type[Exception]) -> None:
        self.session, self.env_id, self.finished = session, env_id, finished
        self.result: dict[str, Any] | None = None

    def call(self, name: str, arguments: str) -> str:
        """The observation; the model's argument text goes as it is (the server checks it and says what is wrong)."""
        try:
            payload = self.session.call(self.env_id, name, arguments or "{}")
        except GymError as exc:
            if exc.status != 400:  # a malformed call (no tool name) is the model's to fix; anything else ends the run
                raise
            return f"error: {exc}"
        if payload.get("done"):
            self.result = payload
            raise self.finished(f"reward {payload.get('reward')}: {payload.get('status')}")
        return str(payload.get("observation", ""))

    def conclude(self) -> dict[str, Any]:
        """The episode's end: the answer already given, or `answer` now (the model stopped without it)."""
        if self.result is None:
            self.result = self.session.answer(self.env_id)
        return self.result
