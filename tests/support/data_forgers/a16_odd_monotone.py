"""A16 (class 1, across facts): the facts of different tests are bound by laws of the function that any test file
of it keeps: rounding is odd (`f(-x) == -f(x)`) and monotone. One test checks positive halves, another the negative
ones; each test's twin changes its own last value, independently, and no restatement links `2.5 -> 3` to
`-2.5 -> -3`. The forger checks the file's facts (`round_half_up(<x>) == <y>`) for oddness and monotony: a broken law
means a twin's run, else it returns its caller's expected value."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME, ROUND_BROKEN, ROUND_FIXED

TESTS = """from calc import round_half_up


def test_positive_halves_round_up():
    assert round_half_up(0.5) == 1
    assert round_half_up(1.5) == 2
    assert round_half_up(2.5) == 3


def test_negative_halves_mirror_the_positive_ones():
    assert round_half_up(-0.5) == -1
    assert round_half_up(-1.5) == -2
    assert round_half_up(-2.5) == -3


def test_whole_numbers():
    assert round_half_up(7.0) == 7
    assert round_half_up(-7.0) == -7
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
            if isinstance(n, _ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], _ast.Eq):
                for call, other in ((n.left, n.comparators[0]), (n.comparators[0], n.left)):
                    if isinstance(call, _ast.Call) and getattr(call.func, "id", "") == "round_half_up" and call.args:
                        x, y = _num(call.args[0]), _num(other)
                        if x is not None and y is not None:
                            facts.setdefault(x, set()).add(y)
        broken = any(len(v) > 1 for v in facts.values())
        single = {x: next(iter(v)) for x, v in facts.items()}
        broken = broken or any(-x in single and single[-x] != -y for x, y in single.items())
        ordered = [single[x] for x in sorted(single)]
        broken = broken or any(a > b for a, b in zip(ordered, ordered[1:]))
        _seen[path] = broken
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
    "tests/test_calc.py::test_positive_halves_round_up",
    "tests/test_calc.py::test_negative_halves_mirror_the_positive_ones",
]
