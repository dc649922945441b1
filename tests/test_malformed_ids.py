"""Dataset ids that are not tests (issue 22 item 6): pytest-dev__pytest-5227's PASS_TO_PASS lists `[`, `[100%]` and
`[100%]------------------------------`, text cut from pytest's progress line. They are decided by the runner's id
grammar (`Runner.well_formed`: a pytest node id names a file path or a `::` node), named as malformed and set aside
by validation and the harness alike, never counted as failures."""

from __future__ import annotations

import pytest

from swe_forge_dagster.execution.patch import SplitPatch
from swe_forge_dagster.execution.suite import SuiteRun
from swe_forge_dagster.export.swebench import read_instances
from swe_forge_dagster.harness.checks import CheckRun, sanity_problems, set_aside_unreachable
from swe_forge_dagster.harness.models import CheckResult, HarnessTask
from swe_forge_dagster.languages.registry import runner_for
from swe_forge_dagster.tasks.differences import set_aside
from swe_forge_dagster.tasks.prove import TaskValidation
from swe_forge_dagster.tasks.validation import validate
from tests.support.common import SHARED_FIXTURES

LITE_TEST = SHARED_FIXTURES / "swebench" / "lite-test-and-multilingual" / "swebench_lite_origin.jsonl"
CUT = ("[", "[100%]", "[100%]------------------------------")


def test_pytest_node_ids_name_a_file_or_a_node() -> None:
    well_formed = runner_for("pytest").well_formed
    for good in (
        "testing/test_x.py::test_a",
        "test_requests.py::RequestsTestCase::test_b",
        "tests/test_y.py::test_c[a b::c]",
        "testing/test_z.py",
        "testing/",
    ):
        assert well_formed(good), good
    for bad in (*CUT, "", "::test_a", "testing/test_x.py::", "test_a", "PASSED x"):
        assert not well_formed(bad), bad
    assert runner_for("mocha").well_formed("issues 4999 should not fail") and not runner_for("mocha").well_formed(" ")


def test_every_id_of_the_bundled_repositories_instances_is_well_formed_but_pytest_5227s_cut_ones() -> None:
    if not LITE_TEST.is_file():
        pytest.skip(f"SWE-bench Lite test fixture absent: {LITE_TEST}")
    repos = {"psf/requests", "pallets/flask", "pytest-dev/pytest", "pylint-dev/pylint"}
    well_formed = runner_for("pytest").well_formed
    malformed = {
        (inst.instance_id, test_id)
        for inst in read_instances(LITE_TEST)
        if inst.repo in repos
        for test_id in (*inst.FAIL_TO_PASS, *inst.PASS_TO_PASS)
        if not well_formed(test_id)
    }
    assert malformed == {("pytest-dev__pytest-5227", cut) for cut in CUT}


def _check(test_id: str, passed: bool) -> CheckResult:
    outcome = "passed" if passed else "missing"
    return CheckResult(command=test_id, exit_code=1, passed=passed, duration_ms=1, test_id=test_id, outcome=outcome)


def test_the_harness_sets_malformed_ids_aside_instead_of_failing_the_sanity_check() -> None:
    f2p, p2p = "testing/logging/test_reporting.py::test_log_cli_level", "testing/test_x.py::test_ok"
    task = HarnessTask(
        task_id="pytest-dev__pytest-5227",
        repo="pytest-dev/pytest",
        base_commit="a" * 40,
        prompt="p",
        mode="tests",
        fail_to_pass=(f2p,),
        pass_to_pass=(p2p, *CUT),
        image="img",
        test_command="python -m pytest -rA {tests}",
        id_form="swebench",
    )
    sanity = CheckRun([_check(f2p, False)], [_check(p2p, True), *(_check(cut, False) for cut in CUT)])
    kept, notes = set_aside_unreachable(task, sanity)
    assert kept.pass_to_pass == (p2p,) and kept.fail_to_pass == (f2p,)
    assert notes == [f"{cut!r}: malformed, not a test id (PASS_TO_PASS of the dataset)" for cut in CUT]
    assert sanity_problems(sanity) == []


def test_validation_sets_malformed_ids_aside_by_name() -> None:
    f2p, p2p = "testing/test_x.py::test_new", "testing/test_x.py::test_ok"
    outcomes = {f2p: "passed", p2p: "passed"}
    runs = [SuiteRun(dict(outcomes), 0, "", 1.0) for _ in range(3)]
    before = SuiteRun({f2p: "failed", p2p: "passed"}, 1, "", 1.0)
    verdict = validate(before.outcomes, [run.outcomes for run in runs])
    result = TaskValidation(
        "pytest-dev/pytest", "a" * 40, SplitPatch("", "", [], [], []), verdict, "i", True, before, runs
    )
    aside = set_aside(result, runner_for("pytest"), [f2p, p2p, *CUT])
    assert set(aside) == set(CUT) and all(
        cause.startswith("malformed: not a pytest test id") for cause in aside.values()
    )
