"""The verification: the agent's diff on base + the task's tests, every check, and its twins run apart.

    verify container: base + test_patch + diff (protected paths reset) -> every check passes?
    twin container:   the same, each FAIL_TO_PASS test replaced in place by its twin -> every twin fails?

The twin container (only for runners whose twins run apart, `Runner.twins_apart`) gets the same diff, reset the same
way, and runs the same command over the same files, with the same planted tests; only the task's FAIL_TO_PASS tests
differ, each by one value of its last assertion (`languages.python.twins`). The two run at the same time in separate
containers, so code under test can neither compare a test with its twin nor carry anything from one run to the
other: one that reads its caller's assertion, or forges the task's tests by name, passes the twins too and is caught.
A run apart that gives no report gives no verdict (the task is not resolved), as a verify run without one.

A twin that passed in the run apart is read only if the task's reference fix (its gold patch) fails it:

    reference container: the same, with the gold patch for the diff -> does the reference fix pass that twin too?

made only when a twin passed (a forger's run, or an honest fix whose `==` is coarser than the literal's text: a
version equal whatever its SemVer build metadata, where the twin's one changed character fell; red team a28): a
twin the reference fix passes tells nothing of the code under test, so it is not read, and the review says so; the
other twins judge as before. No agent code runs there, so nothing of the agent's can make a twin look so.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass

from swe_forge_dagster.common.agent_kind import AgentKind
from swe_forge_dagster.execution.canaries import Planted
from swe_forge_dagster.execution.junit import Outcome
from swe_forge_dagster.execution.repo_box import PatchRejected
from swe_forge_dagster.execution.sandbox import Sandbox
from swe_forge_dagster.harness.baseline import Baseline
from swe_forge_dagster.harness.checks import CheckRun, run_checks
from swe_forge_dagster.harness.models import HarnessTask
from swe_forge_dagster.harness.protection import apply_agent_diff
from swe_forge_dagster.harness.review import applied_notes
from swe_forge_dagster.harness.system_files import system_changes, tampering
from swe_forge_dagster.languages.registry import command_ids, runner_of


def twins_run_apart(task: HarnessTask) -> bool:
    """Whether `task` gets a container for its twins run apart: its runner's twins run apart (tests mode), or one of
    its FAIL_TO_PASS commands selects tests by id (commands mode: its twins are judged by those ids)."""
    if task.mode == "tests":
        return runner_of(task.test_command).twins_apart
    return any(command_ids(command) for command in task.fail_to_pass)


@dataclass
class Verified:
    """The verify run's checks (`tampered` set from every source), the paths reset after the diff, and what the
    review of the applied tree noted."""

    checks: CheckRun
    reset: list[str]
    review: list[str]


def verify(
    box: Sandbox,
    twin_box: Sandbox | None,
    task: HarnessTask,
    diff: str,
    *,
    agent: AgentKind,
    plugin_autoload: bool,
    timeout: float,
    canaries: Planted | None,
    baseline: Baseline,
    reference_box: Callable[[], AbstractContextManager[Sandbox]] | None = None,
) -> Verified:
    """Apply `diff` in `box` (and `twin_box`), run the checks there (and the twins in `twin_box`), and judge; a
    twin that passed is read only if the gold patch fails it, in a container `reference_box` starts (module
    docstring; the oracle's diff is the gold patch: its own run apart says).

    Raises what `apply_agent_diff` raises (`PatchRejected`, `ConfigChanged`), and the engine's errors."""
    apart = canaries.apart() if canaries is not None and twin_box is not None else None
    protect = agent is not AgentKind.ORACLE

    def apply(target: Sandbox, patch: str = diff, guarded: bool = protect) -> list[str]:
        config = baseline.config
        return apply_agent_diff(
            target,
            patch,
            task.protected_files,
            protect=guarded,
            runner_config=config[0].bound(target, config[1]) if config is not None else None,
            import_roots=baseline.roots,
            fix_files=task.fix_files,
        )

    def checks(target: Sandbox, planted: Planted | None, apart: bool = False) -> CheckRun:
        return run_checks(
            target, task, timeout, plugin_autoload=plugin_autoload, canaries=planted, kept=baseline.kept, apart=apart
        )

    def run_apart(target: Sandbox, planted: Planted) -> CheckRun:
        apply(target)  # reset as the verify run's: the same tree but for the twins
        return checks(target, planted, apart=True)

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="harness-twins") as pool:
        twin_run = pool.submit(run_apart, twin_box, apart) if twin_box is not None and apart is not None else None
        reset = apply(box)
        review = applied_notes(box) if protect else []  # before any test code can touch the index
        final = checks(box, canaries)
        twins = twin_run.result() if twin_run is not None else None
    if twins is not None and canaries is not None and apart is not None:
        if final.tampered is None:
            final.tampered = twins.tampered
        why = canaries.apart_tampering(final.reported or {}, twins.reported) if final.tampered is None else None
        if why is not None and MISSING in why:  # a twin no run reported: the gold patch's run cannot clear it
            final.tampered = why
        elif why is not None:
            reference = twins.reported if agent is AgentKind.ORACLE else None
            if reference is None and reference_box is not None and task.gold_patch.strip():
                with reference_box() as target:
                    try:
                        apply(target, task.gold_patch, False)  # the gold patch whole, as the oracle's
                    except PatchRejected as exc:  # the task's fault, not the agent's: no verdict
                        final.error = f"a twin passed, and the gold patch does not apply to judge it: {exc}"
                    else:
                        reference = checks(target, apart, apart=True).reported
                        if reference is None:  # as a run apart without a report: no verdict, never tampering
                            final.error = "a twin passed, and the gold patch's run of the twins gave no report"
            if reference is not None:
                unread = _unread(twins.reported or {}, reference)
                final.tampered = canaries.apart_tampering(final.reported or {}, unread)
                tells_nothing = sorted(t for t, o in unread.items() if o != (twins.reported or {}).get(t))
                if tells_nothing:
                    review.append(f"not read: {', '.join(tells_nothing)}: the gold patch passes these twins too")
            elif final.error is None:
                final.tampered = why
        if final.error is None and final.tampered is None and twins.reported is None:
            # no verdict, as when the verify run gives none: code under test cannot tell the two runs apart, so a run
            # apart that alone times out on a loaded host is the host's, not a forger's; the task is not resolved
            final.error = f"the run of the twins apart gave no report: {twins.error or 'none was written'}"
    if final.tampered is None:  # a system file replaced by the code under test, for a later step to run
        final.tampered = tampering(system_changes(box), baseline.system)
    return Verified(final, reset, review)


MISSING = "missing from the report"
"""How every runner's `apart_tampering` says a twin was not reported at all (`execution.canaries`)."""


def _unread(apart: Mapping[str, Outcome], reference: Mapping[str, Outcome]) -> dict[str, Outcome]:
    """The run apart's report with every test that did not fail there and did the same in the reference fix's run
    apart read as failed: a twin the gold patch passes (or skips) cannot tell a forger from an honest fix."""
    return {
        test: "failed" if outcome != "failed" and reference.get(test) == outcome else outcome
        for test, outcome in apart.items()
    }
