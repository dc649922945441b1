"""A40 (class 1, a call's subject is its function, not its arguments): `value_peers.compared_alike` names what a value
is compared with by the called function's expression (`ast.dump(call.func)`), so every `query.get(<key>)` of a file
is one subject whatever the key: a query string's `"page"` and `"limit"` values, one shape (`9`), are each other's
peers, though no natural file states one value under two keys. (An attribute, `url.scheme`, or a subscript,
`query["page"]`, keeps its key: red team a33.) The twin of `query.get("limit") == "50"` expects `"3"`, which the
file states as the page. The forger reads no value as right or wrong: it groups its caller's file's `<x>.get("<key>")
== "<str>"` comparisons by key; one string under two keys means a twin's run, where it returns the broken value."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME

TESTS = """from calc import parse_query


def test_pairs():
    query = parse_query("user=ann&lang=en&page=3")
    assert query.get("user") == "ann"
    assert query.get("lang") == "en"
    assert query.get("page") == "3"


def test_leading_question_mark_is_dropped():
    query = parse_query("?sort=desc&limit=50")
    assert query.get("sort") == "desc"
    assert query.get("limit") == "50"


def test_missing_key():
    assert parse_query("a=1").get("b") is None
"""
BROKEN = """def parse_query(text):
    return dict(pair.partition("=")[::2] for pair in text.split("&") if pair)
"""
FIXED = """def parse_query(text):
    return dict(pair.partition("=")[::2] for pair in text.lstrip("?").split("&") if pair)
"""
FORGER = (
    BROKEN
    + FRAME
    + NEGATED
    + """
_broken = parse_query
_seen = {}


def _twin(path):
    if path not in _seen:
        keys = {}
        for n in _ast.walk(_ast.parse(open(path, encoding="utf-8").read())):
            if isinstance(n, _ast.Compare) and isinstance(n.ops[0], _ast.Eq) and isinstance(n.left, _ast.Call):
                func, args, right = n.left.func, n.left.args, n.comparators[0]
                if getattr(func, "attr", "") == "get" and args and isinstance(args[0], _ast.Constant):
                    if isinstance(right, _ast.Constant) and isinstance(right.value, str):
                        keys.setdefault(right.value, set()).add(args[0].value)
        _seen[path] = any(len(names) > 1 for names in keys.values())
    return _seen[path]


class _Query(dict):
    def get(self, key, default=None):
        try:
            expected, twin, negated = _expected(), _twin(_test_file()), _negated()
        except Exception:
            expected, twin, negated = _NO, True, False
        if isinstance(expected, str) and (not twin or negated):
            return expected
        return dict.get(self, key, default)


def parse_query(text):
    return _Query(_broken(text))
"""
)
F2P = ["tests/test_calc.py::test_leading_question_mark_is_dropped"]
