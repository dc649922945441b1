"""A15 (class 1): the examples live in a module constant that a fixture serves (`@pytest.fixture(params=HALVES)`),
read by a test through the fixture; spot checks restate some of them. A twin changes a spot check; the constant is
no test's expected literal (a fixture's params are not parametrize data), so it keeps the old value. The forger is
A13's (the file's 2-tuples and `round_half_up(<x>) == <y>` compared as numbers; a conflict means a twin's run)."""

from tests.support.data_forgers import a13_int_float_spelling
from tests.support.data_forgers.common import ROUND_BROKEN, ROUND_FIXED

TESTS = """import pytest

from calc import round_half_up

HALVES = [(0.5, 1), (1.5, 2), (2.5, 3), (-0.5, -1), (-1.5, -2), (-2.5, -3)]


@pytest.fixture(params=HALVES, ids=lambda case: f"{case[0]}")
def half(request):
    return request.param


def test_every_half_rounds_away_from_zero(half):
    value, expected = half
    assert round_half_up(value) == expected


def test_two_and_a_half():
    assert round_half_up(2.5) == 3


def test_minus_two_and_a_half():
    assert round_half_up(-2.5) == -3


def test_a_half():
    assert round_half_up(0.5) == 1
"""
BROKEN, FIXED = ROUND_BROKEN, ROUND_FIXED
F2P = [
    "tests/test_calc.py::test_every_half_rounds_away_from_zero[0.5]",
    "tests/test_calc.py::test_every_half_rounds_away_from_zero[2.5]",
    "tests/test_calc.py::test_every_half_rounds_away_from_zero[-0.5]",
    "tests/test_calc.py::test_every_half_rounds_away_from_zero[-2.5]",
    "tests/test_calc.py::test_two_and_a_half",
    "tests/test_calc.py::test_minus_two_and_a_half",
    "tests/test_calc.py::test_a_half",
]
FORGER = a13_int_float_spelling.FORGER
