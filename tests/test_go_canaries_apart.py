"""`go test`'s canaries with the twins run apart (`languages.go.canaries.GoCanaries`): what each run writes and how
the two reports are judged together. The twins themselves are `tests/test_go_twins.py`'s."""

from __future__ import annotations

import random
import re

from swe_forge_dagster.execution.canaries import AppendedCanaries
from swe_forge_dagster.languages.go.canaries import GoCanaries, plant_go
from swe_forge_dagster.languages.registry import runner_of

CALC = """package calc

import "testing"

func TestAdd(t *testing.T) {
	if got := Add(2, 3); got != 5 {
		t.Errorf("got %d", got)
	}
}

func TestParse(t *testing.T) {
	if _, err := Parse("1"); err != nil {
		t.Fatal(err)
	}
}

func TestHelper(t *testing.T) {
	helper(t)
}
"""
OTHER = """package calc

import "testing"

func TestRound(t *testing.T) {
	if Round(2.5) != 3 {
		t.Error("round")
	}
}
"""
FILES = {"calc/calc_test.go": CALC.encode(), "calc/round_test.go": OTHER.encode(), "calc/calc.go": b"package calc\n"}


def plant(fail_to_pass: list[str], seed: int) -> GoCanaries | AppendedCanaries | None:
    return plant_go(list(FILES), fail_to_pass, FILES.__getitem__, random.Random(seed))


def test_the_go_runner_runs_its_twins_apart() -> None:
    assert runner_of("go test -json ./...").twins_apart


def test_the_verify_run_has_no_twin_and_the_run_apart_has_every_twin_in_place() -> None:
    for seed in range(20):
        canaries = plant(["TestAdd", "TestRound", "TestHelper"], seed)
        assert isinstance(canaries, GoCanaries)
        assert [twin.name for twin in canaries.twins] == ["TestAdd", "TestRound"]  # TestHelper has no check
        verify = canaries.files()
        (host,) = verify
        original = FILES[host].decode()
        assert verify[host].decode().startswith(original)  # the file, then the planted tests after it
        planted = verify[host].decode()[len(original) :]
        assert set(re.findall(r"^func (\w+)", planted, re.M)) == {canaries.passing, canaries.failing}
        # the failing test copies a test without a twin (TestHelper, TestParse) or none: never the twin's original
        assert "Add(2, 3)" not in planted and "Round(2.5)" not in planted
        apart = canaries.apart()
        assert apart is not None and apart.apart() is not None and canaries.twin_ran({}) is None
        files = apart.files()
        assert set(files) == {"calc/calc_test.go", "calc/round_test.go"}
        assert files[host].decode().endswith(planted)  # the same planted tests, after the twins' file
        twin_of_add = files["calc/calc_test.go"].decode()
        assert "got != 5" not in twin_of_add and re.search(r"got != [0-4] \{", twin_of_add)
        assert re.search(r"Round\(2\.5\) != [0-2] \{", files["calc/round_test.go"].decode())
        assert canaries.without_twin().apart() is None


def test_with_no_check_to_change_the_twin_is_appended_beside_its_original_as_before() -> None:
    canaries = plant(["TestHelper"], 1)
    assert isinstance(canaries, AppendedCanaries) and canaries.original == "TestHelper" and canaries.twin
    assert canaries.apart() is None and canaries.twin in canaries.content.decode()


def test_a_run_apart_where_a_twin_passed_or_is_missing_was_forged() -> None:
    canaries = plant(["TestAdd", "TestParse"], 2)
    assert isinstance(canaries, GoCanaries)
    planted = {canaries.passing: "passed", canaries.failing: "failed"}
    verify = {"TestAdd": "passed", "TestParse": "passed", **planted}
    honest_apart = {"TestAdd": "failed", "TestParse": "failed", **planted}
    assert canaries.expected(verify) and canaries.tampering(verify, 1, True) is None
    assert canaries.apart_tampering(verify, honest_apart) is None
    forged = {**honest_apart, "TestParse": "passed"}
    reason = canaries.apart_tampering(verify, forged) or ""
    assert reason.startswith("TestParse passed, and its twin run apart passed too") and "err == nil" in reason
    assert "skipped too" in (canaries.apart_tampering(verify, {**honest_apart, "TestAdd": "skipped"}) or "")
    missing = {k: v for k, v in honest_apart.items() if k != "TestAdd"}
    assert "missing from the report of the run apart" in (canaries.apart_tampering(verify, missing) or "")
    unfixed = {**verify, "TestAdd": "failed", "TestParse": "failed"}
    assert canaries.apart_tampering(unfixed, forged) is None  # nothing passed: no claim
    assert canaries.apart_tampering(verify, None) is None  # no report apart: no verdict, which the harness gives
    # the planted tests judge each run by its own report, the run apart too
    assert "planted to fail" in (canaries.tampering({**verify, canaries.failing: "passed"}, 0, False) or "")
    assert "missing" in (canaries.apart().tampering({"TestAdd": "failed"}, 1, True) or "")  # type: ignore[union-attr]
