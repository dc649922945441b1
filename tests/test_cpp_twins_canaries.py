"""GoogleTest's canaries with the twins run apart (`languages.cpp.canaries.GtestCanaries`): what each run writes and
how the two reports are judged together. The twins themselves are `tests/test_cpp_twins.py`'s."""

from __future__ import annotations

import random
import re

from swe_forge_dagster.execution.canaries import AppendedCanaries
from swe_forge_dagster.languages.cpp.canaries import GtestCanaries, plant_gtest
from swe_forge_dagster.languages.registry import runner_of

CALC = """#include "gtest/gtest.h"
#include "calc.h"

TEST(calc_test, add) {
  EXPECT_EQ(add(2, 3), 5);
}

TEST(calc_test, parse) {
  ASSERT_TRUE(parse("1").ok());
}

TEST(calc_test, helper) {
  expect_sane(make());
}
"""
OTHER = """#include "gtest/gtest.h"

TEST(RoundTest, HalfUp) {
  EXPECT_STREQ(round_text(2.5), "3");
}
"""
FILES = {"test/calc-test.cc": CALC.encode(), "test/round-test.cc": OTHER.encode(), "src/calc.cc": b"int x;\n"}
F2P = ["calc_test.add", "RoundTest.HalfUp", "calc_test.helper"]


def plant(fail_to_pass: list[str], seed: int) -> GtestCanaries | AppendedCanaries | None:
    return plant_gtest(
        ["test/calc-test.cc", "test/round-test.cc"], fail_to_pass, FILES.__getitem__, random.Random(seed)
    )


def test_the_googletest_runner_runs_its_twins_apart() -> None:
    assert runner_of('cmake --build build && ./build/calc-test --gtest_output="xml:r.xml"').twins_apart


def test_the_verify_run_has_no_twin_and_the_run_apart_has_every_twin_in_place() -> None:
    for seed in range(20):
        canaries = plant(F2P, seed)
        assert isinstance(canaries, GtestCanaries)
        assert sorted(twin.name for twin in canaries.twins) == ["RoundTest.HalfUp", "calc_test.add"]  # helper: none
        verify = canaries.files()
        (host,) = verify
        original = FILES[host].decode()
        assert verify[host].decode().startswith(original)  # the file, then the planted tests after it
        planted = verify[host].decode()[len(original) :]
        suite = "calc_test" if host == "test/calc-test.cc" else "RoundTest"
        names = re.findall(rf"^TEST\({suite}, (\w+)\) {{$", planted, re.M)
        assert [f"{suite}.{name}" for name in names] in (
            [canaries.passing, canaries.failing],
            [canaries.failing, canaries.passing],
        )
        assert "add(2, 3)" not in planted and "round_text" not in planted  # no copy of a test beside it
        apart = canaries.apart()
        assert apart is not None and apart.apart() is not None and canaries.twin_ran({}) is None
        files = apart.files()
        assert set(files) == {"test/calc-test.cc", "test/round-test.cc"}
        assert files[host].decode().endswith(planted)  # the same planted tests, after the twins' file
        twin_of_add = files["test/calc-test.cc"].decode()
        assert "add(2, 3), 5)" not in twin_of_add and re.search(r"EXPECT_EQ\(add\(2, 3\), [1-4]\);", twin_of_add)
        assert re.search(r'EXPECT_STREQ\(round_text\(2\.5\), "[0-24-9]"\);', files["test/round-test.cc"].decode())
        assert canaries.without_twin().apart() is None


def test_with_no_check_to_change_the_twin_is_appended_beside_its_original_as_before() -> None:
    canaries = plant(["calc_test.helper"], 1)
    assert isinstance(canaries, AppendedCanaries) and canaries.original == "calc_test.helper" and canaries.twin
    assert canaries.apart() is None and canaries.twin.split(".")[1] in canaries.content.decode()


def test_a_run_apart_where_a_twin_passed_or_is_missing_was_forged() -> None:
    canaries = plant(["calc_test.add", "calc_test.parse"], 2)
    assert isinstance(canaries, GtestCanaries)
    planted = {canaries.passing: "passed", canaries.failing: "failed"}
    verify = {"calc_test.add": "passed", "calc_test.parse": "passed", **planted}
    honest_apart = {"calc_test.add": "failed", "calc_test.parse": "failed", **planted}
    assert canaries.expected(verify) and canaries.tampering(verify, 1, True) is None
    assert canaries.apart_tampering(verify, honest_apart) is None
    forged = {**honest_apart, "calc_test.parse": "passed"}
    reason = canaries.apart_tampering(verify, forged) or ""
    assert reason.startswith("calc_test.parse passed, and its twin run apart passed too") and "ASSERT_FALSE" in reason
    skipped = {**honest_apart, "calc_test.add": "skipped"}
    assert "skipped too" in (canaries.apart_tampering(verify, skipped) or "")
    missing = {k: v for k, v in honest_apart.items() if k != "calc_test.add"}
    assert "missing from the report of the run apart" in (canaries.apart_tampering(verify, missing) or "")
    unfixed = {**verify, "calc_test.add": "failed", "calc_test.parse": "failed"}
    assert canaries.apart_tampering(unfixed, forged) is None  # nothing passed: no claim
    assert canaries.apart_tampering(verify, None) is None  # no report apart: no verdict, which the harness gives
    # the planted tests judge each run by its own report, the run apart too
    assert "planted to fail" in (canaries.tampering({**verify, canaries.failing: "passed"}, 0, False) or "")
    apart = canaries.apart()
    assert apart is not None and "missing" in (apart.tampering({"calc_test.add": "failed"}, 1, True) or "")
