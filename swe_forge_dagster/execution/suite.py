"""Run a test command in a prepared container and read its structured results: the one way tests run.

Task validation (the PR's tests without and with the fix) and evaluation (the task's checks on
the agent's diff) both run their suites here, so both get the same guarantees:

- the report path is fresh and random per run (unless the command names its own, `Runner.own_report`),
  and removed before the command, so a report left behind by earlier code
  (or written ahead by the code under test) is never read;
- console output is never parsed for verdicts: a run without a readable report has no outcomes
  (`error` says why), and printing "PASSED" proves nothing;
- the command runs as another user than the shell that reaps it (`execution.test_user`: it can signal none of
  root's processes and write only the checkout, its home and the temporary folders), under a timeout that kills
  its whole process group; output is bounded; when it ends, every process it left behind (in any group or
  session) is killed by root before the report is read, and the shell ends with builtins only
  (`test_user.REAP`, `test_user.LAST`);
- the report is read with a size limit and only when it is a regular file (no symlink is followed);
- unless `plugin_autoload`, the runner's `plugins_off` line runs first: installed packages' entry points
  load no plugin into the runner (package metadata reaching its path cannot inject one).
"""

from __future__ import annotations

import shlex
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field

from swe_forge_dagster.execution.failures import failure_messages
from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.execution.repo_box import REPO_DIR, WORK_DIR
from swe_forge_dagster.execution.runners import Runner
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxError
from swe_forge_dagster.execution.test_user import test_command_script

MAX_OUTPUT = 40_000
MAX_REPORT_BYTES = 64 << 20


@dataclass
class SuiteRun:
    """One run of a suite: per-test outcomes, or None with `error` saying why there are none."""

    outcomes: dict[str, Outcome] | None
    exit_code: int
    output: str
    seconds: float
    error: str | None = None
    timed_out: bool = False
    messages: dict[str, str] = field(default_factory=dict)
    """Why each test that did not pass failed, from the report (`execution.failures`)."""


def run_suite(
    box: Sandbox,
    template: str,
    files: Sequence[str],
    timeout: float,
    *,
    runner: Runner,
    plugin_autoload: bool = False,
    max_output: int = MAX_OUTPUT,
) -> SuiteRun:
    """Run `template` for the test `files` in `box`'s /repo and read the report (see the module docstring)."""
    command, report = runner.command(template, files, f"{WORK_DIR}/report-{uuid.uuid4().hex}.xml")
    prefix = "" if plugin_autoload else runner.plugins_off
    where = shlex.quote(report.rsplit("/", 1)[0] or "/")
    opened = f"find {where} -maxdepth 0 -type d -exec chmod a+rwx {{}} +"  # never through a planted link
    result = box.run(
        test_command_script(
            f"{prefix}{command}",
            prelude=f"cd {REPO_DIR} && rm -f {shlex.quote(report)} && mkdir -p {where} && {opened}",
        ),
        timeout=timeout,
        max_output=max_output,
    )
    run = SuiteRun(None, result.exit_code, result.output, result.duration_s, timed_out=result.timed_out)
    if result.timed_out:
        run.error = f"the test command timed out after {timeout:g}s"
        return run
    if result.disk_exceeded:
        run.error = f"the test command wrote past {box.config.disk_phrase()} and was stopped"
        return run
    try:
        xml = box.read_file(report, max_bytes=MAX_REPORT_BYTES, follow_symlinks=False)
    except (SandboxError, IsADirectoryError) as exc:
        run.error = f"the {runner.report_kind} report is unreadable: {exc}"
        return run
    if not xml:
        tail = result.output[-1500:]
        run.error = f"the test command (exit {result.exit_code}) wrote no {runner.report_kind} report: {tail}"
        return run
    try:
        run.outcomes = runner.parse(xml, files)
    except (ET.ParseError, ValueError, RecursionError) as exc:  # a report is written by the code under test
        run.error = f"the {runner.report_kind} report is unreadable: {exc}"
        return run
    if any(outcome != "passed" for outcome in run.outcomes.values()):
        run.messages = failure_messages(xml, runner.parse, files)
    return run
