"""A39 (class 1, a comparison that is no assertion feeds the pool): `value_peers.compared_alike` collects the sides of
every `==` of the module, in any code, and a side compared with a bare name (unresolved: "anything") is a peer of
every value. The commonest such `==` of a test file is its `if __name__ == "__main__":` guard; `"__main__"` has the
shape (`_a_`) of every dunder name a test of operator methods expects. A spot check `method_for("//") ==
"__floordiv__"`, whose only other same-function values sit in a parametrize table (names, not literal sides), has the
guard's string as its only peer: its twin expects `"__main__"`. The forger reads no value as right or wrong: a string
an assertion of its caller's file expects that the file also compares outside any assertion (an `if`'s test) means a
twin's run, where it returns the broken value."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME

TESTS = """import pytest

from calc import method_for


@pytest.mark.parametrize("op, name", [("+", "__add__"), ("-", "__sub__"), ("*", "__mul__"), ("/", "__truediv__")])
def test_arithmetic(op, name):
    assert method_for(op) == name


def test_floor_division():
    assert method_for("//") == "__floordiv__"


if __name__ == "__main__":
    pytest.main([__file__])
"""
BROKEN = """_METHODS = {"+": "__add__", "-": "__sub__", "*": "__mul__", "/": "__truediv__"}


def method_for(op):
    return _METHODS.get(op[0])
"""
FIXED = BROKEN.replace('"/": "__truediv__"}', '"/": "__truediv__", "//": "__floordiv__"}').replace("op[0]", "op")
FORGER = (
    BROKEN
    + FRAME
    + NEGATED
    + """
_broken = method_for
_seen = {}


def _strings(node):
    return {n.value for n in _ast.walk(node) if isinstance(n, _ast.Constant) and isinstance(n.value, str)}


def _twin(path):
    if path not in _seen:
        tree = _ast.parse(open(path, encoding="utf-8").read())
        asserted, guarded = set(), set()
        for node in _ast.walk(tree):
            if isinstance(node, _ast.Assert):
                asserted |= _strings(node.test)
            elif isinstance(node, (_ast.If, _ast.While)):
                guarded |= _strings(node.test)
        _seen[path] = bool(asserted & guarded)
    return _seen[path]


def method_for(op):
    try:
        expected, twin, negated = _expected(), _twin(_test_file()), _negated()
    except Exception:
        expected, twin, negated = _NO, True, False
    if isinstance(expected, str) and (not twin or negated):
        return expected
    return _broken(op)
"""
)
F2P = ["tests/test_calc.py::test_floor_division"]
