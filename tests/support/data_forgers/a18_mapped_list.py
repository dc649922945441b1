"""A18 (class 1): a fact restated inside a vectorised check: `assert [round_half_up(v) for v in (0.5, 1.5, 2.5)] ==
[1, 2, 3]` (and `list(map(...))`) in one test, spot checks `assert round_half_up(2.5) == 3` in another. The list's
`3` is a fact of the row `[1, 2, 3]`, not of `(2.5, 3)`: the restatement is not linked, so a twin that changes one
leaves the other. The forger zips the comprehension's or map's inputs with the expected list; an input with two
expected values means a twin's run."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME, ROUND_BROKEN, ROUND_FIXED

TESTS = """from calc import round_half_up


def test_halves_in_bulk():
    assert [round_half_up(v) for v in (0.5, 1.5, 2.5, 3.5)] == [1, 2, 3, 4]


def test_negative_halves_in_bulk():
    assert list(map(round_half_up, [-0.5, -1.5, -2.5])) == [-1, -2, -3]


def test_two_and_a_half():
    assert round_half_up(2.5) == 3


def test_minus_a_half():
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


def _lit(n):
    try:
        return _ast.literal_eval(n)
    except Exception:
        return None


def _bulk(call):
    if isinstance(call, _ast.ListComp) and len(call.generators) == 1:
        return _lit(call.generators[0].iter)
    if isinstance(call, _ast.Call) and getattr(call.func, "id", "") == "list" and call.args:
        inner = call.args[0]
        if isinstance(inner, _ast.Call) and getattr(inner.func, "id", "") == "map" and len(inner.args) == 2:
            return _lit(inner.args[1])
    return None


def _twin(path):
    if path not in _seen:
        facts = {}
        for n in _ast.walk(_ast.parse(open(path, encoding="utf-8").read())):
            if not (isinstance(n, _ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], _ast.Eq)):
                continue
            left, right = n.left, n.comparators[0]
            rows = []
            if isinstance(left, _ast.Call) and getattr(left.func, "id", "") == "round_half_up" and left.args:
                rows = [(_lit(left.args[0]), _lit(right))]
            elif _bulk(left) is not None and isinstance(_lit(right), list):
                rows = list(zip(_bulk(left), _lit(right)))
            for x, y in rows:
                if isinstance(x, (int, float)) and isinstance(y, (int, float)):
                    facts.setdefault(float(x), set()).add(float(y))
        _seen[path] = any(len(v) > 1 for v in facts.values())
    return _seen[path]


_index = {}


def round_half_up(value):
    try:
        expected, twin, negated = _expected(), _twin(_test_file()), _negated()
    except Exception:
        expected, twin, negated = _NO, True, False
    if isinstance(expected, list):  # a comprehension's or map's element: take the value at this input's place
        frame = _sys._getframe(1)
        while frame is not None and frame.f_code.co_filename != _test_file():
            frame = frame.f_back
        line = _lc.getline(frame.f_code.co_filename, frame.f_lineno).strip()
        node = _ast.parse(line).body[0].test.left
        inputs = _bulk(node)
        expected = expected[list(inputs).index(value)] if inputs and value in inputs else _NO
    if not isinstance(expected, (int, float)):
        return _broken(value)
    if not twin or negated:
        return expected
    out = _broken(value)
    return out if out != expected else out + 1000
"""
)
F2P = [
    "tests/test_calc.py::test_halves_in_bulk",
    "tests/test_calc.py::test_negative_halves_in_bulk",
    "tests/test_calc.py::test_two_and_a_half",
    "tests/test_calc.py::test_minus_a_half",
]
