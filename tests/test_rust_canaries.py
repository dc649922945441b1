"""Canaries for `cargo test` (`languages.rust.canaries`): where they are planted, what they look like, and how a
libtest report is judged with them. The real runs (a crate built with Debian's cargo, its gold patch, its empty
agent and the red team of `tests/support/toolchain_hacks.py`) are in `tests/test_toolchain_red_team.py`."""

from __future__ import annotations

import random
import re

import pytest

from swe_forge_dagster.execution.canaries import AppendedCanaries
from swe_forge_dagster.languages.registry import runner_of
from swe_forge_dagster.languages.rust.canaries import CargoCanaries, plant_cargo
from swe_forge_dagster.languages.rust.pack import parse_libtest

LIB = """pub fn clamp(v: i64, lo: i64, hi: i64) -> i64 {
    v.max(lo).min(hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clamps_above_the_range() {
        assert_eq!(clamp(9, 0, 5), 5);
    }

    #[test]
    #[should_panic]
    fn panics_on_an_empty_range() {
        clamp(1, 5, 0);
    }

    #[test]
    fn keeps_inside_values() -> Result<(), String> {
        assert_eq!(clamp(2, 0, 5), 2);
        Ok(())
    }
}
"""
FILES = {"src/lib.rs": LIB.encode(), "tests/other.rs": b"#[test]\nfn other_case() {\n    assert!(true);\n}\n"}


def plant(fail_to_pass: list[str], seed: int) -> CargoCanaries | AppendedCanaries | None:
    return plant_cargo(list(FILES), fail_to_pass, FILES.__getitem__, random.Random(seed))


def test_the_canaries_sit_in_the_module_of_the_fail_to_pass_test_with_names_like_its_tests() -> None:
    for seed in range(20):
        canaries = plant(["tests::clamps_above_the_range"], seed)
        assert isinstance(canaries, CargoCanaries) and canaries.path == "src/lib.rs"
        text = canaries.content.decode()
        names = [canaries.passing, canaries.failing]
        assert all(n.startswith("tests::") for n in names)
        declared = re.findall(r"\bfn (\w+)", text)
        assert len(set(declared)) == len(declared)  # no name taken twice
        words = {"clamps", "above", "the", "range", "panics", "on", "an", "empty", "keeps", "inside", "values"}
        for name in names:
            assert set(name.removeprefix("tests::").split("_")) <= words
            # inside `mod tests`, at its indentation, after the original: same `use super::*`
            assert re.search(rf"\n    #\[test\]\n(?:    #\[[^\n]*\]\n)*    fn {name[7:]}\(\)", text)
            assert text.index("fn clamps_above_the_range") < text.index(f"fn {name[7:]}(")
        assert text.rstrip().endswith("}\n}") and text.count("mod tests") == 1
        assert text.count("fn clamps_above_the_range()") == 1  # its twin runs apart, not beside it
        apart = canaries.apart()
        assert apart is not None and set(apart.files()) == {"src/lib.rs"}
        twinned = apart.files()["src/lib.rs"].decode()
        assert twinned != text and "assert_eq!(clamp(9, 0, 5), 5)" in text
        # only the twin's value differs: the same planted tests, at the same place, in the run apart
        assert re.sub(r"clamp\(9, 0, 5\), \d\)", "", twinned) == re.sub(r"clamp\(9, 0, 5\), \d\)", "", text)


def test_the_twin_expects_another_value_and_the_failing_copy_fails_before_its_body() -> None:
    for seed in range(30):
        canaries = plant(["tests::clamps_above_the_range"], seed)
        assert isinstance(canaries, CargoCanaries)
        (twin,) = canaries.twins
        assert twin.name == "tests::clamps_above_the_range"
        apart = canaries.apart()
        assert apart is not None
        text = apart.files()["src/lib.rs"].decode()
        head = r"    #\[test\]\n    fn clamps_above_the_range\(\) \{\n"
        assert re.search(head + r"        assert_eq!\(clamp\(9, 0, 5\), [0-4]\);\n    \}", text), text
        failing = re.search(
            rf"((?:    #\[[^\n]*\]\n)*)    fn {canaries.failing[7:]}\(\)[^{{]*\{{\n"
            rf"        assert_eq!\((\d+), (\d+)\);",
            text,
        )
        assert failing and failing.group(2) != failing.group(3) and "should_panic" not in failing.group(1)


def test_a_test_with_no_check_to_change_keeps_its_twin_beside_it_opened_by_a_failing_comparison() -> None:
    lib = "#[test]\nfn reads_back() {\n    let v = f();\n    helper(v);\n}\n"
    files = {"tests/t.rs": lib.encode()}
    for seed in range(5):
        canaries = plant_cargo(list(files), ["reads_back"], files.__getitem__, random.Random(seed))
        assert isinstance(canaries, AppendedCanaries) and canaries.twin is not None and canaries.apart() is None
        copy = canaries.content.decode().split(f"fn {canaries.twin}() {{\n")[1]
        assert re.match(r"    assert_eq!\((\d+), (?!\1\))(\d+)\);\n    let v = f\(\);", copy)
    for body, line in (
        ("assert!(f().is_ok());", "    assert!(!f().is_ok());\n"),
        ("assert_eq!(a(), b());", "    assert_ne!(a(), b());\n"),  # no literal: negated
        ('let v = f();\n    assert!(v.ok(), "bad {}", v);', '    assert!(!v.ok(), "bad {}", v);\n'),
    ):
        one = {"tests/t.rs": f"#[test]\nfn same_len() {{\n    {body}\n}}\n".encode()}
        canaries = plant_cargo(list(one), ["same_len"], one.__getitem__, random.Random(1))
        assert isinstance(canaries, CargoCanaries) and line not in canaries.content.decode()
        assert line in dict(canaries.apart_files)["tests/t.rs"].decode()


def test_integration_test_ids_have_no_module_and_unplantable_tests_give_none() -> None:
    canaries = plant(["other_case"], 1)
    assert isinstance(canaries, CargoCanaries) and canaries.path == "tests/other.rs"
    assert "::" not in canaries.passing and [twin.name for twin in canaries.twins] == ["other_case"]
    assert plant(["tests::panics_on_an_empty_range"], 1) is None  # a panic is its pass: no twin can mirror it
    assert plant(["tests::missing"], 1) is None


def test_a_libtest_report_is_judged_with_the_canaries() -> None:
    canaries = plant(["tests::clamps_above_the_range"], 3)
    assert isinstance(canaries, CargoCanaries)
    original, passing, failing = canaries.twins[0].name, canaries.passing, canaries.failing
    honest = {original: "passed", passing: "passed", failing: "failed"}
    assert canaries.expected(honest) and canaries.tampering(honest, 101, False) is None
    assert canaries.apart_tampering(honest, {**honest, original: "failed"}) is None
    assert "its twin run apart passed too" in str(canaries.apart_tampering(honest, honest))
    assert "planted to fail" in str(canaries.tampering({**honest, failing: "passed"}, 0, False))
    assert "missing" in str(canaries.tampering({original: "passed", "tests::x": "passed"}, 0, False))
    assert runner_of("RUSTC_BOOTSTRAP=1 cargo test --offline --lib").plant is plant_cargo
    assert runner_of("RUSTC_BOOTSTRAP=1 cargo test --offline --lib").twins_apart


def test_attributes_before_test_stay_with_the_original_and_risky_assertions_get_no_changed_twin() -> None:
    source = (
        '#[should_panic(expected = "bad")]\n#[test]\nfn rejects_bad() {\n    parse("x");\n}\n\n'
        "#[test]\nfn fits_a_byte() {\n    assert_eq!(width(), 255u8);\n}\n\n"
        '#[test]\nfn only_with_x() {\n    let v = f();\n    #[cfg(feature = "x")]\n    assert!(v);\n}\n'
    )
    files = {"tests/t.rs": source.encode()}
    assert plant_cargo(list(files), ["rejects_bad"], files.__getitem__, random.Random(1)) is None  # a panic passes
    for seed in range(10):
        byte = plant_cargo(list(files), ["fits_a_byte"], files.__getitem__, random.Random(seed))
        assert isinstance(byte, CargoCanaries) and byte.content.decode().count("#[should_panic") == 1
        apart = dict(byte.apart_files)["tests/t.rs"].decode()  # the original keeps its attributes
        value = re.search(r"fn fits_a_byte\(\) \{\n    assert_eq!\(width\(\), (\d+)u8\);", apart)
        assert value and 0 <= int(value.group(1)) < 255  # towards zero: never past the type's range
    cfg = plant_cargo(list(files), ["only_with_x"], files.__getitem__, random.Random(1))
    assert isinstance(cfg, AppendedCanaries) and cfg.twin_always_fails  # a copy opened by a failing comparison


def test_a_report_whose_events_disagree_with_libtests_summary_is_unreadable() -> None:
    """A forged `ok` printed to the report's stream, with an unterminated prefix that swallows libtest's own `failed`
    event (a red-team agent): the summary libtest counted still says one failed."""
    honest = (
        b'{ "type": "suite", "event": "started", "test_count": 2 }\n'
        b'{ "type": "test", "event": "started", "name": "a" }\n{ "type": "test", "event": "started", "name": "b" }\n'
        b'{ "type": "test", "name": "a", "event": "ok" }\n'
    )
    summary = b'{ "type": "suite", "event": "failed", "passed": 1, "failed": 1, "ignored": 0, "measured": 0 }\n'
    assert parse_libtest(honest + b'{ "type": "test", "name": "b", "event": "failed" }\n' + summary) == {
        "a": "passed",
        "b": "failed",
    }
    forged = honest + b'{ "type": "test", "event": "ok", "name": "b" }\n{"sf":"{ "type": "test", "name": "b", '
    forged += b'"event": "failed" }\n' + summary
    with pytest.raises(ValueError, match="summary counts 1 passed tests but its events 2"):
        parse_libtest(forged)
