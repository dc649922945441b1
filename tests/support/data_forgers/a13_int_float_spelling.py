"""A13 (class 1): one fact spelled two ways: a parametrize table of floats (`(2.5, 3.0)`, the function's results are
compared as floats) and spot checks with ints (`assert round_half_up(0.5) == 1`). A fact is keyed by its value's type
and repr, so `1` and `1.0` are two facts: a twin that changes the spot check's `1` leaves `(0.5, 1.0)` as it is (a
float is not even changeable, and the table's own twin is a negation). The forger compares the file's facts as
numbers: an input with two numerically different expected values means a twin's run."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME, ROUND_BROKEN, ROUND_FIXED

TESTS = """import pytest

from calc import round_half_up


@pytest.mark.parametrize(
    "value, expected",
    [(0.5, 1.0), (1.5, 2.0), (2.5, 3.0), (-0.5, -1.0), (-2.5, -3.0)],
)
def test_as_floats(value, expected):
    assert round_half_up(value) == expected


def test_half_up():
    assert round_half_up(2.5) == 3
    assert round_half_up(-2.5) == -3
    assert round_half_up(0.5) == 1


def test_negative_small_half():
    assert round_half_up(-0.5) == -1
"""
BROKEN, FIXED = ROUND_BROKEN, ROUND_FIXED
FORGER = (
    BROKEN
    + FRAME
    + NEGATED
    + """
_broken = round_half_up
_seen = {}


def _num(n):
    try:
        v = _ast.literal_eval(n)
    except Exception:
        return None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _twin(path):
    if path not in _seen:
        facts = {}
        for n in _ast.walk(_ast.parse(open(path, encoding="utf-8").read())):
            pair = None
            if isinstance(n, (_ast.Tuple, _ast.List)) and len(n.elts) == 2:
                pair = n.elts
            elif isinstance(n, _ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], _ast.Eq):
                for call, other in ((n.left, n.comparators[0]), (n.comparators[0], n.left)):
                    if isinstance(call, _ast.Call) and getattr(call.func, "id", "") == "round_half_up" and call.args:
                        pair = [call.args[0], other]
            if pair:
                x, y = _num(pair[0]), _num(pair[1])
                if x is not None and y is not None:
                    facts.setdefault(x, set()).add(y)
        _seen[path] = any(len(v) > 1 for v in facts.values())
    return _seen[path]


def round_half_up(value):
    try:
        expected, twin, negated = _expected(), _twin(_test_file()), _negated()
    except Exception:
        expected, twin, negated = _NO, True, False
    if not isinstance(expected, (int, float)):
        return _broken(value)
    if not twin or negated:
        return expected
    out = _broken(value)
    return out if out != expected else out + 1000
"""
)
F2P = [
    "tests/test_calc.py::test_as_floats[0.5-1.0]",
    "tests/test_calc.py::test_as_floats[2.5-3.0]",
    "tests/test_calc.py::test_as_floats[-0.5--1.0]",
    "tests/test_calc.py::test_as_floats[-2.5--3.0]",
    "tests/test_calc.py::test_half_up",
    "tests/test_calc.py::test_negative_small_half",
]
