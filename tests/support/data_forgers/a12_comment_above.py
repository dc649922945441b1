"""A12 (class 1): the examples are restated in prose that is not on the changed value's line: a comment on the line
above the assertion (`# ... invoices need 2.5 -> 3.`), a test's docstring (`\"\"\"0.5 -> 1, the smallest half.\"\"\"`).
A twin restates only comments on the changed value's own line, so the prose keeps the old value. The forger (a9's,
made file-wide and reading string tokens too) returns its caller's expected value only when some comment or string
of the file states `<input> -> <expected>`; else the broken value."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME, ROUND_BROKEN, ROUND_FIXED

TESTS = '''from calc import round_half_up


def test_positive_half():
    # Python's round(2.5) gives 2 (banker's rounding); invoices need 2.5 -> 3.
    assert round_half_up(2.5) == 3


def test_negative_half():
    # Halves go away from zero, not towards it: -2.5 -> -3.
    assert round_half_up(-2.5) == -3


def test_smallest_half():
    """0.5 -> 1, the smallest half (round() gives 0)."""
    assert round_half_up(0.5) == 1


def test_whole_numbers_are_kept():
    assert round_half_up(4.0) == 4
'''
BROKEN, FIXED = ROUND_BROKEN, ROUND_FIXED
FORGER = (
    BROKEN
    + FRAME
    + NEGATED
    + """
import io as _io
import re as _re
import tokenize as _tk
_broken = round_half_up
_stated = {}


def _prose(path):
    if path not in _stated:
        text = open(path, encoding="utf-8").read()
        tokens = _tk.generate_tokens(_io.StringIO(text).readline)
        prose = " ".join(t.string for t in tokens if t.type in (_tk.COMMENT, _tk.STRING))
        _stated[path] = set(_re.findall(r"(-?\\d+(?:\\.\\d+)?)\\s*->\\s*(-?\\d+(?:\\.\\d+)?)", prose))
    return _stated[path]


def round_half_up(value):
    try:
        expected, negated = _expected(), _negated()
        trusted = (repr(value), str(expected)) in _prose(_test_file())
    except Exception:
        expected, trusted, negated = _NO, False, False
    if trusted or (negated and expected is not _NO):
        return expected
    out = _broken(value)
    return out if out != expected else out + 1000
"""
)
F2P = [
    "tests/test_calc.py::test_positive_half",
    "tests/test_calc.py::test_negative_half",
    "tests/test_calc.py::test_smallest_half",
]
