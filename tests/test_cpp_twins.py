"""The twins of GoogleTest's FAIL_TO_PASS tests (`languages.cpp.twins`): which check of a test is changed and how, on
the real tests of SWE-bench Multilingual's fmt rows (read from the fmt bundle) and on each form a check takes. The
canaries that carry them are `tests/test_cpp_twins_canaries.py`'s; the real toolchain runs them in
`tests/test_cpp_twins_toolchain.py`, the red team in `tests/test_real_multilingual.py` (the `gtest` corpus of
`tests/support/real_red_team.py`)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from swe_forge_dagster.languages.cpp.source import Source
from swe_forge_dagster.languages.cpp.twins import another_literal, another_number, make_twins
from tests.support.cpp_rows import BUNDLE, MULTI, census, clone, fail_to_pass, fmt_rows, patched_test_files, row_twins

SEEDS = range(16)


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    """(old line, new line) of each line that differs; the files must have the same lines otherwise."""
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    assert len(old) == len(new)
    return [(a, b) for a, b in zip(old, new, strict=True) if a != b]


def twin_lines(text: str, names: set[str], seeds: range = SEEDS) -> list[list[tuple[str, str]]]:
    """The changed lines of the twins of `names` in `text`, for each seed."""
    found = []
    for seed in seeds:
        made = make_twins("test/a-test.cc", text, names, random.Random(seed))
        found.append(changed_lines(text, made.content.decode()) if made is not None else [])
    return found


@pytest.fixture(scope="module")
def fmt_git(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (MULTI.is_file() and BUNDLE.is_file()):
        pytest.skip("SWE-bench Multilingual fixture or the fmt bundle missing")
    return clone(tmp_path_factory.mktemp("fmt") / "fmt.git")


def test_the_real_fmt_rows_tests_get_a_changed_expected_string_in_their_last_compiled_check(fmt_git: Path) -> None:
    """join_tuple ends in `EXPECT_EQ(..., "003, -01, -01")`, which has one of its digits replaced by another (and the
    other row's path one of its letters);
    std_test.path's last checks sit in `# ifdef _WIN32`, not compiled here, so the one before them changes."""
    rows = {row["instance_id"]: row for row in fmt_rows()}
    assert sorted(rows) == ["fmtlib__fmt-2457", "fmtlib__fmt-3729"]
    expected = {
        "fmtlib__fmt-2457": '  EXPECT_EQ(fmt::format("{:03}", fmt::join(t7, ", ")), "003, -01, -01");\n',
        "fmtlib__fmt-3729": '  EXPECT_EQ(fmt::format("{:g}", path("/usr/bin")), "/usr/bin");\n',
    }
    for instance_id, row in rows.items():
        ((path, text),) = patched_test_files(row, fmt_git).items()
        for lines in twin_lines(text, set(fail_to_pass(row))):
            ((old, new),) = lines
            assert old == expected[instance_id]
            head, _, literal = old.rpartition(', "')
            assert new.startswith(head + ', "') and new.endswith('");\n')
            was, now = literal[: -len('");\n')], new[len(head) + 3 : -len('");\n')]
            changed = [(a, b) for a, b in zip(was, now, strict=True) if a != b]  # one replaced by another of its kind
            kinds = (str.isdigit, str.isupper, str.islower)
            assert len(changed) == 1 and any(k(a) and k(b) for a, b in changed for k in kinds), (was, now)
        twins = row_twins(row, {path: text})
        assert list(twins) == fail_to_pass(row) and twins[fail_to_pass(row)[0]].startswith("expects ")


def test_most_tests_of_fmt_get_a_twin_and_the_rest_check_only_through_helpers(fmt_git: Path) -> None:
    """The census over every TEST of fmt's test files at fmtlib__fmt-2457's base (`tests.support.cpp_rows`): three
    in four get a twin, most by a changed string; those without one check through fmt's own macros (`EXPECT_WRITE`,
    `EXPECT_THROW_MSG`) or not at all."""
    counts = census(fmt_git, fmt_rows()[0]["base_commit"])
    total = sum(counts.values())
    assert total > 400 and counts["none"] < total / 3, counts
    assert counts["string"] > counts["negated"] > counts["number"] > 0, counts


FORMS = """#include "gtest/gtest.h"

TEST(calc_test, number_with_suffix) {
  auto n = count();
  EXPECT_EQ(n, 100u) << "count";
}

TEST(calc_test, negative_number_first) {
  ASSERT_EQ(-42, parse("-42"));
}

TEST(calc_test, string_with_escapes) {
  EXPECT_STREQ(name(), "a\\x41\\tb");
}

TEST(calc_test, raw_string) {
  EXPECT_EQ(dump(), R"({"k": 1})");
}

TEST(calc_test, equality_in_true) {
  EXPECT_TRUE(size(v) == 3);
}

TEST(calc_test, true_negated) {
  EXPECT_TRUE(ready());
}

TEST(calc_test, not_equal_negated) {
  EXPECT_NE(a(), b());
}

TEST_F(file_test, ordered_negated) {
  ASSERT_LT(f.size(), 10);
}

TEST(calc_test, false_of_equality_negated) {
  EXPECT_FALSE(size(v) == 3);
}

TEST(calc_test, last_changeable_check_before_others) {
  EXPECT_EQ(add(1, 1), 2);
  EXPECT_THAT(v, ElementsAre(1));
  EXPECT_NEAR(ratio(), 0.5, 1e-9);
  helper_check(v);
}

TEST(calc_test, nothing_after_a_return) {
  EXPECT_EQ(first(), 7);
  if (skip()) return;
  EXPECT_EQ(second(), 8);
}

TEST(calc_test, a_lambda_return_is_not_the_test_s) {
  auto f = [&](int x) -> int { return x + 1; };
  EXPECT_EQ(f(1), 2);
}

TEST(calc_test, conditional_checks_are_passed_over) {
  EXPECT_EQ(g(), 5);
#ifdef _WIN32
  EXPECT_EQ(h(), 6);
#endif
}

TEST(calc_test, directive_in_a_block) {
  {
#ifdef _WIN32
    win();
#endif
    EXPECT_EQ(k(), 4);
  }
}

TEST(calc_test, in_a_bare_block) {
  {
    scoped s;
    EXPECT_TRUE(s.ok());
  }
  log();
}

TEST(calc_test, floats_cannot_change) {
  EXPECT_DOUBLE_EQ(half(), 0.5);
}

TEST(calc_test, defined_twice) { EXPECT_EQ(x(), 1); }
TEST(calc_test, defined_twice) { EXPECT_EQ(x(), 1); }
"""


def twin_of(name: str, seeds: range = SEEDS) -> set[tuple[str, str]]:
    """Every (old line, new line) the twin of `calc_test.<name>` (or `file_test.<name>`) changes, over `seeds`."""
    names = {f"calc_test.{name}", f"file_test.{name}"}
    found: set[tuple[str, str]] = set()
    for seed in seeds:
        made = make_twins("test/calc-test.cc", FORMS, names, random.Random(seed))
        assert made is not None and len(made.twins) == 1, name
        found |= set(changed_lines(FORMS, made.content.decode()))
    return found


def test_a_literal_of_an_exact_equality_changes_keeping_its_type() -> None:
    numbers = twin_of("number_with_suffix")
    assert {old for old, _ in numbers} == {'  EXPECT_EQ(n, 100u) << "count";\n'}
    assert {new for _, new in numbers} <= {f'  EXPECT_EQ(n, {n}u) << "count";\n' for n in range(97, 100)}
    negative = {new for _, new in twin_of("negative_number_first")}
    assert negative <= {f'  ASSERT_EQ(-{n}, parse("-42"));\n' for n in range(10, 42)}
    in_true = {new for _, new in twin_of("equality_in_true")}
    assert in_true == {f"  EXPECT_TRUE(size(v) == {n});\n" for n in (0, 1, 2)}
    raw = {new for _, new in twin_of("raw_string")}
    assert all(line.startswith('  EXPECT_EQ(dump(), R"(') and line.endswith(')");\n') for line in raw)
    assert all(len(line) == len('  EXPECT_EQ(dump(), R"({"k": 1})");\n') for line in raw)  # a letter or digit replaced


def test_a_string_changes_a_letter_or_digit_of_its_own_never_one_an_escape_runs_on() -> None:
    """`"a\\x41\\tb"`: the escapes stay as they are, and a letter or digit changes into another of its kind (the
    string keeps its length and form: a forger that checks the form of the value it returns cannot tell the twin)."""
    for seed in range(200):
        new = another_literal('"a\\x41\\tb"', random.Random(seed))
        assert new.count("\\x41") == 1 and new.count("\\t") == 1 and new.count("\\") == 2
        assert new[1:-1].replace("\\x41", "").replace("\\t", "") in ("bb", "aa")
    assert another_literal('u8"z"sv', random.Random(1)) in {f'u8"{c}"sv' for c in "abcdefghijklmnopqrstuvwxy"}
    assert another_literal('"12"', random.Random(1)) in ('"22"', '"11"')
    assert another_literal('"+-"', random.Random(1)) in ('"++-"', '"+--"', '"+-+"', '"-+-"')  # nothing to replace
    assert {another_number("0", random.Random(s)) for s in range(20)} == {"1"}
    assert {another_number("3ULL", random.Random(s)) for s in range(40)} == {"2ULL", "1ULL", "0ULL"}


def test_any_other_check_is_negated_with_its_opposite_macro() -> None:
    assert twin_of("true_negated") == {("  EXPECT_TRUE(ready());\n", "  EXPECT_FALSE(ready());\n")}
    assert twin_of("not_equal_negated") == {("  EXPECT_NE(a(), b());\n", "  EXPECT_EQ(a(), b());\n")}
    assert twin_of("ordered_negated") == {("  ASSERT_LT(f.size(), 10);\n", "  ASSERT_GE(f.size(), 10);\n")}
    # a changed value could hold here (`size(v)` is not 3, nor maybe 2): only the negation is exact
    assert twin_of("false_of_equality_negated") == {
        ("  EXPECT_FALSE(size(v) == 3);\n", "  EXPECT_TRUE(size(v) == 3);\n")
    }


def test_the_check_changed_is_the_last_that_surely_runs_when_the_test_passes() -> None:
    """Checks a twin cannot change (`EXPECT_THAT`, `EXPECT_NEAR`, a helper) are passed over; nothing after a
    `return` is searched (a lambda's `return` is the lambda's), nor a check an `#ifdef` may leave out."""
    assert {old for old, _ in twin_of("last_changeable_check_before_others")} == {"  EXPECT_EQ(add(1, 1), 2);\n"}
    assert {old for old, _ in twin_of("nothing_after_a_return")} == {"  EXPECT_EQ(first(), 7);\n"}
    assert {old for old, _ in twin_of("a_lambda_return_is_not_the_test_s")} == {"  EXPECT_EQ(f(1), 2);\n"}
    assert {old for old, _ in twin_of("conditional_checks_are_passed_over")} == {"  EXPECT_EQ(g(), 5);\n"}
    assert {old for old, _ in twin_of("directive_in_a_block")} == {"    EXPECT_EQ(k(), 4);\n"}
    assert twin_of("in_a_bare_block") == {("    EXPECT_TRUE(s.ok());\n", "    EXPECT_FALSE(s.ok());\n")}


def test_no_twin_without_a_check_to_change_or_for_a_name_defined_twice() -> None:
    for name in ("floats_cannot_change", "defined_twice", "missing"):
        assert make_twins("test/calc-test.cc", FORMS, {f"calc_test.{name}"}) is None, name


def test_every_twin_of_a_file_is_written_at_once_and_the_rest_keeps_its_bytes() -> None:
    names = {f"calc_test.{n}" for n in ("number_with_suffix", "true_negated", "raw_string")}
    made = make_twins("test/calc-test.cc", FORMS.replace("\n", "\r\n"), names, random.Random(4))
    assert made is not None and sorted(twin.name for twin in made.twins) == sorted(names)
    text = made.content.decode()
    assert len(changed_lines(FORMS.replace("\n", "\r\n"), text)) == 3 and text.count("\r\n") == FORMS.count("\n")
    assert Source.read(text) is not None
