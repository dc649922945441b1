"""Canaries for `go test -json` and GoogleTest (`languages.go.canaries`, `languages.cpp.canaries`): what is planted,
how a report is judged with them, and the anchored `-run` selector of the seed-format commands. The real runs (the
real google/uuid and fmt tasks, their oracles and the red team of `tests/support/compiled_hacks.py`) are in
`tests/test_real_go_harness.py` and `tests/test_real_multilingual.py`.

The Go tests here check only through helpers of their own, so no check of theirs can be changed into a twin run
apart (`languages.go.twins`, tested in `tests/test_go_twins.py`): they keep the twin appended beside the original,
the fallback these tests pin. So do the GoogleTest tests here (`languages.cpp.twins`, tested in
`tests/test_cpp_twins.py` and `tests/test_cpp_twins_canaries.py`)."""

from __future__ import annotations

import random
import re

from swe_forge_dagster.execution.canaries import AppendedCanaries
from swe_forge_dagster.languages.cpp.canaries import plant_gtest
from swe_forge_dagster.languages.go.canaries import go_single_id, plant_go
from swe_forge_dagster.languages.registry import runner_of

SOURCE = """package calc

import "testing"

func TestRoundHalfUp(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{{-1.5, -2}, {2.5, 3}} {
		expectClose(t, RoundHalfUp(c.in), c.want)
	}
}

func TestParseEmptyInput(tt *testing.T) {
	expectError(tt, "")
	tt.Run("nested", func(t *testing.T) {
		expectParser(t, Parse)
	})
}

func helper() int { return 1 }
"""
FILES = {
    "calc/calc_test.go": SOURCE.encode(),
    "calc/other_test.go": b"package calc\n\nfunc TestOther(t *testing.T) {}\n",
}


def plant(fail_to_pass: list[str], seed: int = 1) -> AppendedCanaries | None:
    return plant_go(list(FILES), fail_to_pass, FILES.__getitem__, random.Random(seed))


def test_the_canaries_are_appended_to_the_file_of_a_fail_to_pass_test_with_names_made_of_its_words() -> None:
    for seed in range(20):
        canaries = plant(["TestParseEmptyInput/nested", "TestRoundHalfUp"], seed)
        assert canaries is not None and canaries.path == "calc/calc_test.go"
        text = canaries.content.decode()
        assert text.startswith(SOURCE) and canaries.bare.decode().startswith(SOURCE)
        names = [canaries.passing, canaries.failing, canaries.twin]
        declared = re.findall(r"^func (\w+)", text, re.M)
        assert len(set(declared)) == len(declared) and {"TestOther", "helper"}.isdisjoint(names)
        words = {"Round", "Half", "Up", "Parse", "Empty", "Input", "Other"}
        for name in names:
            assert name is not None and name.startswith("Test") and set(re.findall("[A-Z][a-z]*", name[4:])) <= words
        # the twin, and the failing test, are copies of the file's tests: the body under a new name with another
        # `*testing.T` name, opened by a fatal comparison that fails
        for copy, of in ((canaries.twin, canaries.original), (canaries.failing, None)):
            planted = re.search(rf"^func {copy}\((\w+) \*testing\.T\) {{\n(.*?)^}}$", text, re.M | re.S)
            assert planted is not None
            new, body = planted.groups()
            head, _, rest = body.partition("\n\t}\n")
            assert head.startswith("\tif got, want := ") and f"\t\t{new}.Fatalf(" in head
            sources = {
                m[0]: (m[1], m[2])
                for m in re.findall(r"^func (\w+)\((\w+) \*testing\.T\) {\n(.*?)^}$", SOURCE, re.M | re.S)
            }
            matches = [
                n for n, (t, b) in sources.items() if new != t and re.sub(rf"(?<![\w.]){t}(?!\w)", new, b) == rest
            ]
            assert matches and (of is None or matches == [of]), (copy, matches)
        assert canaries.twin not in canaries.bare.decode() and canaries.without_twin().content == canaries.bare


def test_no_canaries_without_a_plain_top_level_fail_to_pass_test() -> None:
    assert plant(["TestMissing"]) is None
    assert plant_go(["calc/calc.go"], ["TestRoundHalfUp"], FILES.get) is None  # not a test file of the task


def test_a_report_is_judged_by_the_planted_outcomes() -> None:
    canaries = plant(["TestRoundHalfUp"])
    assert canaries is not None and canaries.original == "TestRoundHalfUp" and canaries.twin is not None
    honest = {
        "TestRoundHalfUp": "passed",
        canaries.passing: "passed",
        canaries.failing: "failed",
        canaries.twin: "failed",
    }
    assert canaries.expected(honest) and canaries.twin_ran(honest) and canaries.tampering(honest, 1, True) is None
    everything_passed = dict.fromkeys(honest, "passed")
    assert "twin" in (canaries.tampering(everything_passed, 0, False) or "")
    spared = {**honest, canaries.twin: "passed"}  # a forger that let the planted tests be, but not the twin
    assert "so did its twin" in (canaries.tampering(spared, 0, False) or "")
    no_twin = {k: v for k, v in honest.items() if k != canaries.twin}
    assert "missing" in (canaries.tampering(no_twin, 0, False) or "")
    forged_failure = {**honest, canaries.failing: "passed"}
    assert "planted to fail" in (canaries.tampering(forged_failure, 0, False) or "")
    only_the_task = {"TestRoundHalfUp": "passed"}
    assert canaries.tampering(only_the_task, 0, False)  # the twin is missing too
    assert "missing" in (canaries.without_twin().tampering(only_the_task, 0, False) or "")
    assert "exited 0" in (canaries.tampering(honest, 0, True) or "")
    unfixed = {**honest, "TestRoundHalfUp": "failed"}
    assert canaries.tampering(unfixed, 1, True) is None
    assert canaries.tampering({}, 1, True) is None  # nothing ran (a build failure): the task's tests say so


def test_seed_format_commands_select_exactly_one_test() -> None:
    assert go_single_id("TestParse") == "^TestParse$"
    assert go_single_id("TestParse/empty_input.v[1]") == r"^TestParse$/^empty_input\.v\[1\]$"
    command = runner_of("go test -json ./...").single_test("TestParse/empty", ["calc/calc_test.go"])
    assert command == "go test -count=1 -v -run '^TestParse$/^empty$' ./calc"


GTEST_SOURCE = """#include "gtest/gtest.h"

TEST(ranges_test, join_tuple) {
  auto t = std::tuple<int>(1);
  expect_joined(t, ", ", "1");
}

TEST_F(buffered_file_test, close_error) {
  expect_closed(f);
}

TEST_P(param_test, even) { EXPECT_TRUE(true); }
"""


def test_gtest_canaries_sit_in_the_suite_of_the_fail_to_pass_test_and_its_twin_copies_its_body() -> None:
    for seed in range(10):
        for original, macro in (("ranges_test.join_tuple", "TEST"), ("buffered_file_test.close_error", "TEST_F")):
            canaries = plant_gtest(
                ["test/a-test.cc"], [original], {"test/a-test.cc": GTEST_SOURCE.encode()}.get, random.Random(seed)
            )
            assert isinstance(canaries, AppendedCanaries) and canaries.original == original
            assert canaries.apart() is None  # no check to change: the twin runs beside its original
            suite = original.split(".")[0]
            text = canaries.content.decode()
            for test_id in (canaries.passing, canaries.failing, canaries.twin):
                assert test_id is not None and test_id.startswith(f"{suite}.")
                assert f"{macro}({suite}, {test_id.split('.')[1]})" in text
                assert "_" in test_id.split(".")[1]  # the file's style: snake_case names
            body = GTEST_SOURCE.split(f"{original.split('.')[1]}) {{\n")[1].split("\n}\n")[0]
            assert text.count(body) == 2 and canaries.twin not in canaries.bare.decode()
    assert plant_gtest(["test/a-test.cc"], ["param_test.even/0"], lambda path: GTEST_SOURCE.encode()) is None
