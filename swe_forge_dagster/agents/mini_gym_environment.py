"""mini-swe-agent's environment in an episode of `swe-forge gym serve`: the agent's commands through the gym's `bash`.

Why: a user compares "the agent through SWE-bench's loop" (its own Docker environment) with "the same agent through
the gym" on one task set, same model, same prompts; only where the commands run differs. This file is copied beside
the run and imported by mini-swe-agent in its own environment (`environment_class:
swe_forge_gym_environment.GymEnvironment`), so it uses the standard library and mini-swe-agent only.

mini-swe-agent makes an environment from its configuration alone; which task to open comes from its
`run.env_startup_command`, rendered per instance: `swe-forge-gym-open <instance_id>` opens the task's episode. When
the agent submits (the first line of a command's output is its submission line, exit 0), the episode is answered
(the gym grades it and records the reward) before the submission goes back to the agent's loop.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shlex
import urllib.error
import urllib.request
from typing import Any

OPEN_COMMAND = "swe-forge-gym-open"
SUBMIT_LINE = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""mini-swe-agent's submission: the first line of a command's output (exit 0); the rest of that output is the patch."""


class GymEnvironment:
    """Executes bash commands in a gym episode (see the module docstring). Keys of mini-swe-agent's own environment
    configuration that mean nothing here (`image`, `run_args`, `env`...) are accepted and ignored."""

    def __init__(
        self,
        *,
        url: str,
        agent: str = "mini-swe-agent",
        token_variable: str = "SWE_FORGE_GYM_TOKEN",
        timeout: int = 120,
        **ignored: Any,
    ) -> None:
        self.config = {"url": url, "agent": agent, "timeout": timeout, "cwd": "/testbed"}
        self._token = os.environ.get(token_variable, "")
        self.env_id: str | None = None
        self.answer: dict[str, Any] | None = None

    def _request(self, path: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
        request = urllib.request.Request(
            self.config["url"].rstrip("/") + path,
            data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {self._token}", "Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"gym {path}: HTTP {exc.code}: {exc.read().decode(errors='replace')[:500]}") from None

    def execute(self, action: dict[str, Any] | str, cwd: str = "", *, timeout: int | None = None) -> dict[str, Any]:
        command = action if isinstance(action, str) else action.get("command", "")
        if command.startswith(OPEN_COMMAND + " "):
            task_id = command.split(maxsplit=1)[1].strip()
            self.env_id = self._request("/open", {"task_id": task_id, "agent": self.config["agent"]}, 1800)["env_id"]
            return {"output": f"opened {task_id}", "returncode": 0, "exception_info": ""}
        if self.env_id is None:
            raise RuntimeError(f"no gym episode is open: the run's env_startup_command must be `{OPEN_COMMAND} <id>`")
        # as mini-swe-agent's Docker environment runs each command (a new shell in the working folder), not the
        # gym's one session where `cd` and `export` carry over
        command = f"cd {shlex.quote(cwd or self.config['cwd'])} && (\n{command}\n)"
        reply = self._request("/call", {"env_id": self.env_id, "tool": "bash", "arguments": {"command": command}}, 3600)
        data = reply.get("data") or {}
        output, _, tail = str(reply.get("observation", "")).rpartition("\n")  # the gym's last line: `[exit code N]`
        result = {"output": output, "returncode": int(data.get("exit_code", 1)), "exception_info": ""}
        if data.get("timed_out"):
            result["exception_info"] = tail
        self._check_finished(result, truncated=bool(data.get("truncated")))
        return result

    def _check_finished(self, output: dict[str, Any], *, truncated: bool) -> None:
        """On the submission line, answer the episode and end the agent's loop with the patch: the agent's own, or
        (when the gym cut a long output short) the diff the gym graded. An answer that fails still submits."""
        lines = output.get("output", "").lstrip().splitlines(keepends=True)
        if not (lines and lines[0].strip() == SUBMIT_LINE and output["returncode"] == 0):
            return
        from minisweagent.exceptions import Submitted

        submission = "".join(lines[1:])
        if submission and not submission.endswith("\n"):  # the gym trims the output's last newline; a diff has one
            submission += "\n"
        extra: dict[str, Any] = {"exit_status": "Submitted"}
        try:
            self.answer = self._request("/answer", {"env_id": self.env_id}, 3600)
            extra["gym_reward"] = self.answer.get("reward")
            if truncated:
                submission = str(self.answer.get("model_patch") or submission)
        except (OSError, RuntimeError, ValueError) as exc:
            extra["gym_error"] = str(exc)
        extra["submission"] = submission
        raise Submitted({"role": "exit", "content": submission, "extra": extra})

    def close(self) -> None:
        """End an episode the agent left without answering (step limit, an error): the gym frees its slot now rather
        than at its idle timeout. mini-swe-agent never calls it; the object's end does."""
        if self.env_id is not None and self.answer is None:
            env_id, self.env_id = self.env_id, None
            with contextlib.suppress(OSError, RuntimeError, ValueError):
                self._request("/close", {"env_id": env_id}, 60)

    def __del__(self) -> None:
        self.close()

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        return {**self.config, **platform.uname()._asdict(), **kwargs}

    def serialize(self) -> dict[str, Any]:
        return {
            "info": {
                "config": {
                    "environment": {**self.config, "env_id": self.env_id, "answer": self.answer},
                    "environment_type": f"{self.__class__.__module__}.{self.__class__.__name__}",
                }
            }
        }
