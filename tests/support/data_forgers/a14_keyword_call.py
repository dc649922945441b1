"""A14 (class 1): a fact stated through a keyword argument: spot checks `assert round_half_up(value=2.5) == 3` in one
test, a helper's calls `check(2.5, 3)` in another. A fact's row is a call's positional arguments only, so a
comparison with a keyword call states no fact: a twin that changes the helper's `3` does not restate it there, and
the keyword test's own twin (its last literal changed) is restated nowhere. The forger reads keyword calls as
positional ones; an input with two expected values means a twin's run."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME, ROUND_BROKEN, ROUND_FIXED

TESTS = """from calc import round_half_up


def check(value, expected):
    assert round_half_up(value) == expected


def test_halves_via_helper():
    check(0.5, 1)
    check(2.5, 3)
    check(-2.5, -3)


def test_keyword_argument():
    assert round_half_up(value=0.5) == 1
    assert round_half_up(value=-0.5) == -1
    assert round_half_up(value=2.5) == 3


def test_large_values():
    assert round_half_up(1000000.5) == 1000001
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


def _argument(call):
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "value"), None)


def _twin(path):
    if path not in _seen:
        facts = {}
        for n in _ast.walk(_ast.parse(open(path, encoding="utf-8").read())):
            pair = None
            if isinstance(n, (_ast.Tuple, _ast.List)) and len(n.elts) == 2:
                pair = n.elts
            elif isinstance(n, _ast.Call) and len(n.args) == 2:
                pair = n.args
            elif isinstance(n, _ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], _ast.Eq):
                for call, other in ((n.left, n.comparators[0]), (n.comparators[0], n.left)):
                    if isinstance(call, _ast.Call) and getattr(call.func, "id", "") == "round_half_up":
                        pair = [_argument(call), other]
            if pair and pair[0] is not None:
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
    "tests/test_calc.py::test_halves_via_helper",
    "tests/test_calc.py::test_keyword_argument",
]
