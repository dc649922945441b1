"""Which loader says what a task's test run is configured with: pytest's, npm's and the JavaScript runner's, or cargo's.

The harness asks it in the sanity container (no agent code) and again after the agent's diff
(`protection.apply_agent_diff`); a difference the diff brought is reset, or the task is `unresolved`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from swe_forge_dagster.execution.sandbox import Sandbox
from swe_forge_dagster.harness.models import HarnessTask
from swe_forge_dagster.harness.protection import RunnerConfig
from swe_forge_dagster.languages.node import config as node
from swe_forge_dagster.languages.node.pack import JEST_RUNNER, MOCHA_RUNNER, VITEST_RUNNER
from swe_forge_dagster.languages.python.config import pytest_config
from swe_forge_dagster.languages.python.protection import CONFIG_FILES, CONFIG_TRIGGERS
from swe_forge_dagster.languages.python.runner import PYTEST_RUNNER
from swe_forge_dagster.languages.registry import runner_of
from swe_forge_dagster.languages.rust import config as cargo
from swe_forge_dagster.languages.rust.pack import CARGO_RUNNER

Reader = Callable[[tuple[str, ...]], Callable[[Sandbox], object]]
"""A pack's probe: the task's test files -> how to read the configuration in a box."""


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


def _pytest(files: tuple[str, ...]) -> Callable[[Sandbox], object]:
    return lambda box: pytest_config(box, files)


def _node(name: str) -> Reader:
    return lambda files: lambda box: node.node_config(box, name, files)


def _names_none(_answer: object) -> frozenset[str]:
    return frozenset()  # pytest's plugins and conftest files are guarded by `python_protection`


READERS: dict[str, tuple[Reader, frozenset[str] | None, frozenset[str], Callable[[object], frozenset[str]]]] = {
    PYTEST_RUNNER.name: (_pytest, frozenset(CONFIG_TRIGGERS), frozenset(CONFIG_FILES), _names_none),
    **{
        r.name: (_node(r.name), None, node.CONFIG_FILES, node.named_files)
        for r in (MOCHA_RUNNER, JEST_RUNNER, VITEST_RUNNER)
    },
    CARGO_RUNNER.name: (lambda _files: cargo.cargo_config, None, cargo.CONFIG_FILES, cargo.named_files),
}
"""Runner -> (its reader for the task's test files, triggers (None: ask after every diff), files reset, the files an
answer names as the runner's): each pack's own loader probe."""


def config_reader(task: HarnessTask) -> ConfigReader | None:
    """The reader of `task`'s runner, or None (commands mode, a runner without one here)."""
    if task.mode != "tests":
        return None
    runner = runner_of(task.test_command)
    if runner.name not in READERS:
        return None
    make, triggers, files, named = READERS[runner.name]
    return ConfigReader(runner.name, make(task.run_files), triggers, files, named)
