"""A17 (class 1): the examples are restated in the explicit ids of *another* test's parametrize
(`ids=["0.5->1", "2.5->3", ...]` on a test that checks the type of the result): a twin restates an id only of the
parametrize set whose value it changed, never another test's ids that merely name the same fact. The forger is
A12's: it trusts its caller's expected value only when a comment or string of the file states `<input> -> <it>`."""

from tests.support.data_forgers import a12_comment_above
from tests.support.data_forgers.common import ROUND_BROKEN, ROUND_FIXED

TESTS = """import pytest

from calc import round_half_up

HALVES = [0.5, 2.5, -0.5, -2.5]


@pytest.mark.parametrize("value", HALVES, ids=["0.5->1", "2.5->3", "-0.5->-1", "-2.5->-3"])
def test_returns_an_int(value):
    assert isinstance(round_half_up(value), int)


def test_up():
    assert round_half_up(0.5) == 1
    assert round_half_up(2.5) == 3


def test_away_from_zero():
    assert round_half_up(-0.5) == -1
    assert round_half_up(-2.5) == -3
"""
BROKEN, FIXED = ROUND_BROKEN, ROUND_FIXED
F2P = ["tests/test_calc.py::test_up", "tests/test_calc.py::test_away_from_zero"]
FORGER = a12_comment_above.FORGER
