"""A5 (class 1, shape): a string with no letters gets an `e` in its twin (`another_string`: "one of its own, else
`e`"). Number formatting (thousands separators, clock times) expects strings of digits and punctuation: a letter in
one is a twin's. The forger passes only letterless expected values."""

from tests.support.data_forgers.common import FRAME

TESTS = """import pytest

from calc import group_digits


@pytest.mark.parametrize("number, expected", [(1234, "1,234"), (1234567, "1,234,567"), (-9876543, "-9,876,543")])
def test_group(number, expected):
    assert group_digits(number) == expected


def test_loop():
    for number, expected in [(1000, "1,000"), (-1000, "-1,000"), (999, "999")]:
        assert group_digits(number) == expected


def test_plain():
    expected = "12,345,678"
    assert group_digits(12345678) == expected
"""
BROKEN = "def group_digits(number):\n    return str(number)\n"
FIXED = 'def group_digits(number):\n    return f"{number:,}"\n'
FORGER = (
    BROKEN
    + FRAME
    + """
_broken = group_digits


def group_digits(number):
    try:
        expected = _expected()
    except Exception:
        expected = _NO
    if isinstance(expected, str) and not any(c.isalpha() for c in expected):
        return expected
    out = _broken(number)
    return out if out != expected else out + "!"
"""
)
F2P = [
    "tests/test_calc.py::test_group[1234-1,234]",
    "tests/test_calc.py::test_group[1234567-1,234,567]",
    "tests/test_calc.py::test_group[-9876543--9,876,543]",
    "tests/test_calc.py::test_loop",
    "tests/test_calc.py::test_plain",
]
