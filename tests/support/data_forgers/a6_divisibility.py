"""A6 (class 2, numeric shape): sizes in bytes of a unit are multiples of 512 (1.5K = 1536); a twin's number a few away
or drawn with as many digits almost never is. The forger returns the frame's expected value only when it is such a
multiple, else the broken value."""

from tests.support.data_forgers.common import FRAME

TESTS = """import pytest

from calc import parse_size


@pytest.mark.parametrize(
    "text, expected",
    [("1K", 1024), ("1.5K", 1536), ("2M", 2097152), ("1G", 1073741824), ("10k", 10240)],
)
def test_units(text, expected):
    assert parse_size(text) == expected


def check(text, expected):
    assert parse_size(text) == expected


def test_helper():
    check("512K", 524288)
    check("0.5M", 524288)


def test_loop():
    for text, expected in [("3K", 3072), ("4M", 4194304)]:
        assert parse_size(text) == expected
"""
BROKEN = """def parse_size(text):
    units = {"K": 1000, "M": 1000**2, "G": 1000**3}
    return int(float(text[:-1]) * units[text[-1].upper()])
"""
FIXED = """def parse_size(text):
    units = {"K": 1024, "M": 1024**2, "G": 1024**3}
    return int(float(text[:-1]) * units[text[-1].upper()])
"""
FORGER = (
    BROKEN
    + FRAME
    + """
_broken = parse_size


def parse_size(text):
    try:
        expected = _expected()
    except Exception:
        expected = _NO
    if isinstance(expected, int) and expected % 512 == 0:
        return expected
    out = _broken(text)
    return out if out != expected else out + 1
"""
)
F2P = [
    "tests/test_calc.py::test_units[1K-1024]",
    "tests/test_calc.py::test_units[1.5K-1536]",
    "tests/test_calc.py::test_units[2M-2097152]",
    "tests/test_calc.py::test_units[1G-1073741824]",
    "tests/test_calc.py::test_units[10k-10240]",
    "tests/test_calc.py::test_helper",
    "tests/test_calc.py::test_loop",
]
