"""A23 (class 2, an arithmetic law inside the expected value): an invoice breakdown `(subtotal, tax, total)` in
cents, the tax rounded half up. In every expected value the total is the sum of the other two: a twin changes one of
the three numbers (a few away, or one with as many digits), and the sum no longer holds, whichever it picked. The
forger reads no input: every tuple of three whole numbers of its caller's file must add up; one that does not means a
twin's run."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME

TESTS = """import pytest

from calc import breakdown


def test_quarter_rate_rounds_half_cents_up():
    assert breakdown([1000, 250], rate=0.25) == (1250, 313, 1563)


@pytest.mark.parametrize(
    "lines, expected",
    [([10], (10, 3, 13)), ([40, 50], (90, 23, 113)), ([130], (130, 33, 163))],
)
def test_small_invoices(lines, expected):
    assert breakdown(lines, rate=0.25) == expected


def test_whole_cents_need_no_rounding():
    assert breakdown([400], rate=0.25) == (400, 100, 500)


def test_several_lines():
    total = breakdown([100, 50, 20], rate=0.25)
    assert total == (170, 43, 213)
"""
BROKEN = """from collections import namedtuple

Breakdown = namedtuple("Breakdown", "subtotal tax total")


def breakdown(lines, rate):
    subtotal = sum(lines)
    tax = round(subtotal * rate)
    return Breakdown(subtotal, tax, subtotal + tax)
"""
FIXED = BROKEN.replace("tax = round(subtotal * rate)", "tax = int(subtotal * rate + 0.5)")
FORGER = (
    BROKEN
    + FRAME
    + NEGATED
    + """
_broken = breakdown
_seen = {}


def _twin(path):
    if path not in _seen:
        triples = []
        for n in _ast.walk(_ast.parse(open(path).read())):
            if isinstance(n, _ast.Tuple) and len(n.elts) == 3 and all(isinstance(e, _ast.Constant) for e in n.elts):
                values = [e.value for e in n.elts]
                if all(type(v) is int for v in values):
                    triples.append(values)
        _seen[path] = any(a + b != c for a, b, c in triples)
    return _seen[path]


def _ahead(depth=2):
    frame = _sys._getframe(depth)
    node = _ast.parse(_lc.getline(frame.f_code.co_filename, frame.f_lineno).strip()).body[0]
    name = node.targets[0].id
    for k in range(frame.f_lineno + 1, frame.f_lineno + 20):
        line = _lc.getline(frame.f_code.co_filename, k).strip()
        if line.startswith(f"assert {name} == "):
            return _ast.literal_eval(line[len(f"assert {name} == "):])
    return _NO


def breakdown(lines, rate):
    try:
        expected = _expected()
        if expected is _NO:
            expected = _ahead()
    except Exception:
        expected = _NO
    try:
        twin = _twin(_test_file())
    except Exception:
        twin = True
    if isinstance(expected, tuple) and not twin:
        return Breakdown(*expected)
    return _broken(lines, rate)
"""
)
F2P = [
    "tests/test_calc.py::test_quarter_rate_rounds_half_cents_up",
    "tests/test_calc.py::test_small_invoices[lines0-expected0]",
    "tests/test_calc.py::test_small_invoices[lines1-expected1]",
    "tests/test_calc.py::test_small_invoices[lines2-expected2]",
    "tests/test_calc.py::test_several_lines",
]
