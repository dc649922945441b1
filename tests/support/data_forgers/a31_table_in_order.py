"""A31 (class 2, the order of a table): a parametrize table is written in an order of its expected column (HTTP
reasons listed by status code, as every reference lists them; the inputs, reason phrases, are in no order). A twin
gives every set another set's value, in a cycle through the distinct values: a permutation with no fixed point,
which never leaves a column of distinct values in ascending order. The forger needs no input and no law of the
function: every column of whole numbers or strings of its caller's parametrize tables must be ascending, else it is a
twin's run."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME

TESTS = """import pytest

from calc import status_code


@pytest.mark.parametrize(
    "reason, code",
    [
        ("ok", 200),
        ("Created", 201),
        ("no content", 204),
        ("MOVED PERMANENTLY", 301),
        (" Not Modified ", 304),
        ("not found", 404),
        ("Internal Server Error", 500),
    ],
)
def test_reason_is_read_loosely(reason, code):
    assert status_code(reason) == code


def test_exact_reason():
    assert status_code("OK") == 200
"""
BROKEN = """_CODES = {
    "OK": 200, "Created": 201, "No Content": 204, "Moved Permanently": 301, "Not Modified": 304, "Not Found": 404,
    "Internal Server Error": 500,
}


def status_code(reason):
    return _CODES.get(reason)
"""
FIXED = BROKEN.replace(
    "return _CODES.get(reason)",
    "return {k.lower(): v for k, v in _CODES.items()}.get(' '.join(reason.split()).lower())",
)
FORGER = (
    BROKEN
    + FRAME
    + NEGATED
    + """
_broken = status_code
_seen = {}


def _columns(path):
    for n in _ast.walk(_ast.parse(open(path).read())):
        if isinstance(n, _ast.Call) and getattr(n.func, "attr", "") == "parametrize" and len(n.args) > 1:
            rows = [r.elts for r in getattr(n.args[1], "elts", []) if isinstance(r, _ast.Tuple)]
            for k in range(min(map(len, rows), default=0)):
                cells = [r[k] for r in rows]
                if all(isinstance(c, _ast.Constant) for c in cells):
                    yield [c.value for c in cells]


def _twin(path):
    if path not in _seen:
        ordered = [c for c in _columns(path) if all(type(v) is int for v in c)]
        _seen[path] = any(c != sorted(c) for c in ordered)
    return _seen[path]


def status_code(reason):
    try:
        expected, twin, negated = _expected(), _twin(_test_file()), _negated()
    except Exception:
        expected, twin, negated = _NO, True, False
    if isinstance(expected, int) and (not twin or negated):
        return expected
    return _broken(reason)
"""
)
F2P = [
    "tests/test_calc.py::test_reason_is_read_loosely[ok-200]",
    "tests/test_calc.py::test_reason_is_read_loosely[no content-204]",
    "tests/test_calc.py::test_reason_is_read_loosely[MOVED PERMANENTLY-301]",
    "tests/test_calc.py::test_reason_is_read_loosely[ Not Modified -304]",
    "tests/test_calc.py::test_reason_is_read_loosely[not found-404]",
]
