"""What the sanity container says, for the verification run to compare with.

Read in the sanity container (base + the task's tests, where no agent code has run) before it is disposed: the
runner's effective configuration and the directories the checks import top-level modules from, for the tree before
any diff (`harness.protection`: the verify container starts from the same tree; none for the oracle, whose gold patch
is applied whole); the PASS_TO_PASS tests that xfailed there (`checks.KEPT`); and the system files the checks
themselves change (`system_files`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from swe_forge_dagster.common.agent_kind import AgentKind
from swe_forge_dagster.execution.sandbox import Sandbox
from swe_forge_dagster.harness.checks import CheckRun, kept_at_base
from swe_forge_dagster.harness.models import HarnessTask
from swe_forge_dagster.harness.runner_config import ConfigReader, config_reader
from swe_forge_dagster.harness.system_files import system_changes
from swe_forge_dagster.languages.registry import import_roots, runner_of


@dataclass(frozen=True)
class Baseline:
    config: tuple[ConfigReader, object] | None = None
    """The runner's configuration reader and its answer for the tree before any diff (None: not judged)."""
    roots: list[str] | None = None
    """Where the checks import top-level modules from (None: not asked)."""
    kept: dict[str, str] = field(default_factory=dict)
    """PASS_TO_PASS test -> the non-pass outcome that keeps it (`checks.kept_at_base`)."""
    system: frozenset[str] | None = None
    """The system files the sanity run's checks changed (None: the engine could not say)."""


def read_baseline(box: Sandbox, task: HarnessTask, sanity: CheckRun, agent: AgentKind) -> Baseline:
    """The sanity container's answers (see the module docstring)."""
    reader = config_reader(task) if agent is not AgentKind.ORACLE else None
    config = (reader, reader.read(box)) if reader is not None else None
    runner = runner_of(task.test_command)
    judged = reader is not None and runner.in_process
    roots = import_roots(runner, box, task.run_files, task.test_command) if judged else None
    return Baseline(config, roots, kept_at_base(sanity), system_changes(box))
