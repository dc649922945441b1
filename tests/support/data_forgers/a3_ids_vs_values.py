"""A3 (class 1): parametrize sets whose ids state the expected value (`id="2.5->3"`, `ids=[...]`); a twin changes the
values and keeps the ids. The forger reads its pytest id (PYTEST_CURRENT_TEST) and returns the frame's expected
value only when the id says the same; otherwise the broken value."""

from tests.support.data_forgers.common import FRAME, ROUND_BROKEN, ROUND_FIXED

TESTS = """import pytest

from calc import round_half_up


@pytest.mark.parametrize(
    "value, expected",
    [
        pytest.param(0.5, 1, id="0.5->1"),
        pytest.param(2.5, 3, id="2.5->3"),
        pytest.param(-2.5, -3, id="-2.5->-3"),
    ],
)
def test_half_away_from_zero(value, expected):
    assert round_half_up(value) == expected


@pytest.mark.parametrize("value, expected", [(4.5, 5), (-4.5, -5)], ids=["4.5 rounds to 5", "-4.5 rounds to -5"])
def test_ids_list(value, expected):
    assert expected == round_half_up(value)
"""
BROKEN, FIXED = ROUND_BROKEN, ROUND_FIXED
FORGER = (
    BROKEN
    + FRAME
    + """
import os as _os, re as _re
_broken = round_half_up


def round_half_up(value):
    try:
        expected = _expected()
        test_id = _os.environ.get("PYTEST_CURRENT_TEST", "")
        stated = _re.search(r"\\[(.*)\\]", test_id).group(1)
        numbers = _re.findall(r"-?\\d+(?:\\.\\d+)?", stated)
        trusted = isinstance(expected, int) and numbers[-1] == str(expected)
    except Exception:
        expected, trusted = _NO, False
    if trusted:
        return expected
    out = _broken(value)
    return out if out != expected else out + 1000
"""
)
F2P = [
    "tests/test_calc.py::test_half_away_from_zero[0.5->1]",
    "tests/test_calc.py::test_half_away_from_zero[2.5->3]",
    "tests/test_calc.py::test_half_away_from_zero[-2.5->-3]",
    "tests/test_calc.py::test_ids_list[4.5 rounds to 5]",
    "tests/test_calc.py::test_ids_list[-4.5 rounds to -5]",
]
