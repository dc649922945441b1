"""Why a re-derived FAIL_TO_PASS / PASS_TO_PASS list differs from a dataset's, one test id at a time.

`swe-forge validate -i` compares the lists it derives by execution with the instance's; a bare
"changed" would leave the user to rerun everything by hand. Each differing id gets its outcomes in
every run (before the fix, and each run after it) and, where the report says why it failed, that
reason — with a failure caused by a network host the sandbox cannot reach named as such (neither a
broken task nor a wrong fix, `execution.failures`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from swe_forge_dagster.execution.failures import needs_network
from swe_forge_dagster.execution.runners import Runner, graded_outcomes
from swe_forge_dagster.execution.suite import SuiteRun
from swe_forge_dagster.tasks.prove import TaskValidation

_FAILING = ("failed", "error")


def explain_differences(
    result: TaskValidation, runner: Runner, ids: Iterable[str], given_f2p: set[str], derived_f2p: set[str]
) -> dict[str, str]:
    """id -> cause, for each of `ids` (in the input's id form, SWE-bench's for its instances)."""
    runs = [result.before, *result.after]
    outcomes = [graded_outcomes(runner, run.outcomes or {}) for run in runs]
    messages = _messages(runner, runs)
    causes: dict[str, str] = {}
    for test_id in dict.fromkeys(ids):
        before, *after = (o.get(test_id, "missing") for o in outcomes)
        seen = f"before the fix {before}, after it {'/'.join(after)}"
        message = messages.get(test_id, "")
        if needs_network(message):
            causes[test_id] = f"{seen}: needs a network host the sandbox cannot reach ({_gist(message)})"
        elif before in (*_FAILING, "missing") and all(o == "passed" for o in after) and test_id in derived_f2p:
            where = "is not in the given FAIL_TO_PASS" if test_id not in given_f2p else "is FAIL_TO_PASS here too"
            causes[test_id] = f"{seen}: fails without the fix and passes with it in every run, and {where}"
        elif before == "passed" and all(o == "passed" for o in after):
            causes[test_id] = f"{seen}: passes in every run, and the given lists do not have it"
        elif before == "missing" and all(o == "missing" for o in after):
            causes[test_id] = "never ran here: not in the test files the test patch touches, or not collected"
        else:
            causes[test_id] = f"{seen}" + (f" ({_gist(message)})" if message else "")
    return causes


def unreachable(result: TaskValidation, runner: Runner) -> dict[str, str]:
    """id (SWE-bench's form) -> why, for each test that failed for lack of a network host in some run and never
    passed with the fix: whatever the fix, it cannot pass here, so it is not judgeable here."""
    runs = [result.before, *result.after]
    after = [graded_outcomes(runner, run.outcomes or {}) for run in result.after]
    return {
        test_id: f"needs a network host the sandbox cannot reach ({_gist(message)})"
        for test_id, message in _messages(runner, runs).items()
        if needs_network(message) and not any(outcomes.get(test_id) == "passed" for outcomes in after)
    }


def set_aside(result: TaskValidation, runner: Runner, given: Collection[str]) -> dict[str, str]:
    """The given ids (a dataset's FAIL_TO_PASS and PASS_TO_PASS) that cannot be judged here -> why: text that is
    not a test id in the runner's grammar (`Runner.well_formed`: `[100%]` cut from a console line), and tests
    that need the network (`unreachable`). They are compared with nothing and counted as no failure."""
    network = unreachable(result, runner)
    aside: dict[str, str] = {}
    for test_id in given:
        if not runner.well_formed(test_id):
            aside[test_id] = f"malformed: not a {runner.name} test id, no run can report it"
        elif test_id in network:
            aside[test_id] = network[test_id]
    return aside


def _messages(runner: Runner, runs: list[SuiteRun]) -> dict[str, str]:
    found: dict[str, str] = {}
    for run in runs:
        for test_id, text in run.messages.items():
            found.setdefault(runner.grading_id(test_id), text)
    return found


def _gist(message: str) -> str:
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    return (lines[0] if lines else "")[:240]
