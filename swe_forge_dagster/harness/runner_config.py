"""Which loader says what a task's test run is configured with: its runner's own, as its language pack declares it.

The harness asks it in the sanity container (no agent code) and again after the agent's diff
(`protection.apply_agent_diff`); a difference the diff brought is reset, or the task is `unresolved`. What each
runner's probe is (pytest's, npm's and the JavaScript runner's, cargo's) is its pack's knowledge
(`LanguagePack.config_probes`, asked through `registry.config_probe`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from swe_forge_dagster.execution.sandbox import Sandbox
from swe_forge_dagster.harness.models import HarnessTask
from swe_forge_dagster.harness.protection import RunnerConfig
from swe_forge_dagster.languages.registry import config_probe, runner_of


@dataclass(frozen=True)
class ConfigReader:
    """How to read one task's effective configuration in a box, and what to reset when it changed."""

    name: str
    read: Callable[[Sandbox], object]
    triggers: frozenset[str] | None
    files: frozenset[str]
    names_files: Callable[[object], frozenset[str]]

    def bound(self, box: Sandbox, before: object) -> RunnerConfig:
        """The reader for `box` (the verification container), with the sanity container's answer."""
        return RunnerConfig(self.name, lambda: self.read(box), before, self.triggers, self.files, self.names_files)


def config_reader(task: HarnessTask) -> ConfigReader | None:
    """The reader of `task`'s runner, or None (commands mode, a runner whose pack declares no probe)."""
    if task.mode != "tests":
        return None
    runner = runner_of(task.test_command)
    probe = config_probe(runner)
    if probe is None:
        return None
    return ConfigReader(runner.name, probe.read(task.run_files), probe.triggers, probe.files, probe.names_files)
