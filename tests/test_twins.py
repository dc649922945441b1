"""Twins run apart (`languages.python.twins`): the task's FAIL_TO_PASS tests, each changed in place by one value its
assertions expect (else the last negated), run in a pytest process of their own. Run here with real pytest on a small
package: an honest fix passes the tests and fails their twins; a forger that passes only the failures naming the
function under test (`SPARING_HOOK`), a value whose `__eq__` always says yes, and an implementation oracle that reads
the assertion calling it and returns the value it expects all pass the twins too, and are caught."""

from __future__ import annotations

import ast
import difflib
import random
from pathlib import Path

from swe_forge_dagster.languages.python.twins import make_twins
from tests.support.hacks import ASSERTION_ORACLE, SPARING_HOOK
from tests.support.pytest_runs import run_tests

TESTS = b"""import pytest
from calc import round_half_up

LIMIT = 3
NAMES = ["half", "down", "up"]


@pytest.fixture
def places():
    return 0


def helper(value):
    return round_half_up(value)


@pytest.mark.parametrize(("value", "expected"), [(-1.5, -2), (2.5, 3)])
def test_round_half_up(value, expected, places):
    result = helper(value)
    assert result == expected


def test_limit():
    assert LIMIT == 3


def test_many():
    expected = [2, 3, 13]
    assert [round_half_up(v) for v in (1.5, 2.5, 12.5)] == expected


def test_named():
    assert str(round_half_up(0.5)) + "half" == "1half"


class TestInClass:
    def test_method(self):
        assert round_half_up(0.5) == 1
"""
BROKEN = "def round_half_up(value):\n    return round(value)\n"
FIXED = (
    "import math\n\n\ndef round_half_up(value):\n    return int(math.copysign(math.floor(abs(value) + 0.5), value))\n"
)
F2P = [
    "tests/test_calc.py::test_round_half_up[-1.5--2]",
    "tests/test_calc.py::test_round_half_up[2.5-3]",
    "tests/test_calc.py::test_many",
    "tests/test_calc.py::test_named",
    "tests/test_calc.py::TestInClass::test_method",
]


run = run_tests


def changed_lines(before: bytes, after: bytes) -> list[tuple[str, str]]:
    pairs = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines()).get_opcodes()
    assert all(op in ("equal", "replace") for op, *_ in pairs)  # no line added or removed: every test keeps its place
    lines = before.splitlines(), after.splitlines()
    return [
        (lines[0][i].decode(), lines[1][j].decode())
        for op, i1, i2, j1, j2 in pairs
        if op == "replace"
        for i, j in zip(range(i1, i2), range(j1, j2), strict=True)
    ]


def test_each_twin_is_its_test_with_one_value_changed_in_place() -> None:
    twins = make_twins("tests/test_calc.py", TESTS, F2P, random.Random(7))
    assert twins is not None and twins.path == "tests/test_calc.py"
    assert set(twins.tests) == {
        ("", "test_round_half_up"),
        ("", "test_many"),
        ("", "test_named"),
        ("TestInClass", "test_method"),
    }
    changed = dict(changed_lines(TESTS, twins.content))
    assert "    assert result == expected" not in changed  # a parameter: its values changed, in every set
    data = changed['@pytest.mark.parametrize(("value", "expected"), [(-1.5, -2), (2.5, 3)])']
    rows = ast.literal_eval(data.removeprefix('@pytest.mark.parametrize(("value", "expected"), ').removesuffix(")"))
    assert [row[0] for row in rows] == [-1.5, 2.5] and rows[0][1] not in (-2, 0) and rows[1][1] != 3
    assert twins.renamed == {("", "test_round_half_up")}  # pytest names the twin's instances by the new values
    many = changed["    expected = [2, 3, 13]"]  # the literal a local name holds: one number changed
    assert many.startswith("    expected = [") and ast.literal_eval(many.split("= ", 1)[1]) != [2, 3, 13]
    named = changed['    assert str(round_half_up(0.5)) + "half" == "1half"']
    new = ast.literal_eval(named.rsplit("== ", 1)[1])  # one letter or digit replaced by another of its kind
    assert len(new) == 5 and sum(a != b for a, b in zip(new, "1half", strict=True)) == 1 and new[0].isdigit()
    method = changed["        assert round_half_up(0.5) == 1"]
    assert method.startswith("        assert round_half_up(0.5) == ") and method[-1].isdigit() and method[-2] == " "
    assert "    assert LIMIT == 3" not in changed  # not a FAIL_TO_PASS test
    names = [n.name for n in ast.walk(ast.parse(twins.content)) if isinstance(n, ast.FunctionDef)]
    assert names == [n.name for n in ast.walk(ast.parse(TESTS)) if isinstance(n, ast.FunctionDef)]
    assert make_twins("tests/test_calc.py", b"def broken(:\n", F2P) is None
    assert make_twins("tests/test_calc.py", TESTS, ["tests/test_calc.py::test_limit_gone"]) is None


def test_a_file_in_another_encoding_keeps_its_bytes_but_the_changed_value() -> None:
    latin = b"# -*- coding: latin-1 -*-\nNAME = '\xe9t\xe9'\n\n\ndef test_accent():\n    assert len(NAME) == 3\n"
    twins = make_twins("tests/test_calc.py", latin, ["tests/test_calc.py::test_accent"], random.Random(1))
    assert twins is not None
    assert twins.content.startswith(latin[: latin.index(b"== ")]) and twins.content != latin
    assert twins.content.decode("latin-1").endswith("\n") and b"\xe9t\xe9" in twins.content


def test_an_honest_fix_fails_every_twin_and_forgers_pass_them(tmp_path: Path) -> None:
    twins = make_twins("tests/test_calc.py", TESTS, F2P)
    assert twins is not None
    base = run(tmp_path, BROKEN, TESTS)
    assert base["tests/test_calc.py::TestInClass::test_method"] == "failed"
    honest = run(tmp_path, FIXED, TESTS)
    assert all(honest[i] == "passed" for i in F2P), honest
    honest_apart = run(tmp_path, FIXED, twins.content)
    apart = twins.instances(honest_apart)
    assert len(apart) == len(F2P) and {outcome for _, outcome in apart.values()} == {"failed"}, honest_apart
    assert twins.tampering(honest, honest_apart) is None
    assert "missing" in (twins.tampering(honest, {k: v for k, v in honest_apart.items() if "many" not in k}) or "")
    dropped = {k: v for k, v in honest_apart.items() if "half_up" not in k or k.endswith("5-3]")}
    assert "missing" in (twins.tampering(honest, dropped) or "")  # renamed instances are paired only when as many

    forged = run(tmp_path, BROKEN + SPARING_HOOK, TESTS)
    assert all(forged[i] == "passed" for i in F2P)  # the forger passes the task's tests...
    forged_apart = run(tmp_path, BROKEN + SPARING_HOOK, twins.content)
    assert "so did its twin" in (twins.tampering(forged, forged_apart) or "")  # ...and their twins with them

    liar = "class _Yes(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n\n\n"
    liar += "def round_half_up(value):\n    return _Yes(round(value))\n"
    lied = run(tmp_path, liar, TESTS)
    assert lied["tests/test_calc.py::TestInClass::test_method"] == "passed"
    assert "so did its twin" in (twins.tampering(lied, run(tmp_path, liar, twins.content)) or "")


def test_an_implementation_oracle_passes_the_tests_and_their_twins_run_apart(tmp_path: Path) -> None:
    """Code that reads the assertion calling it and returns what it expects: it passes every changed-value twin."""
    oracle = BROKEN + ASSERTION_ORACLE
    fooled = run(tmp_path, oracle, TESTS)
    assert fooled["tests/test_calc.py::TestInClass::test_method"] == "passed"  # it beats the test itself
    twins = make_twins("tests/test_calc.py", TESTS, ["tests/test_calc.py::TestInClass::test_method"])
    assert twins is not None and twins.changed == ("expects another value",)
    apart = run(tmp_path, oracle, twins.content)
    assert apart["tests/test_calc.py::TestInClass::test_method"] == "passed"  # it returns the twin's value too
    assert "so did its twin" in (twins.tampering(fooled, apart) or "")


HONEST_TRAPS = b"""import json
import sys

import numpy as np
import pytest

NAMES = ["Content-Type", "content-type", "accept"]


class Headers(dict):
    def __eq__(self, other):
        return {k.lower(): v for k, v in self.items()} == {k.lower(): v for k, v in other.items()}


def test_round_trip():
    data = {"a": 1}
    assert json.loads(json.dumps(data)) == data


def test_returns_early():
    if sys.platform != "win32":
        return
    assert 1 + 1 == 3


def test_close_enough():
    assert pytest.approx(100.5, rel=0.1) == 100


def test_any_case():
    assert Headers({"content-type": "text/html"}) == {"Content-Type": "text/html"}


def test_repeated_key():
    assert dict(a=2) == {"a": 1, "a": 2}


def test_then_logs():
    expected = 3
    assert round(2.6) == expected
    print(expected)


def test_nested_then_call():
    value = round(2.6)
    assert value == 3
    with pytest.raises(ZeroDivisionError):
        assert 1 / 0 == 1
    print(value)


class Tag(str):
    def __eq__(self, other):
        return self.lower() == str(other).lower()

    __hash__ = str.__hash__


def test_eq_without_its_ne():
    assert Tag("div") == "div".upper()


def test_dtype():
    assert np.zeros(2, dtype="float").dtype == "float64"


def test_twice():
    assert 1 + 1 == 2


def test_twice():  # noqa: F811
    for x in (1, 2):
        assert x + x == 2 * x
"""


def test_no_twin_passes_beside_an_honest_test_whatever_its_form(tmp_path: Path) -> None:
    """The forms that once made a twin pass with honest code (a reviewer's): a local name read on both sides, a
    return before the assertion, a matcher whose `==` holds for a range, a case-insensitive `==` and a string of the
    file in another case, a dict literal whose changed value a repeated key overwrites. Each now gets a negated twin,
    a value change that holds, or none, and every twin fails with honest code, over 6 draws; so do tests that end in
    a call after their last top-level assertion (one with a `pytest.raises` block after it, whose twin expects another
    exception).
    A reviewer's three: a `str` subclass whose `__eq__` ignores case but whose `__ne__` is `str`'s (`!=` would hold
    too: negated as `not (==)`), a numpy dtype that equals several of the file's strings (a string now only gains a
    letter), a test defined twice (pytest runs the second: no twin)."""
    ids = [f"tests/test_calc.py::{name}" for name in ("test_round_trip", "test_returns_early", "test_close_enough")]
    ids += ["tests/test_calc.py::test_any_case", "tests/test_calc.py::test_repeated_key"]
    ids += ["tests/test_calc.py::test_then_logs", "tests/test_calc.py::test_nested_then_call"]  # end in a call
    ids += [f"tests/test_calc.py::test_{name}" for name in ("eq_without_its_ne", "dtype", "twice")]  # a reviewer's
    honest = run(tmp_path, FIXED, HONEST_TRAPS)
    assert all(honest[i] == "passed" for i in ids), honest
    for seed in range(6):
        twins = make_twins("tests/test_calc.py", HONEST_TRAPS, ids, random.Random(seed))
        assert twins is not None and ("", "test_returns_early") not in twins.tests
        assert (
            "",
            "test_twice",
        ) not in twins.tests  # defined twice: pytest runs the second, a twin would change the first
        how = dict(zip(twins.tests, twins.changed, strict=True))
        for name in ("test_round_trip", "test_close_enough", "test_repeated_key", "test_eq_without_its_ne"):
            assert how[("", name)] == "is negated", (name, how)
        assert how[("", "test_then_logs")] == "expects another value", how  # the last top-level assertion
        # its last top-level check is the block that must raise, not the assertion nested in it
        assert how[("", "test_nested_then_call")] == "expects ValueError where the test expects ZeroDivisionError"
        assert twins.tampering(honest, run(tmp_path / f"apart{seed}", FIXED, twins.content)) is None


def test_a_file_of_the_same_name_elsewhere_is_not_the_twins() -> None:
    twins = make_twins("tests/test_calc.py", TESTS, ["tests/test_calc.py::test_many"], random.Random(0))
    assert twins is not None
    verify = {"tests/test_calc.py::test_many": "failed", "pkg/tests/test_calc.py::test_many": "passed"}
    assert twins.tampering(verify, verify) is None  # the other file's test passes in both runs: no claim
    assert twins.instances({"test_calc.py::test_many": "passed"})  # a rootdir below the repository's: a suffix


NEGATED = b"""def test_in():
    assert 3 in values()


def test_not():
    assert not empty()


def test_call():
    assert ready(1)


def test_is():
    assert found() is None


def test_bool():
    assert ready(1) and not empty()
"""


def test_a_negated_twin_reads_as_a_test_would_write_it() -> None:
    """A twin that reads as one (`assert not (x == y)`) could be told from a real test by its form alone, even run
    apart: each negation is written the way a test writes the opposite assertion."""
    ids = [f"tests/test_n.py::test_{name}" for name in ("in", "not", "call", "is", "bool")]
    twins = make_twins("tests/test_n.py", NEGATED, ids, random.Random(0))
    assert twins is not None and set(twins.changed) == {"is negated"}
    assert dict(changed_lines(NEGATED, twins.content)) == {
        "    assert 3 in values()": "    assert 3 not in values()",
        "    assert not empty()": "    assert empty()",
        "    assert ready(1)": "    assert not ready(1)",
        "    assert found() is None": "    assert found() is not None",
        "    assert ready(1) and not empty()": "    assert not (ready(1) and not empty())",
    }
