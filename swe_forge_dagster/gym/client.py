"""A Python client of `swe-forge gym serve` (what a trainer or an agent framework calls; one kept-alive connection).

    with GymClient("http://127.0.0.1:8765", token) as gym:
        env = gym.open("acme-labs__tinycalc-12", agent="my-agent")
        print(env["prompt"]); tools = env["tools"]
        out = gym.call(env["env_id"], "bash", {"command": "pytest -q"})
        print(out["observation"])
        result = gym.answer(env["env_id"])          # result["reward"]: 1.0 or 0.0

Any other language does the same with plain HTTP (see `gym.server`); `examples/baseagent` has a standard-library
one. A non-2xx answer raises `GymError` with the server's status and message.
"""

from __future__ import annotations

from typing import Any

import httpx


class GymError(RuntimeError):
    def __init__(self, status: int, payload: dict[str, Any]) -> None:
        super().__init__(f"HTTP {status}: {payload.get('error', payload)}")
        self.status, self.payload = status, payload


class GymClient:
    def __init__(self, url: str, token: str, *, timeout: float = 3600.0) -> None:
        self._http = httpx.Client(
            base_url=url.rstrip("/"),
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(timeout, connect=10.0),
        )

    def __enter__(self) -> GymClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        response = self._http.request(method, path, json=body)
        try:
            payload = response.json()
        except ValueError:
            payload = {"error": response.text[:500]}
        if response.status_code >= 300:
            raise GymError(response.status_code, payload)
        return payload

    def health(self) -> dict[str, Any]:
        return self.request("GET", "/health")

    def tools(self) -> list[dict[str, Any]]:
        return self.request("GET", "/tools")["tools"]

    def tasks(self) -> list[dict[str, Any]]:
        return self.request("GET", "/tasks")["tasks"]

    def environments(self) -> list[dict[str, Any]]:
        return self.request("GET", "/environments")["environments"]

    def open(self, task_id: str, agent: str = "agent") -> dict[str, Any]:
        return self.request("POST", "/open", {"task_id": task_id, "agent": agent})

    def call(self, env_id: str, tool: str, arguments: dict[str, Any] | str | None = None) -> dict[str, Any]:
        return self.request("POST", "/call", {"env_id": env_id, "tool": tool, "arguments": arguments or {}})

    def answer(self, env_id: str) -> dict[str, Any]:
        return self.request("POST", "/answer", {"env_id": env_id})

    def close_environment(self, env_id: str) -> dict[str, Any]:
        return self.request("POST", "/close", {"env_id": env_id})
