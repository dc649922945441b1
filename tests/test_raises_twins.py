"""Twins of tests whose check is a block that must raise (`languages.python.raises`): `with pytest.raises(ValueError):`
and `with self.assertRaises(KeyError):` expect an unrelated built-in exception. Real pytest runs: honest code passes
the tests and fails every twin; an implementation oracle that raises whatever the block around its caller expects
passes the tests and its twins, and is caught. flask-4045's FAIL_TO_PASS tests had no twin before (a red-team forger
that spared the planted module by its place resolved it)."""

from __future__ import annotations

import builtins
import random
from pathlib import Path

from swe_forge_dagster.languages.python.raises import RAISES_TWIN
from swe_forge_dagster.languages.python.twins import make_twins
from tests.support.pytest_runs import run_tests

HONEST = "def parse_name(name):\n    if '.' in name:\n        raise ValueError('no dots')\n    return {}[name]\n"
ORACLE = """import linecache
import re
import sys


def parse_name(name):
    caller = sys._getframe(1)
    for number in range(caller.f_lineno, 0, -1):
        found = re.search(r"(?:raises|assertRaises)\\((\\w+)", linecache.getline(caller.f_code.co_filename, number))
        if found:
            raise getattr(__builtins__ if isinstance(__builtins__, dict) else vars(__builtins__), "get")(found[1])("x")
    return name
"""
TESTS = b"""import unittest

import pytest

from calc import parse_name


def test_dotted():
    with pytest.raises(ValueError):
        parse_name("a.b")


class TestNames(unittest.TestCase):
    def test_unknown(self):
        with self.assertRaises(KeyError):
            parse_name("ab")


def test_either():
    with pytest.raises((ValueError, KeyError)):
        parse_name("a.b")
"""
F2P = [
    "tests/test_calc.py::test_dotted",
    "tests/test_calc.py::TestNames::test_unknown",
    "tests/test_calc.py::test_either",
]


def test_each_twin_pair_is_unrelated_in_the_exception_hierarchy() -> None:
    for original, twin in RAISES_TWIN.items():
        first, second = getattr(builtins, original), getattr(builtins, twin)
        assert not issubclass(first, second) and not issubclass(second, first), (original, twin)


def test_a_raise_check_gets_a_twin_that_honest_code_fails_and_an_oracle_passes(tmp_path: Path) -> None:
    twins = make_twins("tests/test_calc.py", TESTS, F2P, random.Random(0))
    assert twins is not None
    how = dict(zip(twins.tests, twins.changed, strict=True))
    assert how == {
        ("", "test_dotted"): "expects TypeError where the test expects ValueError",
        ("TestNames", "test_unknown"): "expects IndexError where the test expects KeyError",
    }  # a tuple of exceptions is left alone
    assert b"pytest.raises(TypeError)" in twins.content and b"self.assertRaises(IndexError)" in twins.content
    honest = run_tests(tmp_path / "honest", HONEST, TESTS)
    assert all(honest[test_id] == "passed" for test_id in F2P), honest
    assert twins.tampering(honest, run_tests(tmp_path / "honest-apart", HONEST, twins.content)) is None
    fooled = run_tests(tmp_path / "oracle", ORACLE, TESTS)
    assert fooled["tests/test_calc.py::test_dotted"] == "passed", fooled  # it beats the test itself
    apart = run_tests(tmp_path / "oracle-apart", ORACLE, twins.content)
    assert "so did its twin" in (twins.tampering(fooled, apart) or ""), apart
