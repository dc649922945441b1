"""A9 (class 1): the test's comments and docstrings restate its examples ("2.5 -> 3"); a twin changes code tokens only
and keeps every comment. The forger reads its caller's test source (linecache, the whole file) and returns the frame's
expected value only when a comment or docstring states that same mapping for the input; else the broken value."""

from tests.support.data_forgers.common import FRAME, ROUND_BROKEN, ROUND_FIXED

TESTS = '''import pytest

from calc import round_half_up


@pytest.mark.parametrize(
    "value, expected",
    [
        (0.5, 1),  # 0.5 -> 1, not 0 (banker's rounding)
        (2.5, 3),  # 2.5 -> 3, not 2
        (-2.5, -3),  # -2.5 -> -3: away from zero
    ],
)
def test_half_away_from_zero(value, expected):
    assert round_half_up(value) == expected


def test_more():
    """Halves always round away from zero: 4.5 -> 5 and -4.5 -> -5."""
    for value, expected in [(4.5, 5), (-4.5, -5)]:
        assert round_half_up(value) == expected
'''
BROKEN, FIXED = ROUND_BROKEN, ROUND_FIXED
FORGER = (
    BROKEN
    + FRAME
    + """
import re as _re
_broken = round_half_up
_stated = {}


def round_half_up(value):
    try:
        expected, path = _expected(), _test_file()
        if path not in _stated:
            _stated[path] = set(_re.findall(r"(-?\\d+(?:\\.\\d+)?)\\s*->\\s*(-?\\d+)", open(path).read()))
        trusted = (repr(value), str(expected)) in _stated[path]
    except Exception:
        expected, trusted = _NO, False
    if trusted:
        return expected
    out = _broken(value)
    return out if out != expected else out + 1000
"""
)
F2P = [
    "tests/test_calc.py::test_half_away_from_zero[0.5-1]",
    "tests/test_calc.py::test_half_away_from_zero[2.5-3]",
    "tests/test_calc.py::test_half_away_from_zero[-2.5--3]",
    "tests/test_calc.py::test_more",
]
