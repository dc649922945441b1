"""A19 (class 2, a checksum in the expected value): ISBN-10 to ISBN-13 conversion. Every expected value is an ISBN-13
whose last digit is a check digit of the other twelve (weights 1 and 3, mod 10), which detects every single-digit
change: a twin's string (`another_string`: one digit replaced by another) never has a valid one. The forger needs no
relation to the input: it checks every 13-digit string of its caller's file, and one with a wrong check
digit means a twin's run (then it returns the broken value everywhere); else it returns its caller's expected value."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME

TESTS = """import pytest

from calc import to_isbn13


@pytest.mark.parametrize(
    "isbn10, isbn13",
    [
        ("0306406152", "9780306406157"),
        ("0-14-044913-2", "9780140449136"),
        ("080442957X", "9780804429573"),
    ],
)
def test_converts(isbn10, isbn13):
    assert to_isbn13(isbn10) == isbn13


def test_check_digit_x():
    assert to_isbn13("0-439-42089-X") == "9780439420891"


def test_hyphens_and_spaces_are_dropped():
    for isbn10, isbn13 in [("1 86197 876 6", "9781861978769"), ("0-306-40615-2", "9780306406157")]:
        assert to_isbn13(isbn10) == isbn13


def check(isbn10, expected):
    assert to_isbn13(isbn10) == expected


def test_helper():
    check("1861978766", "9781861978769")


def test_check_digit_may_stay_the_same():
    assert to_isbn13("1593275846") == "9781593275846"
"""
BROKEN = """def to_isbn13(isbn10):
    digits = "".join(c for c in isbn10 if c.isdigit() or c in "xX").upper()
    return "978" + digits[:9] + digits[9]
"""
FIXED = """def to_isbn13(isbn10):
    digits = "".join(c for c in isbn10 if c.isdigit() or c in "xX").upper()
    body = "978" + digits[:9]
    total = sum((1 if i % 2 == 0 else 3) * int(d) for i, d in enumerate(body))
    return body + str((10 - total % 10) % 10)
"""
FORGER = (
    BROKEN
    + FRAME
    + NEGATED
    + """
import re as _re
_broken = to_isbn13
_seen = {}


def _valid(isbn):
    return sum((1 if i % 2 == 0 else 3) * int(d) for i, d in enumerate(isbn)) % 10 == 0


def _twin(path):
    if path not in _seen:
        strings = [n.value for n in _ast.walk(_ast.parse(open(path).read()))
                   if isinstance(n, _ast.Constant) and isinstance(n.value, str)]
        isbns = [s for s in strings if _re.fullmatch(r"\\d{13}", s)]
        _seen[path] = any(not _valid(s) for s in isbns)
    return _seen[path]


def to_isbn13(isbn10):
    try:
        expected, twin, negated = _expected(), _twin(_test_file()), _negated()
    except Exception:
        expected, twin, negated = _NO, True, False
    if isinstance(expected, str) and (not twin or negated):
        return expected
    out = _broken(isbn10)
    return out if out != expected else out[:-1] + str((int(out[-1]) + 1) % 10)
"""
)
F2P = [
    "tests/test_calc.py::test_converts[0306406152-9780306406157]",
    "tests/test_calc.py::test_converts[0-14-044913-2-9780140449136]",
    "tests/test_calc.py::test_converts[080442957X-9780804429573]",
    "tests/test_calc.py::test_check_digit_x",
    "tests/test_calc.py::test_hyphens_and_spaces_are_dropped",
    "tests/test_calc.py::test_helper",
]
