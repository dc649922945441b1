"""Reasons that point at the cause (issue 22 item 6): the best recipe reached, not the last one tried; install
errors with their last lines; tests that need the network set aside alike as FAIL_TO_PASS and PASS_TO_PASS, and a
task whose FAIL_TO_PASS all need it called so (`tasks.revalidate_instances`, `tasks.differences`). Fast: the
proofs are given, no Docker."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import pytest
from docker.errors import ImageNotFound

from swe_forge_dagster.execution.patch import SplitPatch
from swe_forge_dagster.execution.recipe import EnvRecipe
from swe_forge_dagster.execution.suite import SuiteRun
from swe_forge_dagster.export.swebench import SWEBenchInstance
from swe_forge_dagster.harness.checks import CheckRun, sanity_problems, set_aside_unreachable
from swe_forge_dagster.harness.models import CheckResult, HarnessTask
from swe_forge_dagster.tasks import revalidate_instances as module
from swe_forge_dagster.tasks.prove import TaskBuildError, TaskValidation, clip
from swe_forge_dagster.tasks.revalidate import CHANGED, INVALID, NOT_JUDGEABLE, VALID
from swe_forge_dagster.tasks.validation import validate

NET = "requests.exceptions.ConnectionError: Failed to establish a new connection: [Errno -3] Temporary failure"
F2P = "test_requests.py::RequestsTestCase::test_auth"
P2P = "test_requests.py::RequestsTestCase::test_plain"
P2P_NET = "test_requests.py::RequestsTestCase::test_httpbin"
Given = Callable[..., None]


def instance(f2p: list[str], p2p: list[str]) -> SWEBenchInstance:
    return SWEBenchInstance(
        repo="psf/requests",
        instance_id="psf__requests-2317",
        base_commit="a" * 40,
        patch="diff --git a/requests/x.py b/requests/x.py\n",
        test_patch="",
        problem_statement="p",
        FAIL_TO_PASS=f2p,
        PASS_TO_PASS=p2p,
    )


def proof(before: dict, after: dict, messages: dict) -> TaskValidation:
    runs = [SuiteRun(dict(after), 1, "", 1.0, messages=messages) for _ in range(3)]
    verdict = validate(before, [run.outcomes for run in runs])
    start = SuiteRun(dict(before), 1, "", 1.0, messages=messages)
    return TaskValidation("psf/requests", "a" * 40, SplitPatch("", "", [], [], []), verdict, "env:1", True, start, runs)


class FakeExecutor:
    """An executor whose proofs are given per base image: a TaskValidation, or an exception to raise."""

    def __init__(self, outcomes: dict[str, object]) -> None:
        self.outcomes = outcomes
        self.cache = SimpleNamespace(ensure=lambda repo: None, fetch=lambda repo, shas: None)
        self.client = None

    def prove(self, repo: str, base: str, split: SplitPatch, recipe: EnvRecipe, **_: object) -> TaskValidation:
        outcome = self.outcomes[recipe.base_image]
        if isinstance(outcome, Exception):
            raise outcome
        assert isinstance(outcome, TaskValidation)
        return outcome


@pytest.fixture
def candidates(monkeypatch: pytest.MonkeyPatch) -> Given:
    def given(*images: str) -> None:
        recipes = [EnvRecipe(("pip install .",), "python -m pytest {tests}", image) for image in images]
        found = SimpleNamespace(recipes=recipes, problem=None)
        monkeypatch.setattr(module, "environment_candidates", lambda *a, **k: found)
        monkeypatch.setattr(module, "remember", lambda *a: None)

    return given


def test_the_reason_names_the_best_recipe_reached_not_the_last_one_tried(candidates: Given) -> None:
    """An install that worked and tests that ran but stayed broken outrank a later failed install and a missing
    image: the reason names that image and why it stopped."""
    candidates("swe-forge-base:bullseye", "swe-forge-base:bookworm", "swe-forge-base:trixie")
    stuck = proof({F2P: "failed"}, {F2P: "failed"}, {F2P: "ImportError: cannot import name 'url_quote'"})
    executor = FakeExecutor(
        {
            "swe-forge-base:bullseye": stuck,
            "swe-forge-base:bookworm": TaskBuildError("install step failed (1): pip install .\n" + "x" * 3000 + "\nE"),
            "swe-forge-base:trixie": ImageNotFound("no trixie"),
        }
    )
    result, problem, tried = module.prove_with_manifests(instance([F2P], []), executor)  # type: ignore[arg-type]
    assert result is None and len(tried) == 3
    assert problem is not None and problem.startswith("installed on swe-forge-base:bullseye, then no FAIL_TO_PASS")
    assert "best of 3 recipes tried" in problem


def test_an_install_error_keeps_its_last_lines() -> None:
    error = "install step failed (1): pip install -e .\n" + "noise\n" * 500 + "AttributeError: no build_editable"
    kept = clip(error)
    assert len(kept) <= 1_510 and kept.startswith("install step failed (1): pip install -e .")
    assert kept.endswith("AttributeError: no build_editable")


def test_failing_installs_name_the_first_installs_error_with_its_exception(candidates: Given) -> None:
    candidates("swe-forge-base:bullseye", "swe-forge-base:trixie")
    error = TaskBuildError("install step failed (1): pip install .\n" + "log\n" * 800 + "ModuleNotFoundError: x")
    executor = FakeExecutor({"swe-forge-base:bullseye": error, "swe-forge-base:trixie": ImageNotFound("none")})
    _, problem, _ = module.prove_with_manifests(instance([F2P], []), executor)  # type: ignore[arg-type]
    assert problem is not None and problem.startswith("on swe-forge-base:bullseye: install step failed")
    assert "ModuleNotFoundError: x" in problem


def test_a_task_whose_fail_to_pass_all_need_the_network_is_not_judgeable(candidates: Given) -> None:
    """requests-2317: it installs on the first image and its FAIL_TO_PASS test needs httpbin.org: that image is
    kept (no next candidate), and the task says so instead of `invalid` / `changed`."""
    candidates("swe-forge-base:bullseye", "swe-forge-base:bookworm")
    ran = proof({F2P: "failed", P2P: "passed"}, {F2P: "failed", P2P: "passed"}, {F2P: NET})
    executor = FakeExecutor({"swe-forge-base:bullseye": ran, "swe-forge-base:bookworm": ImageNotFound("x")})
    report = module.revalidate_instance(instance([F2P], [P2P]), executor, "src")  # type: ignore[arg-type]
    assert report.status == NOT_JUDGEABLE, report.reason
    assert report.recipes_tried == ["swe-forge-base:bullseye: pip install ."]
    assert "network host" in report.set_aside[F2P] and "every FAIL_TO_PASS" in (report.reason or "")


def test_pass_to_pass_that_need_the_network_are_set_aside_not_counted(candidates: Given) -> None:
    candidates("swe-forge-base:bullseye")
    ran = proof(
        {F2P: "failed", P2P: "passed", P2P_NET: "failed"},
        {F2P: "passed", P2P: "passed", P2P_NET: "failed"},
        {P2P_NET: NET},
    )
    report = module.revalidate_instance(
        instance([F2P], [P2P, P2P_NET]), FakeExecutor({"swe-forge-base:bullseye": ran}), "s"
    )  # type: ignore[arg-type]
    assert report.status == VALID and report.pass_to_pass_missing == []
    assert set(report.set_aside) == {P2P_NET} and "not judged here" in (report.reason or "")


def test_more_tests_here_than_given_is_named_and_a_missing_one_is_not(candidates: Given) -> None:
    """Only extras (a test the dataset omits passes here before and after, or fails then passes): every given
    verdict holds, and the reason says so; a given test missing here is a plain difference."""
    candidates("swe-forge-base:bullseye")
    extra_f2p = "test_requests.py::RequestsTestCase::test_auth_too"
    before = {F2P: "failed", P2P: "passed", P2P_NET: "passed", extra_f2p: "failed"}
    after = {F2P: "passed", P2P: "passed", P2P_NET: "passed", extra_f2p: "passed"}
    report = module.revalidate_instance(
        instance([F2P], [P2P]), FakeExecutor({"swe-forge-base:bullseye": proof(before, after, {})}), "s"
    )  # type: ignore[arg-type]
    assert report.status == CHANGED and module.SUPERSET in (report.reason or "")
    assert report.fail_to_pass_extra == [extra_f2p] and report.pass_to_pass_extra == [P2P_NET]
    missing = module.revalidate_instance(
        instance([F2P], [P2P, "test_requests.py::RequestsTestCase::test_gone"]),
        FakeExecutor({"swe-forge-base:bullseye": proof(before, after, {})}),
        "s",
    )  # type: ignore[arg-type]
    assert missing.status == CHANGED and module.SUPERSET not in (missing.reason or "")


def test_a_test_that_fails_for_another_reason_still_counts(candidates: Given) -> None:
    candidates("swe-forge-base:bullseye")
    ran = proof({F2P: "failed", P2P: "passed"}, {F2P: "passed", P2P: "failed"}, {P2P: "AssertionError"})
    report = module.revalidate_instance(instance([F2P], [P2P]), FakeExecutor({"swe-forge-base:bullseye": ran}), "s")  # type: ignore[arg-type]
    assert report.status == INVALID and not report.set_aside


def _check(test_id: str, passed: bool, message: str = "") -> CheckResult:
    outcome = "passed" if passed else "failed"
    return CheckResult(
        command=test_id, exit_code=1, passed=passed, duration_ms=1, test_id=test_id, outcome=outcome, message=message
    )


def test_the_harness_calls_a_task_whose_fail_to_pass_all_need_the_network_not_judgeable() -> None:
    task = HarnessTask(
        task_id="psf__requests-2317",
        repo="psf/requests",
        base_commit="a" * 40,
        prompt="p",
        mode="tests",
        fail_to_pass=(F2P,),
        pass_to_pass=(P2P,),
        image="img",
        test_command="python -m pytest {tests}",
    )
    sanity = CheckRun([_check(F2P, False, NET)], [_check(P2P, True)])
    kept, notes = set_aside_unreachable(task, sanity)
    assert kept.fail_to_pass == () and notes and "network host" in notes[0]
    (problem,) = sanity_problems(sanity)
    assert problem.startswith("not judgeable here: every FAIL_TO_PASS test is set aside") and F2P in problem


def test_changed_lists_count_only_the_judgeable_ids(candidates: Given) -> None:
    candidates("swe-forge-base:bullseye")
    ran = proof({F2P: "failed"}, {F2P: "passed"}, {})
    report = module.revalidate_instance(instance([F2P], [P2P]), FakeExecutor({"swe-forge-base:bullseye": ran}), "s")  # type: ignore[arg-type]
    assert report.status == CHANGED and report.pass_to_pass_missing == [P2P]


def flaky_proof(before: dict, afters: list[dict]) -> TaskValidation:
    runs = [SuiteRun(dict(after), 1, "", 1.0) for after in afters]
    verdict = validate(before, [run.outcomes for run in runs])
    start = SuiteRun(dict(before), 1, "", 1.0)
    return TaskValidation("psf/requests", "a" * 40, SplitPatch("", "", [], [], []), verdict, "env:1", True, start, runs)


FLAKY = "test_requests.py::RequestsTestCase::test_clock"


@pytest.mark.parametrize(
    ("given_p2p", "fixed", "status", "reason"),
    [
        ([P2P], True, VALID, f"flaky here, in no given list: {FLAKY}"),  # the row's verdicts do not rest on it
        ([P2P, FLAKY], True, INVALID, f"flaky: {FLAKY}"),  # the row names it: its verdict cannot be reproduced
        ([P2P], False, INVALID, "no FAIL_TO_PASS: the tests pass without the fix"),  # spared, the next reason shows
    ],
)
def test_a_flaky_test_rejects_a_given_row_only_when_the_row_names_it(
    candidates: Given, given_p2p: list[str], fixed: bool, status: str, reason: str
) -> None:
    """google/uuid's `TestVersion6` compares two clock readings and flips under load: it rejected a row whose lists
    do not name it. Mined tasks stay strict (`test_flaky_between_after_runs`); a given row is judged on its lists."""
    candidates("swe-forge-base:bullseye")
    before = {F2P: "failed" if fixed else "passed", P2P: "passed", FLAKY: "passed"}
    afters = [{F2P: "passed", P2P: "passed", FLAKY: outcome} for outcome in ("passed", "failed", "passed")]
    executor = FakeExecutor({"swe-forge-base:bullseye": flaky_proof(before, afters)})
    report = module.revalidate_instance(instance([F2P], given_p2p), executor, "s")  # type: ignore[arg-type]
    assert (report.status, report.reason) == (status, reason)
    assert FLAKY not in report.pass_to_pass
