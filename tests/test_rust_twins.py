"""The twins of cargo's FAIL_TO_PASS tests (`languages.rust.twins`, `languages.rust.checks`): which check of a test is
changed and how, on the real tests of SWE-bench Multilingual's Rust rows and of dtolnay/itoa, and on each form a check
takes; how `plant_cargo` lays out the verify run and the run apart. The real toolchain runs them in
`tests/test_rust_twins_toolchain.py`; the red team in `tests/test_rust_twins_red_team.py`."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest

from swe_forge_dagster.languages.rust import source as rust_source
from swe_forge_dagster.languages.rust.canaries import CargoCanaries, plant_cargo
from swe_forge_dagster.languages.rust.source import Source, names_test
from swe_forge_dagster.languages.rust.twins import make_twins
from tests.support.common import SHARED_FIXTURES
from tests.support.rust_rows import MULTI, coverage, fail_to_pass, forms, rust_rows, whole_tests

SEEDS = range(12)


def changed_lines(before: str, after: str) -> list[tuple[str, str]]:
    """(old line, new line) of each line that differs; the files must have the same lines otherwise."""
    old, new = before.splitlines(), after.splitlines()
    assert len(old) == len(new)
    return [(a.strip(), b.strip()) for a, b in zip(old, new, strict=True) if a != b]


def twins_of(body: str, seeds: range = SEEDS) -> set[tuple[tuple[str, str], ...]]:
    """The changed lines of the twin of a test `t` whose body is `body`, over `seeds` (() where it has none)."""
    text = f"#[test]\nfn t() {{\n    {body}\n}}\n"
    found = set()
    for seed in seeds:
        made = make_twins("tests/t.rs", text, ["t"], random.Random(seed))
        found.add(tuple(changed_lines(text, made.content.decode())) if made is not None else ())
    return found


@pytest.mark.skipif(not MULTI.is_file(), reason="SWE-bench Multilingual fixture missing")
def test_the_real_rust_rows_tests_get_the_twins_a_reader_would_write() -> None:
    """bat's FAIL_TO_PASS test ends in assert_cmd's `.assert().failure()`, whose twin asserts `.success()`; tokio's two
    check trait bounds at compile time (`is_unwind_safe::<TcpListener>()`): nothing runs to change, no twin."""
    rows = {row["instance_id"]: row for row in rust_rows()}
    assert sorted(rows) == ["sharkdp__bat-562", "tokio-rs__tokio-4384"]
    tests = {test_id: found for row in rows.values() for test_id, found in whole_tests(row).items()}
    assert sorted(tests) == sorted(test_id for row in rows.values() for test_id in fail_to_pass(row))
    twinned: dict[str, str] = {}
    for seed in SEEDS:
        for test_id, (path, text) in tests.items():
            twinned |= coverage({path: text}, [test_id], seed)
            made = make_twins(path, text, [test_id], random.Random(seed))
            if test_id == "does_not_print_unwanted_file_named_cache":
                assert made is not None
                assert changed_lines(text, made.content.decode()) == [
                    (
                        'bat_with_config().arg("cach").assert().failure();',
                        'bat_with_config().arg("cach").assert().success();',
                    )
                ]
            else:
                assert made is None, test_id
    assert forms(list(twinned.values())) == {".failure() -> .success()": 1}  # 1 of the 3 FAIL_TO_PASS tests


ITOA = SHARED_FIXTURES / "repos" / "dtolnay+itoa.bundle"


@pytest.mark.skipif(not ITOA.is_file(), reason="dtolnay/itoa bundle missing")
def test_itoa_s_tests_twin_their_last_literal_and_leave_macro_made_tests_be(tmp_path: Path) -> None:
    """`test_max_str_len` checks ten `MAX_STR_LEN`s: the last, `assert_eq!(u128::MAX_STR_LEN, 39)`, expects another
    number of two digits or one a few below; the tests a `macro_rules!` writes are no functions of the file."""
    subprocess.run(["git", "clone", "-q", "--bare", str(ITOA), str(tmp_path / "itoa.git")], check=True)
    shown = ["git", "--git-dir", str(tmp_path / "itoa.git"), "show", "HEAD:tests/test.rs"]
    text = subprocess.run(shown, capture_output=True, text=True, check=True).stdout
    src = Source.read(text)
    assert src is not None and [test.name for test in rust_source.test_functions(src)] == ["test_max_str_len"]
    for seed in SEEDS:
        made = make_twins("tests/test.rs", text, ["test_max_str_len"], random.Random(seed))
        assert made is not None
        ((old, new),) = changed_lines(text, made.content.decode())
        assert old == "assert_eq!(u128::MAX_STR_LEN, 39);"
        value = re.fullmatch(r"assert_eq!\(u128::MAX_STR_LEN, (\d+)\);", new)
        assert value and 10 <= int(value.group(1)) < 39


@pytest.mark.parametrize(
    ("body", "pattern"),
    [
        ("assert_eq!(clamp(42, 0, 10), 10);", r"assert_eq!\(clamp\(42, 0, 10\), [7-9]\);"),
        ("assert_eq!(255u8, width());", r"assert_eq!\((1\d\d|2[0-4]\d|25[0-4])u8, width\(\)\);"),
        ('assert_eq!(name(), "ab\\n");', r'assert_eq!\(name\(\), "(bb|aa)\\n"\);'),
        ('assert_eq!(s, "ab".to_string());', r'assert_eq!\(s, "(bb|aa)"\.to_string\(\)\);'),
        ("assert_eq!(v, vec![1, 2]);", r"assert_eq!\(v, vec!\[(0, 2|1, 1|1, 0)\]\);"),
        ("assert_eq!(x, Some(-5));", r"assert_eq!\(x, Some\(-[1-4]\)\);"),
        ("assert_eq!(r, 0.5);", r"assert_eq!\(r, 0\.[1-4]\);"),
        ("assert_eq!(n, 1_000);", r"assert_eq!\(n, 99[7-9]\);"),
        ("assert_eq!(ok(), true);", r"assert_eq!\(ok\(\), false\);"),
        ("assert_eq!(a(), b());", r"assert_ne!\(a\(\), b\(\)\);"),
        ('assert_eq!(bytes(), b"hi");', r'assert_ne!\(bytes\(\), b"hi"\);'),  # a byte string's length is its type's
        ("assert_ne!(a(), 4);", r"assert_eq!\(a\(\), 4\);"),
        ('assert!(n == 3, "n is {}", n);', r'assert!\(n == [0-2], "n is \{\}", n\);'),
        ("assert!(a < b);", r"assert!\(a >= b\);"),
        ("assert!(v.is_empty());", r"assert!\(!v\.is_empty\(\)\);"),
        ("assert!(!v.is_empty());", r"assert!\(v\.is_empty\(\)\);"),
        ("assert!(a && b);", r"assert!\(!\(a && b\)\);"),
        ("assert!(!(a && b));", r"assert!\(a && b\);"),
        ("assert!(x as u64 > 0);", r"assert!\(!\(x as u64 > 0\)\);"),
        ("assert!(Vec::<u8>::new().is_empty());", r"assert!\(!Vec::<u8>::new\(\)\.is_empty\(\)\);"),
        (
            'cmd().assert().success().stdout("ok\\n");',
            r'cmd\(\)\.assert\(\)\.success\(\)\.stdout\("(kk|oo)\\n"\);',
        ),
        ("cmd().assert().code(2);", r"cmd\(\)\.assert\(\)\.code\([01]\);"),
        ("std::assert_eq!(a(), b());", r"std::assert_ne!\(a\(\), b\(\)\);"),
    ],
)
def test_each_form_of_check_is_changed_as_a_test_would_be_written(body: str, pattern: str) -> None:
    """One token changes: a literal's value (its type kept), else the check's sense."""
    for lines in twins_of(body):
        ((old, new),) = lines
        assert old == body and re.fullmatch(pattern, new), (body, new)


def test_the_last_check_that_surely_runs_is_the_one_changed() -> None:
    """Searched from the last statement: a check after which anything may follow, one in a block or loop that surely
    runs, a value a local holds; never past a `return`, into a loop that may not run, or under `#[cfg]`."""
    assert twins_of("assert_eq!(f(), 3);\n    drop(x);") == twins_of("assert_eq!(f(), 3);")
    assert {lines[0][1] for lines in twins_of("let want = 42;\n    assert_eq!(f(), want);")} <= {
        f"let want = {n};" for n in (*range(10, 42), 39, 40, 41)
    }
    assert twins_of("let x = g()?;\n    assert_eq!(x, 3);\n    Ok(())") == twins_of("assert_eq!(x, 3);")
    loop = "for (a, b) in [(1, 2), (3, 4)] {\n        assert_eq!(f(a), b);\n    }"
    assert twins_of(loop) == {(("assert_eq!(f(a), b);", "assert_ne!(f(a), b);"),)}
    held = "let cases = vec![(1, 2)];\n    for (a, b) in cases.iter().enumerate() {\n        assert!(ok(a, b));\n    }"
    assert twins_of(held) == {(("assert!(ok(a, b));", "assert!(!ok(a, b));"),)}
    assert twins_of("unsafe {\n        assert!(p());\n    }") == {(("assert!(p());", "assert!(!p());"),)}
    assert twins_of("for i in 0..3 {\n        assert!(f(i));\n    }") == {(("assert!(f(i));", "assert!(!f(i));"),)}
    cfg = "assert!(f());\n    #[cfg(unix)]\n    assert!(g());"
    assert twins_of(cfg) == {(("assert!(f());", "assert!(!f());"),)}
    for none in (
        "if x {\n        return;\n    }\n    assert_eq!(f(), 3);",  # may return before it
        "for i in 0..0 {\n        assert!(f(i));\n    }",  # an empty range
        "for i in items() {\n        assert!(f(i));\n    }",  # may be empty
        "let mut cases = vec![1];\n    cases.clear();\n    for c in cases {\n        assert!(f(c));\n    }",
        "for c in [1] {\n        if c > 0 {\n            continue;\n        }\n        assert!(f(c));\n    }",
        "pretty_assertions::assert_eq!(a(), b());",  # another crate's: it may have no `assert_ne!`
        "is_unwind_safe::<T>();",
        "helper(f());",
    ):
        assert twins_of(none, range(3)) == {()}, none


def test_the_file_keeps_every_other_byte_and_should_panic_tests_get_none() -> None:
    text = (
        "// a crate's tests\r\n#[test]\r\nfn a() {\r\n    assert_eq!(f(), 5); // five\r\n}\r\n\r\n"
        '#[test]\r\n#[should_panic(expected = "bad")]\r\nfn b() {\r\n    assert_eq!(g(), 1);\r\n}\r\n'
        "#[test] #[ignore] fn c() { assert_eq!(h(), 2); }\r\n"
    )
    for seed in SEEDS:
        made = make_twins("tests/t.rs", text, ["a", "b", "c"], random.Random(seed))
        assert made is not None and [twin.name for twin in made.twins] == ["a"]
        content = made.content.decode()
        assert re.fullmatch(r"[0-4]", content[text.index("5") : text.index("5") + 1])
        assert content[: text.index("5")] == text[: text.index("5")]
        assert content[text.index("5") + 1 :] == text[text.index("5") + 1 :]


def test_ids_name_tests_by_their_module_path() -> None:
    """libtest's id is the module path in the crate and the function's name: `src/parse.rs`'s `mod tests` is
    `parse::tests::x` (or `tests::x` as a dataset may cut it), an integration test's is its bare name."""
    text = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn x() {\n        assert!(a());\n    }\n}\n#[test]\nfn x() {}\n"
    src = Source.read(text)
    assert src is not None
    nested, top = rust_source.test_functions(src)
    assert names_test("parse::tests::x", "src/parse.rs", nested) and names_test("tests::x", "src/parse.rs", nested)
    assert not names_test("x", "src/parse.rs", nested) and not names_test("other::x", "src/parse.rs", nested)
    assert names_test("parse::x", "src/parse.rs", top) and not names_test("x", "src/parse.rs", top)
    assert names_test("x", "tests/cli.rs", top) and names_test("x", "src/lib.rs", top)
    made = make_twins("src/parse.rs", text, ["parse::tests::x"], random.Random(1))
    assert made is not None and [twin.name for twin in made.twins] == ["parse::tests::x"]


TESTS = """use calc::*;

#[test]
fn adds() {
    assert_eq!(add(2, 3), 5);
}

#[test]
fn subtracts() {
    assert_eq!(sub(5, 3), 2);
}

#[test]
fn keeps() {
    helper();
}
"""
OTHER = "#[test]\nfn rounds() {\n    assert!(round(2.5) == 3.0);\n}\n"
FILES = {"tests/calc.rs": TESTS.encode(), "tests/round.rs": OTHER.encode()}


def plant(fail_to_pass: list[str], seed: int) -> CargoCanaries:
    canaries = plant_cargo(list(FILES), fail_to_pass, FILES.__getitem__, random.Random(seed))
    assert isinstance(canaries, CargoCanaries)
    return canaries


def test_the_verify_run_has_no_twin_and_the_run_apart_has_every_twin_in_place() -> None:
    for seed in range(20):
        canaries = plant(["adds", "rounds", "keeps"], seed)
        assert [twin.name for twin in canaries.twins] == ["adds", "rounds"]  # `keeps` has no check
        (host,) = canaries.files()
        verify = canaries.files()[host].decode()
        original = FILES[host].decode()
        planted = set(re.findall(r"^fn (\w+)", verify, re.M)) - set(re.findall(r"^fn (\w+)", original, re.M))
        assert planted == {canaries.passing, canaries.failing}
        for name in planted:  # never a copy of a test with a twin: the run apart would show its original beside it
            body = verify.split(f"fn {name}() {{\n", 1)[1].split("\n}\n", 1)[0]
            assert "add(2, 3)" not in body and "round(2.5)" not in body
        apart = canaries.apart()
        assert apart is not None and apart.apart() is not None and canaries.twin_ran({}) is None
        files = apart.files()
        assert set(files) == {"tests/calc.rs", "tests/round.rs"}
        assert re.search(r"assert_eq!\(add\(2, 3\), [0-4]\);", files["tests/calc.rs"].decode())
        assert re.search(r"assert!\(round\(2\.5\) == [0-2]\.\d\);", files["tests/round.rs"].decode())
        # the same planted tests at the same place: the run apart differs from the verify run by the twins alone
        twinned = files[host].decode()
        assert len(changed_lines(verify, twinned)) == 1
        assert canaries.without_twin().apart() is None


def test_a_run_apart_where_a_twin_passed_or_is_missing_was_forged() -> None:
    canaries = plant(["adds", "subtracts"], 2)
    planted = {canaries.passing: "passed", canaries.failing: "failed"}
    verify = {"adds": "passed", "subtracts": "passed", **planted}
    honest = {"adds": "failed", "subtracts": "failed", **planted}
    assert canaries.expected(verify) and canaries.tampering(verify, 101, True) is None
    assert canaries.apart_tampering(verify, honest) is None
    reason = canaries.apart_tampering(verify, {**honest, "subtracts": "passed"}) or ""
    assert reason.startswith("subtracts passed, and its twin run apart passed too, although it expects "), reason
    assert "ignored" not in reason and "skipped too" in (
        canaries.apart_tampering(verify, {**honest, "adds": "skipped"})
    )
    missing = {k: v for k, v in honest.items() if k != "adds"}
    assert "missing from the report of the run apart" in (canaries.apart_tampering(verify, missing) or "")
    unfixed = {**verify, "adds": "failed", "subtracts": "failed"}
    assert canaries.apart_tampering(unfixed, {**honest, "adds": "passed"}) is None  # nothing passed: no claim
    assert canaries.apart_tampering(verify, None) is None  # no report apart: no verdict, which the harness gives
    apart = canaries.apart()
    assert apart is not None and "missing" in (apart.tampering({"adds": "failed"}, 101, True) or "")
