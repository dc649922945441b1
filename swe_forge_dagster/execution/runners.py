"""Test runners: how to run a chosen set of test files and read per-test results, one adapter per runner.

A runner adapter knows its default command template (`{tests}` becomes the quoted test files,
`{report}` where the structured report goes), how to read that report into test ids and
outcomes, and the command that runs a single test (the seed's `checks.txt`). Validation and
evaluation both pick the adapter by name (`runner_for`), so one parser serves both.
Today: pytest with JUnit XML (`-o junit_family=xunit1`, see `execution.junit`); the languages
issue adds more.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from swe_forge_dagster.execution.junit import Outcome, parse_junit, worst

JUNIT = "/tmp/junit.xml"
"""The report path written in stored test commands; each run substitutes its own fresh path."""
PYTEST = (
    "python -m pytest -p no:cacheprovider --continue-on-collection-errors -o junit_family=xunit1 "
    f"--junitxml={JUNIT} -rA -q {{tests}}"
)
"""The default pytest command: JUnit for our ids, `-rA` so the console log is the one SWE-bench's
log parser reads (a `PASSED <id>` / `FAILED <id> - ...` line per test)."""


_JUNITXML = re.compile(r"--junit-?xml[= ](?P<path>'[^']+'|\"[^\"]+\"|\S+)")


def fill_tests(template: str, files: Iterable[str]) -> str:
    """The template with `{tests}` replaced by the quoted test files: the one way every caller fills it.

    Recipes are `str.format` templates (the environment agent's commands are checked that way, so
    any other brace in them is doubled: `find . -exec rm {{}} +`); a command that is not a valid
    format template (a seed or SWE-bench input with literal braces) has `{tests}` replaced as text.
    """
    joined = " ".join(shlex.quote(f) for f in files)
    try:
        return template.format(tests=joined)
    except (KeyError, IndexError, ValueError):
        return template.replace("{tests}", joined)


@dataclass(frozen=True)
class Runner:
    """One test framework: its report parser, its single-test command and how its report path is set."""

    name: str
    parse: Callable[[bytes, Iterable[str]], dict[str, Outcome]]
    single_test: Callable[[str], str]
    grading_id: Callable[[str], str]
    """A full test id in the form SWE-bench's log parser for this runner produces (its lists use it)."""
    report_kind: str = "JUnit"

    def command(self, template: str, files: Iterable[str], report: str) -> tuple[str, str]:
        """(the shell command for `files`, the report path to read).

        The stored report path `JUNIT` is replaced by `report` (fresh per run). A template that
        writes its report to a path of its own (`--junitxml=/elsewhere.xml`) keeps it, and that path
        is returned (the caller removes it before the run, so a stale file is never read); a
        template with no report option at all gets `JUNIT`, where nothing will be written.
        """
        command = fill_tests(template, files)
        if JUNIT in command:
            return command.replace(JUNIT, report), report
        own = _JUNITXML.search(command)
        return command, own.group("path").strip("'\"") if own else JUNIT


PYTEST_RUNNER = Runner(
    name="pytest",
    parse=lambda xml, files: parse_junit(xml, known_files=files),
    single_test=lambda test_id: f"python -m pytest -p no:cacheprovider -q {shlex.quote(test_id)}",
    # `parse_log_pytest` keeps the first whitespace-delimited token after the status word.
    grading_id=lambda test_id: (test_id.split() or [test_id])[0],
)
RUNNERS = {runner.name: runner for runner in (PYTEST_RUNNER,)}


def runner_for(name: str = "pytest") -> Runner:
    """The adapter named `name`; ValueError names the known ones."""
    try:
        return RUNNERS[name]
    except KeyError:
        raise ValueError(f"unknown test runner {name!r} (known: {', '.join(sorted(RUNNERS))})") from None


def swebench_ids(runner: Runner, full_ids: Iterable[str]) -> list[str]:
    """The ids as SWE-bench lists them (`runner.grading_id`), in order, each once."""
    return list(dict.fromkeys(runner.grading_id(test_id) for test_id in full_ids))


def graded_outcomes(runner: Runner, outcomes: Mapping[str, Outcome]) -> dict[str, Outcome]:
    """Outcomes keyed by SWE-bench's ids. Tests whose ids cut to the same one share it, and the worst
    outcome wins, as in SWE-bench, whose parser keeps the last line for an id and pytest's `-rA`
    summary prints passes first and failures last."""
    graded: dict[str, Outcome] = {}
    for test_id, outcome in outcomes.items():
        key = runner.grading_id(test_id)
        graded[key] = outcome if key not in graded else worst(graded[key], outcome)
    return graded
