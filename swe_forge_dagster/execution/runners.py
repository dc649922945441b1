"""Test runners: how to run a chosen set of test files and read per-test results, one adapter per runner.

A runner adapter knows its default command template (`{tests}` becomes the quoted test files,
`{report}` where the structured report goes), how to read that report into test ids and
outcomes, and the command that runs a single test (the seed's `checks.txt`). Validation and
evaluation both pick the adapter by name (`runner_for`), so one parser serves both.
Today: pytest with JUnit XML (`-o junit_family=xunit1`, see `execution.junit`); the languages
issue adds more.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from swe_forge_dagster.execution.junit import Outcome, parse_junit

JUNIT = "/tmp/junit.xml"
"""The report path written in stored test commands; each run substitutes its own fresh path."""
PYTEST = (
    "python -m pytest -p no:cacheprovider --continue-on-collection-errors -o junit_family=xunit1 "
    f"--junitxml={JUNIT} -q {{tests}}"
)


@dataclass(frozen=True)
class Runner:
    """One test framework: its default command, its report parser and its single-test command."""

    name: str
    default_command: str
    parse: Callable[[bytes, Iterable[str]], dict[str, Outcome]]
    single_test: Callable[[str], str]
    report_kind: str = "JUnit"

    def command(self, template: str, files: Iterable[str], report: str) -> tuple[str, str]:
        """(the shell command for `files`, where its report will be). A template with its own fixed
        report path (not `JUNIT`) keeps it: the caller then reads that path."""
        command = template.replace("{tests}", " ".join(shlex.quote(f) for f in files))
        if JUNIT in command:
            return command.replace(JUNIT, report), report
        return command, JUNIT


PYTEST_RUNNER = Runner(
    name="pytest",
    default_command=PYTEST,
    parse=lambda xml, files: parse_junit(xml, known_files=files),
    single_test=lambda test_id: f"python -m pytest -p no:cacheprovider -q {shlex.quote(test_id)}",
)
RUNNERS = {runner.name: runner for runner in (PYTEST_RUNNER,)}


def runner_for(name: str = "pytest") -> Runner:
    """The adapter named `name`; ValueError names the known ones."""
    try:
        return RUNNERS[name]
    except KeyError:
        raise ValueError(f"unknown test runner {name!r} (known: {', '.join(sorted(RUNNERS))})") from None
