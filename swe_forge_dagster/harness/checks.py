"""Run a task's FAIL_TO_PASS and PASS_TO_PASS checks in a prepared container, and judge them.

Used twice per task with the same code: the sanity check (base + test_patch: FAIL_TO_PASS must
fail, PASS_TO_PASS must pass, else the task itself is broken) and the verification (base + the
agent's diff + test_patch: everything must pass).

In `tests` mode the suite runs once through `execution.suite.run_suite`, the same function task
validation runs its suites with (fresh random report path, no console parsing, bounded and
symlink-safe report reading, a timeout that kills the process group): the verdict per test id
comes from the structured report. A run without a report (the suite did not start, or timed
out) gives no verdict: `sanity_fail` at base; after an agent's diff, the agent's `unresolved` (the same image
gave one at base), after the gold patch `test_error`. In
`commands` mode each command's exit code decides, within the test timeout; a command that times
out has failed (exit 124).

Every check command runs after its runner's `plugins_off` line unless the configuration asks for plugin
autoloading (`--pytest-plugin-autoload`): for pytest, no plugin is loaded from installed packages' `[pytest11]` entry
points found on its path, and the plugins installed in the environment's own site-packages are named with `-p`
instead (`languages.python.runner.ENVIRONMENT_PLUGINS`), so package metadata that reaches the checkout cannot inject
a plugin, while a suite whose configuration needs an installed plugin (astropy's `--doctest-rst`, pytest-httpbin's
`httpbin` fixture) starts as it did when its lists were made.

In the sanity and verify runs, canary tests (`execution.canaries`; each runner's `plant`, chosen by
`prepare_canaries` and kept by `run_sanity` only when they behave where no agent code runs) tell whether
the code under test tampered with the results: in `tests` mode from the same report, in `commands` mode
(a pack's `command_canaries`) as one more command that must fail (an exit code is all that mode has, so code that
ends the test process early with status 0 would otherwise pass its checks).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from swe_forge_dagster.execution.canaries import Planted
from swe_forge_dagster.execution.failures import needs_network
from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.execution.repo_box import REPO_DIR, put_files, seal_checkout
from swe_forge_dagster.execution.runners import graded_outcomes
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxError
from swe_forge_dagster.execution.suite import MAX_OUTPUT, run_suite
from swe_forge_dagster.execution.test_user import test_command_script
from swe_forge_dagster.harness.models import CheckResult, HarnessTask
from swe_forge_dagster.languages.registry import (
    canary_checks,
    command_canaries,
    command_ids,
    exit_status_is_runners,
    plugins_off,
    runner_of,
)

CHECK_OUTPUT_TAIL = 2_000


@dataclass
class CheckRun:
    """The checks' results; `error` is set when the run could not produce a verdict."""

    fail_to_pass: list[CheckResult]
    pass_to_pass: list[CheckResult]
    error: str | None = None
    duration_s: float = 0.0  # the commands' own run time (what the harness adds is not in it)
    tampered: str | None = None  # why the results cannot be trusted (`execution.canaries`)
    canaries_ok: bool | None = None  # the canaries gave their expected outcomes (None: none ran)
    twin_ok: bool | None = None  # the twin ran beside every reported instance of its original (None: no twin)
    set_aside: list[str] = field(default_factory=list)  # FAIL_TO_PASS not judgeable here (`set_aside_unreachable`)
    reported: Mapping[str, Outcome] | None = None  # the report's outcomes by the runner's own ids (None: no report)

    @property
    def all_pass(self) -> bool:
        return (
            self.error is None
            and self.tampered is None
            and all(c.passed for c in self.fail_to_pass + self.pass_to_pass)
        )

    def counts(self) -> str:
        f2p = sum(c.passed for c in self.fail_to_pass)
        p2p = sum(c.passed for c in self.pass_to_pass)
        return f"FAIL_TO_PASS {f2p}/{len(self.fail_to_pass)} pass, PASS_TO_PASS {p2p}/{len(self.pass_to_pass)} pass"


KEPT = ("xfailed",)
"""Outcomes other than a pass that keep a PASS_TO_PASS test, as SWE-bench grades them (`XFAIL` passes), granted only
as the outcome the test had in the sanity run, where no agent code ran: code under test that calls `pytest.xfail()`
must not hide a regression. FAIL_TO_PASS must pass: an xfail there is no fix. A skip keeps nothing (pytest's `-rA`
names no skipped test, so SWE-bench's parser reads it as absent)."""


def kept_at_base(sanity: CheckRun) -> dict[str, str]:
    """The PASS_TO_PASS tests that were xfailed in the sanity run -> that outcome (see `KEPT`)."""
    return {c.test_id: c.outcome for c in sanity.pass_to_pass if c.test_id and c.outcome in KEPT}


def check_passes(kind: str, test_id: str, outcome: str, base: Mapping[str, str] | None) -> bool:
    """Whether one test's outcome passes its check: a pass; or, for a PASS_TO_PASS test, a `KEPT` outcome that is
    the one it had at base (`base`: `kept_at_base` of the sanity run; None in the sanity run itself)."""
    if outcome == "passed":
        return True
    return kind == "pass_to_pass" and outcome in KEPT and (base is None or base.get(test_id) == outcome)


def run_checks(
    box: Sandbox,
    task: HarnessTask,
    timeout: float,
    *,
    plugin_autoload: bool = False,
    canaries: Planted | None = None,
    at_base: bool = False,
    kept: Mapping[str, str] = MappingProxyType({}),
    apart: bool = False,
) -> CheckRun:
    """Run every check of `task` in `box` (its /repo already patched as the caller wants); with `canaries`
    (`prepare_canaries`), also run them and judge whether the results were tampered with. `at_base`: the sanity run
    (a PASS_TO_PASS test xfailed there is kept); else such a test is kept only with the outcome `kept`
    gives it (`kept_at_base` of the sanity run, see `KEPT`). `apart`: the run of the twins apart (`harness.verify`),
    `canaries` being its own (`Planted.apart`); in commands mode only the FAIL_TO_PASS commands run there, over the
    twin files."""
    if task.mode == "tests":
        return _run_test_ids(box, task, timeout, plugin_autoload, canaries, None if at_base else kept)
    return _run_commands(box, task, timeout, "" if plugin_autoload else plugins_off(), canaries, apart)


def read_repo_file(box: Sandbox, path: str) -> bytes | None:
    """The file at repo-relative `path` as `box` has it (None: there is none, or it cannot be read)."""
    try:
        return box.read_file(f"{REPO_DIR}/{path}", max_bytes=4 << 20, follow_symlinks=False)
    except (OSError, ValueError, SandboxError):
        return None


def prepare_canaries(box: Sandbox, task: HarnessTask) -> Planted | None:
    """Canaries (`execution.canaries`) for `task`, where its runner plants them in the tree `box` has (base + the
    task's tests); None when its runner has none, or no test file or (commands mode) no command selecting one can
    host them."""

    def read(path: str) -> bytes:
        return read_repo_file(box, path) or b""

    if task.mode == "tests":
        runner = runner_of(task.test_command)
        if runner.plant is None:
            return None
        # the files the checks run (as `_run_test_ids` chooses them): never a fixture that some test runs itself
        files = task.run_files if runner.in_process else tuple(f for f in task.run_files if runner.runs(f))
        return runner.plant(files, task.fail_to_pass, read)
    return command_canaries(task.fail_to_pass, read)  # commands mode: a pack's `command_canaries`


def set_aside_unreachable(task: HarnessTask, sanity: CheckRun) -> tuple[HarnessTask, list[str]]:
    """The task without the checks that cannot be judged here, and a note per check set aside:

    - ids that are not test ids in the runner's grammar (`Runner.well_formed`: a dataset's `[100%]`, cut from a
      progress line): no run can report them, so they would fail whatever the code does;
    - checks that fail at base because they need a network host the sandbox cannot reach
      (`execution.failures.needs_network`), FAIL_TO_PASS and PASS_TO_PASS alike: they cannot pass here with any
      fix.

    Decided at the sanity run, where no agent code runs, so no diff can have a check set aside; they are removed
    from `sanity` too, and the FAIL_TO_PASS ones listed in `sanity.set_aside` (`sanity_problems` names a task left
    with none)."""
    well_formed = runner_of(task.test_command).well_formed if task.mode == "tests" else None
    notes: list[str] = []
    update: dict[str, tuple[str, ...]] = {}
    for kind in ("fail_to_pass", "pass_to_pass"):
        checks: list[CheckResult] = getattr(sanity, kind)
        gone = []
        for check in checks:
            name = check.test_id or check.command
            if well_formed is not None and not well_formed(name):
                gone.append(check)
                notes.append(f"{name!r}: malformed, not a test id ({kind.upper()} of the dataset)")
            elif not check.passed and needs_network(check.message):
                gone.append(check)
                notes.append(f"{name}: needs a network host the sandbox cannot reach ({_first_line(check.message)})")
        if not gone:
            continue
        names = {c.test_id or c.command for c in gone}
        setattr(sanity, kind, [c for c in checks if c not in gone])
        if kind == "fail_to_pass":
            sanity.set_aside = sorted(names)
        ids: tuple[str, ...] = getattr(task, kind)
        keep = [i for i, check in enumerate(ids) if check not in names]
        commands: tuple[str, ...] = getattr(task, f"{kind}_commands")
        update[kind] = tuple(ids[i] for i in keep)
        update[f"{kind}_commands"] = tuple(commands[i] for i in keep) if len(commands) == len(ids) else commands
    return (task.model_copy(update=update) if update else task), notes


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:200]


def sanity_problems(run: CheckRun) -> list[str]:
    """Why the task is broken at base + test_patch (empty when it is sound)."""
    if run.error is not None:
        return [f"the checks give no verdict at base: {run.error}"]
    if not run.fail_to_pass and run.set_aside:
        return [
            f"not judgeable here: every FAIL_TO_PASS test is set aside (needs a network host the sandbox cannot "
            f"reach, or is not a test id): {', '.join(run.set_aside[:5])}"
        ]
    problems = []
    already = [c.test_id or c.command for c in run.fail_to_pass if c.passed]
    broken = [
        f"{c.test_id or c.command} ({c.outcome or f'exit {c.exit_code}'})" for c in run.pass_to_pass if not c.passed
    ]
    if already:
        problems.append(f"FAIL_TO_PASS already passes before any change: {', '.join(already)}")
    if broken:
        problems.append(f"PASS_TO_PASS fails before any change: {', '.join(broken)}")
    return problems


def _run_test_ids(
    box: Sandbox,
    task: HarnessTask,
    timeout: float,
    plugin_autoload: bool,
    canaries: Planted | None,
    base: Mapping[str, str] | None,
) -> CheckRun:
    runner = runner_of(task.test_command)
    files = task.run_files
    if not runner.in_process:  # the task's test files that this runner runs (no fixtures, no data files)
        files = tuple(f for f in files if runner.runs(f)) or files
    if canaries is not None:
        put_files(box, {f"{REPO_DIR}/{path}": data for path, data in canaries.files().items()}, keep_modes=True)
        # anywhere among the task's files, drawn with the canaries' name: the verify run and its run apart give the
        # command the same files in the same order (a forger sparing a place spares the same tests in both)
        at = int(hashlib.sha256(canaries.path.encode()).hexdigest(), 16) % (len(files) + 1)
        files = (*files[:at], canaries.path, *files[at:])
        seal_checkout(box, tuple(dict.fromkeys((*task.run_files, *canaries.files()))))
    suite = run_suite(box, task.test_command, files, timeout, runner=runner, plugin_autoload=plugin_autoload)
    outcomes = suite.outcomes
    tampered = canaries_ok = twin_ok = None
    if canaries is not None and outcomes is not None:
        tampered = canaries.tampering(outcomes, suite.exit_code, exit_status_is_runners(task.test_command))
        canaries_ok = canaries.expected(outcomes)
        twin_ok = canaries.twin_ran(outcomes)
    messages = suite.messages
    if outcomes is not None and task.id_form == "swebench":  # as SWE-bench's parser would read the run's log
        outcomes = graded_outcomes(runner, outcomes)
        messages = {runner.grading_id(test_id): text for test_id, text in messages.items()}
    duration_ms = int(suite.seconds * 1000)

    def checks(kind: str, ids: tuple[str, ...]) -> list[CheckResult]:
        made = []
        for index, test_id in enumerate(ids):
            outcome = "no-report" if outcomes is None else outcomes.get(test_id, "missing")
            passed = check_passes(kind, test_id, outcome, base)
            made.append(
                CheckResult(
                    command=task.display_command(kind, index),  # type: ignore[arg-type]
                    exit_code=0 if passed else (suite.exit_code or 1),
                    passed=passed,
                    duration_ms=duration_ms,
                    test_id=test_id,
                    outcome=outcome,
                    message=messages.get(test_id, ""),
                )
            )
        return made

    run = CheckRun(
        checks("fail_to_pass", task.fail_to_pass),
        checks("pass_to_pass", task.pass_to_pass),
        suite.error,
        suite.seconds,
        tampered,
        canaries_ok,
        twin_ok=twin_ok,
        reported=suite.outcomes,
    )
    failed = next((check for check in (*run.fail_to_pass, *run.pass_to_pass) if not check.passed), None)
    if failed is not None:  # one suite run: its output once, on the first check it failed (the planted failing test's
        failed.output = suite.output[-CHECK_OUTPUT_TAIL:]  # block would read as this task's beside passed ones)
    return run


def _run_commands(
    box: Sandbox, task: HarnessTask, timeout: float, prefix: str, canaries: Planted | None, apart: bool = False
) -> CheckRun:
    """The seed's shell checks, each in a shell of its own; `reported` gives each test a FAIL_TO_PASS command selects
    that command's verdict, by which its twin run apart is judged. In the run apart (`apart`) the twins are written
    over their originals first and only the FAIL_TO_PASS commands run."""
    total = [0.0]

    def run(commands: tuple[str, ...]) -> list[CheckResult]:
        made = []
        for command in commands:
            # A shell of its own: one check's `cd`/`export` must not leak into the next, as in the seed's `bash -c`.
            script = test_command_script(f"{prefix}{command}")  # its own shell, as the seed's `bash -c`
            result = box.run(script, timeout=timeout, max_output=MAX_OUTPUT)
            total[0] += result.duration_s
            made.append(
                CheckResult(
                    command=command,
                    exit_code=result.exit_code,
                    passed=result.ok,
                    duration_ms=int(result.duration_s * 1000),
                    outcome="timeout" if result.timed_out else None,
                    output=result.output[-CHECK_OUTPUT_TAIL:],
                )
            )
        return made

    # Both runs hold the same tree when their FAIL_TO_PASS commands run: the run apart its twins over the originals
    # and no canary module (the verify run writes its canaries only after its own commands), both sealed alike. A
    # forger that exited 0 only while no canary module existed told the run apart from the verify run (red team,
    # `c3-cmd-canary-present`).
    twins = {} if not apart or canaries is None else {p: d for p, d in canaries.files().items() if p != canaries.path}
    put_files(box, {f"{REPO_DIR}/{path}": data for path, data in twins.items()}, keep_modes=True)
    seal_checkout(box, tuple(dict.fromkeys((*task.run_files, *twins))))
    if apart and canaries is not None:
        fail_to_pass = run(task.fail_to_pass)
        return CheckRun(fail_to_pass, [], duration_s=total[0], reported=_selected(fail_to_pass))
    fail_to_pass, pass_to_pass = run(task.fail_to_pass), run(task.pass_to_pass)
    tampered = canaries_ok = None
    planted = canary_checks(task.fail_to_pass, canaries) if canaries is not None else None
    if planted is not None:  # written only now: no task command ever collects it
        put_files(box, {f"{REPO_DIR}/{path}": data for path, data in planted.files.items()})
        passing, failing = run((planted.passing, planted.failing))
        canaries_ok = passing.passed and not failing.passed
        if failing.passed:
            tampered = f"a check planted to fail ({planted.failing_name}) exited 0"
    return CheckRun(
        fail_to_pass,
        pass_to_pass,
        duration_s=total[0],
        tampered=tampered,
        canaries_ok=canaries_ok,
        reported=_selected(fail_to_pass),
    )


def _selected(checks: list[CheckResult]) -> dict[str, Outcome]:
    """Each test id a command selects, with that command's verdict (an exit code is all commands mode has)."""
    return {
        test_id: "passed" if check.passed else "failed" for check in checks for test_id in command_ids(check.command)
    }
