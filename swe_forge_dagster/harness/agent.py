"""Run the agent in its container and take its diff.

The agent gets what the seed's harness gives it, so seed agents run unchanged: the repository at
/repo as its working directory, its own directory mounted read-only at /agent (on PYTHONPATH, so
`python -m baseagent` works), and the task statement three ways: the file /task/prompt.md, the
variable SWE_FORGE_PROMPT_FILE naming it, and the seed's arguments `--prompt <text> --workdir /repo`.
One command-line argument cannot exceed 128 KiB on Linux (E2BIG), so a statement over
`MAX_PROMPT_ARG_BYTES` is passed truncated, with a note naming /task/prompt.md, which always holds
all of it.
Nothing else from the host reaches it: no variables but the ones forwarded by name, no network
unless configured, no history beyond the single base commit.

The built-in oracle is not an agent command: the harness applies the task's gold patch itself
(test files filtered out as for any agent), so the gold patch is never written into the container
of an agent that could read it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from swe_forge_dagster.common.agent_kind import AgentKind
from swe_forge_dagster.execution.repo_box import REPO_DIR, take_diff
from swe_forge_dagster.execution.sandbox import Sandbox
from swe_forge_dagster.harness.models import HarnessConfig, HarnessTask

AGENT_DIR = "/agent"
PROMPT_FILE = "/task/prompt.md"
PROMPT_ARG_FILE = "/task/prompt-argument.txt"
MAX_PROMPT_ARG_BYTES = 100 << 10
TRUNCATION_NOTE = f"\n\n[truncated: the full task statement is in {PROMPT_FILE}]"
OUTPUT_TAIL = 10_000
MAX_AGENT_OUTPUT = 200_000


@dataclass
class AgentRun:
    """What the agent did. `failure` is set when the run itself failed (crash, timeout, no diff)."""

    exit_code: int | None
    output: str
    duration_s: float
    diff: str = ""
    failure: str | None = None


def agent_environment(task: HarnessTask, forwarded: dict[str, str]) -> dict[str, str]:
    """The agent container's variables: where the prompt and repo are, then the forwarded ones."""
    return {
        "SWE_FORGE_PROMPT_FILE": PROMPT_FILE,
        "SWE_FORGE_TASK_ID": task.task_id,
        "SWE_FORGE_REPO_DIR": REPO_DIR,
        "PYTHONPATH": AGENT_DIR,
        "PYTHONDONTWRITEBYTECODE": "1",  # /agent is read-only
        **forwarded,
    }


def prompt_files(prompt: str) -> dict[str, bytes]:
    """The files the agent's container gets: the whole statement, and the (maybe truncated) argument."""
    full = prompt.encode("utf-8", "surrogateescape")
    argument = full
    if len(full) > MAX_PROMPT_ARG_BYTES:
        cut = MAX_PROMPT_ARG_BYTES - len(TRUNCATION_NOTE.encode())
        while cut > 0 and full[cut] & 0xC0 == 0x80:  # not inside a UTF-8 character
            cut -= 1
        argument = full[:cut] + TRUNCATION_NOTE.encode()
    return {PROMPT_FILE: full, PROMPT_ARG_FILE: argument}


def agent_command(config: HarnessConfig) -> str:
    """The seed's invocation: `<agent-cmd> --prompt '<statement>' --workdir /repo`, run in /repo."""
    return f'cd {REPO_DIR} && {config.agent_cmd} --prompt "$(cat {PROMPT_ARG_FILE})" --workdir {REPO_DIR}'


def run_agent(box: Sandbox, task: HarnessTask, config: HarnessConfig, base_sha: str) -> AgentRun:
    """Run the configured agent (or the oracle) in `box` and take its diff against `base_sha`.

    The prompt file is already in place: it is written when the container starts.
    """
    started = time.perf_counter()
    if config.agent is AgentKind.ORACLE:
        # The reference solution is trusted: its diff is the gold patch, whole (protection is for agents'
        # diffs, so a gold patch that edits a file the checks name keeps that edit).
        return AgentRun(0, "oracle: the gold patch", round(time.perf_counter() - started, 3), diff=task.gold_patch)
    if config.agent is AgentKind.PREDICTIONS:  # SWE-bench's model_patch: an agent's diff like any other (not trusted)
        patch = config.predictions.get(task.task_id, "")
        return AgentRun(0, f"{config.model_name}: its prediction", 0.0, diff=patch)
    else:
        result = box.run(agent_command(config), timeout=config.agent_timeout, max_output=MAX_AGENT_OUTPUT)
        run = AgentRun(result.exit_code, result.output[-OUTPUT_TAIL:], round(time.perf_counter() - started, 3))
        if result.timed_out:
            run.failure = f"the agent timed out after {config.agent_timeout:g}s"
            return run
        if result.disk_exceeded:
            run.failure = f"the agent wrote more than {box.config.disk_phrase()} and was stopped"
            return run
        if result.exit_code != 0:
            run.failure = f"the agent exited with status {result.exit_code}: {result.output[-500:].strip()}"
            return run
    run.diff = take_diff(box, base_sha)
    return run
