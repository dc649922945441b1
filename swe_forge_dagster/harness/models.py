"""What the harness works on and what it reports: a task, its configuration, and one task's result.

A `HarnessTask` is the one shape every input format (our task directories, the seed's
`workspace.yaml` directories, SWE-bench instances) is turned into, so the evaluation flow has a
single code path. It has two check modes because the inputs disagree on what a check is:

- `tests`: FAIL_TO_PASS / PASS_TO_PASS are test ids (SWE-bench, our tasks). The task's test
  command runs once per container with a JUnit report, and each id's outcome comes from the
  report, never from the console output (a printed "PASSED" counts for nothing).
- `commands`: they are shell commands (the seed's swe-forge tasks); a check passes when its exit
  code is 0 within the test timeout, which is exactly how the seed judges them.

`TaskResult.summary()` is the seed's per-task JSON object, with our extra keys after its own.
"""

from __future__ import annotations

import datetime as dt
import uuid
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from swe_forge_dagster.common.agent_kind import AgentKind
from swe_forge_dagster.common.content_digest import folder_digest
from swe_forge_dagster.common.sandbox_spec import Network, SandboxSpec
from swe_forge_dagster.execution.carried_trees import CarriedTree
from swe_forge_dagster.execution.patch import split_sections
from swe_forge_dagster.languages.registry import command_test_files
from swe_forge_dagster.settings import (
    DEFAULT_AGENT_CMD,
    DEFAULT_AGENT_TIMEOUT_S,
    DEFAULT_GIT_URL,
    DEFAULT_TEST_TIMEOUT_S,
)

CheckMode = Literal["tests", "commands"]


class Status(StrEnum):
    """The seed's six outcomes. Only the first four are verdicts about the agent or the task."""

    RESOLVED = "resolved"  # every FAIL_TO_PASS now passes and every PASS_TO_PASS still passes
    UNRESOLVED = "unresolved"  # the agent ran and produced a diff, but some check fails
    AGENT_ERROR = "agent_error"  # the agent crashed, timed out, or its diff is unusable
    TEST_ERROR = "test_error"  # no verdict the agent caused: the verify container failed, the gold patch broke the run
    SETUP_ERROR = "setup_error"  # the task could not be set up (input, repo, image, Docker)
    SANITY_FAIL = "sanity_fail"  # the task is broken: FAIL_TO_PASS passes or PASS_TO_PASS fails at base


INFRA_STATUSES = frozenset({Status.SETUP_ERROR, Status.TEST_ERROR})
"""Statuses that mean the harness could not evaluate the task (exit code 1 of the CLI)."""


class HarnessTask(BaseModel):
    """One task, whatever format it came from; see the module docstring for `mode`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task_id: str
    repo: str
    base_commit: str
    prompt: str
    gold_patch: str = Field(default="", repr=False, description="handed only to the built-in oracle")
    test_patch: str = Field(default="", repr=False)
    extra_test_files: dict[str, str] = Field(
        default_factory=dict, repr=False, description="seed meta.test_files: path -> content, written before checks"
    )
    hidden_files: tuple[str, ...] = Field(default=(), description="the task's test files: not in the agent's view")
    mode: CheckMode
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...] = ()
    fail_to_pass_commands: tuple[str, ...] = Field(default=(), description="tests mode: per-id commands, for display")
    pass_to_pass_commands: tuple[str, ...] = ()
    run_files: tuple[str, ...] = Field(default=(), description="tests mode: the files given to the test command")
    environment: Literal["given", "manifest"] = Field(
        default="given",
        description="`manifest`: no recipe was given (a SWE-bench instance without --env-spec); the harness finds "
        "one from the repository's manifests, as `swe-forge validate` does, and reuses the image that built",
    )
    id_form: Literal["full", "swebench"] = Field(
        default="full",
        description="tests mode: `full` ids (ours) match the runner's ids exactly; `swebench` ids (a SWE-bench "
        "instance) are matched as SWE-bench's log parser would cut the runner's ids",
    )
    image: str
    install_commands: tuple[str, ...] = ()
    test_command: str
    source: str = ""
    carried: CarriedTree | None = Field(
        default=None, description="the base tree the task carries (a task repository's repo.tar): built from, no clone"
    )

    @property
    def safe_id(self) -> str:
        """The id as one path component (`owner/repo-N` -> `owner__repo-N`); check it with `check_task_id`."""
        return self.task_id.replace("/", "__")

    @property
    def protected_files(self) -> frozenset[str]:
        """The task's own test files, which no change of the agent's may touch: the hidden files, the
        test_patch's and the seed's test files, and the test files the checks run (by id or by command)."""
        files = {*self.hidden_files, *self.extra_test_files, *self.run_files}
        for section in split_sections(self.test_patch):
            files.update(filter(None, (section.path, section.old_path)))
        if self.mode == "tests":
            files.update(test_id.split("::", 1)[0] for test_id in self.fail_to_pass + self.pass_to_pass)
        files.update(command_test_files(self.fail_to_pass_commands + self.pass_to_pass_commands))
        if self.mode == "commands":
            files.update(command_test_files(self.fail_to_pass + self.pass_to_pass))
        return frozenset(files)

    @property
    def fix_files(self) -> frozenset[str]:
        """The paths the gold patch changes: the fix's by definition, so never reset as test code the task does not
        own (a SWE-bench fix may add a `fixtures/` file its tests read). Empty when there is no readable gold patch."""
        try:
            sections = split_sections(self.gold_patch)
        except ValueError:
            return frozenset()
        return frozenset(path for section in sections for path in (section.path, section.old_path) if path)

    def display_command(self, kind: Literal["fail_to_pass", "pass_to_pass"], index: int) -> str:
        """What the summary shows as a check's `command` (the per-id command when the task has one)."""
        ids = self.fail_to_pass if kind == "fail_to_pass" else self.pass_to_pass
        commands = self.fail_to_pass_commands if kind == "fail_to_pass" else self.pass_to_pass_commands
        return commands[index] if len(commands) == len(ids) else ids[index]


class TaskLoadError(BaseModel):
    """An input that could not become a `HarnessTask`; it is reported as a `setup_error` result."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    repo: str = ""
    source: str
    reason: str

    def as_result(self) -> TaskResult:
        """This input's result: a task that could not be set up, like any other."""
        now = dt.datetime.now(dt.UTC)
        return TaskResult(
            task_id=self.task_id,
            repo=self.repo,
            status=Status.SETUP_ERROR,
            reason=self.reason,
            started_at=now,
            finished_at=now,
        )


class CheckResult(BaseModel):
    """One FAIL_TO_PASS or PASS_TO_PASS check: the seed's four keys, then ours.

    In `tests` mode `duration_ms` is that of the suite run that produced the outcome (one run covers every id),
    `exit_code` is what the check's own `command` (that one test) gives: 0 when it passed, else the suite's non-zero
    status (the suite's status itself reflects the planted failing test, never this one's), `outcome` is the report's
    outcome (`missing` when the report has no such test, which counts as not passed), and the suite's output is
    kept on the first check that did not pass (none when all did).
    """

    command: str
    exit_code: int
    passed: bool
    duration_ms: int
    test_id: str | None = None
    outcome: str | None = None
    output: str = Field(default="", repr=False)
    message: str = Field(default="", repr=False, description="why the test failed, from the runner's report")


class TaskResult(BaseModel):
    """The outcome of one task. `reason` says why for every status but `resolved`."""

    task_id: str
    repo: str
    status: Status
    reason: str | None = None
    sanity_check: bool = False
    agent_duration_secs: float = 0.0
    test_duration_secs: float = Field(default=0.0, description="the checks' own run time, sanity and verification")
    total_duration_secs: float = 0.0
    fail_to_pass: list[CheckResult] = Field(default_factory=list)
    pass_to_pass: list[CheckResult] = Field(default_factory=list)
    agent_exit_code: int | None = None
    agent_output: str = Field(default="", repr=False)
    model_patch: str = Field(default="", repr=False, description="the agent's diff as applied (test files dropped)")
    dropped_paths: list[str] = Field(
        default_factory=list,
        description="paths the agent changed that are protected (tests, runner configuration, install outputs): not "
        "applied",
    )
    review: list[str] = Field(
        default_factory=list,
        description="lines of the applied diff that reach into how the tests run or are reported (`harness.review`):"
        " for a person to read; they never change the verdict",
    )
    unjudged: list[str] = Field(
        default_factory=list,
        description="PASS_TO_PASS checks left out of the verdict: they fail before any change because they need a "
        "network host the sandbox cannot reach (`execution.failures`)",
    )
    defences: str = Field(
        default="",
        description="the planted tests the verdict was judged with (`harness.sanity.defences`): canaries and twins "
        "run apart, or why there were none",
    )
    image: str | None = None
    containers: list[str] = Field(default_factory=list, description="kept containers (--keep-containers)")
    started_at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC))
    finished_at: dt.datetime | None = None

    def summary(self) -> dict[str, Any]:
        """The seed's per-task JSON object (`error` is the seed's name for `reason`), plus our keys."""
        return {
            "task_id": self.task_id,
            "repo": self.repo,
            "status": self.status.value,
            "sanity_check": self.sanity_check,
            "agent_duration_secs": round(self.agent_duration_secs, 2),
            "total_duration_secs": round(self.total_duration_secs, 2),
            "fail_to_pass": [check.model_dump() for check in self.fail_to_pass],
            "pass_to_pass": [check.model_dump() for check in self.pass_to_pass],
            "error": self.reason,
            "test_duration_secs": round(self.test_duration_secs, 2),
            "agent_exit_code": self.agent_exit_code,
            "agent_output": self.agent_output,
            "diff_bytes": len(self.model_patch.encode("utf-8", "surrogateescape")),
            "dropped_paths": self.dropped_paths,
            "review": self.review,
            "unjudged": self.unjudged,
            "defences": self.defences,
            "image": self.image,
            "containers": self.containers,
        }


class HarnessConfig(BaseModel):
    """Everything one harness run needs; secrets are not here (only the names of variables to forward)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: AgentKind = AgentKind.COMMAND
    agent_dir: Path | None = None
    predictions: dict[str, str] = Field(
        default_factory=dict, description="instance id -> model_patch (agent `predictions`: SWE-bench's files)"
    )
    model_name: str = Field(default="", description="the predictions' model_name_or_path: the agent's name")
    agent_cmd: str = DEFAULT_AGENT_CMD
    agent_timeout: float = Field(default=DEFAULT_AGENT_TIMEOUT_S, gt=0)
    test_timeout: float = Field(default=DEFAULT_TEST_TIMEOUT_S, gt=0)
    sandbox: SandboxSpec = Field(
        default_factory=SandboxSpec,
        description="the containers' image (for tasks that do not name their own), limits, CA bundle, and the "
        "agent container's network (the sanity and verify runs have none)",
    )
    build_network: Network = Field(default="bridge", description="environment builds (installs need a registry)")
    agent_env: tuple[str, ...] = Field(default=(), description="names of host variables forwarded to the agent")
    keep_containers: bool = False
    plugin_autoload: bool = Field(
        default=False,
        description="let the test runners autoload entry-point plugins in checks (off: each runner's `plugins_off` "
        "line runs first)",
    )
    pull: bool = Field(default=False, description="pull a missing base image instead of failing the task")
    git_url: str = DEFAULT_GIT_URL
    repo_cache_dir: Path = Path(".swe-forge/cache/repos")
    registry: str = Field(default="", description="environment images pulled from and pushed to (SWE_FORGE_REGISTRY)")
    parallel: int = Field(default=1, ge=1, le=64)
    run_id: str = Field(default_factory=lambda: uuid.uuid4().hex[:12])

    @field_validator("agent_dir")
    @classmethod
    def _absolute_agent_dir(cls, value: Path | None) -> Path | None:
        """Absolute, so the agent's label (and its eval_results rows) is the same from the CLI and the UI."""
        return value.expanduser().resolve() if value is not None else None

    @field_validator("agent_env")
    @classmethod
    def _names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not name or "=" in name or not name.replace("_", "a").isalnum():
                raise ValueError(f"--agent-env takes a variable NAME (its value is read from the host), got {name!r}")
        return value

    @model_validator(mode="after")
    def _agent_needs_dir(self) -> HarnessConfig:
        if self.agent is AgentKind.COMMAND and self.agent_dir is None:
            raise ValueError("an agent command needs --agent-dir (or use the built-in --agent oracle)")
        if self.agent is AgentKind.PREDICTIONS and not self.model_name:
            raise ValueError("predictions need the model_name_or_path that names them")
        return self

    @property
    def docker_image(self) -> str:
        """The image for tasks that do not name their own."""
        return self.sandbox.image

    @property
    def agent_label(self) -> str:
        """How results name the agent: the oracle, the predictions' model, or the command, its folder's name and the
        digest of the folder's content (`common.content_digest`): the same agent in any checkout, never the host's
        path."""
        if self.agent is AgentKind.ORACLE:
            return AgentKind.ORACLE.value
        if self.agent is AgentKind.PREDICTIONS:
            return self.model_name
        folder = Path(self.agent_dir).resolve() if self.agent_dir else Path(".")
        return f"{self.agent_cmd} @ {folder.name}#{folder_digest(folder)[:12]}"
