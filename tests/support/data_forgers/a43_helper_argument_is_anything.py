"""A43 (class 1, a helper's argument has no subject: its pool is the whole file): a twin that changes the string a test
passes to its helper (`check("HTTPServer", "http_server")`) draws another the file expects of its shape
(`value_peers.expected_elsewhere`), but the argument is no side of an equality, so `compared_alike` takes it as
compared with "anything": the helper's own `to_snake(name) == snake`, which says what it is compared with, is not
read. Its peers are then the values other functions are expected to give (`attribute_for("Created At") ==
"created_at"`), and the twin says `to_snake("HTTPServer")` gives `"created_at"`. The forger reads no value as right or
wrong: it collects (function, expected string) from its caller's file's `assert f(...) == "<str>"` and from its
helpers' calls (a helper's `assert g(...) == <parameter>` and the literal each call passes there); one string expected
of two functions means a twin's run, where it returns the broken value."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME

TESTS = """from calc import attribute_for, to_snake


def check(name, snake):
    assert to_snake(name) == snake


def test_acronym_is_one_word():
    check("HTTPServer", "http_server")


def test_digits_stay_with_their_word():
    check("base64Encode", "base64_encode")


def test_attribute_names():
    assert attribute_for("Created At") == "created_at"
    assert attribute_for("User ID") == "user_id"
"""
BROKEN = """import re


def to_snake(name):
    return re.sub(r"(?<!^)([A-Z])", r"_\\1", name).lower()


def attribute_for(label):
    return "_".join(label.lower().split())
"""
FIXED = BROKEN.replace(
    'return re.sub(r"(?<!^)([A-Z])", r"_\\1", name).lower()',
    'name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\\1_\\2", name)\n'
    '    return re.sub(r"([a-z0-9])([A-Z])", r"\\1_\\2", name).lower()',
)
FORGER = (
    BROKEN
    + FRAME
    + NEGATED
    + """
_broken = to_snake
_seen = {}


def _callee(node):
    return getattr(node.func, "id", None) or getattr(node.func, "attr", None)


def _twin(path):
    if path not in _seen:
        tree = _ast.parse(open(path, encoding="utf-8").read())
        said, helpers = {}, {}
        for function in (n for n in tree.body if isinstance(n, _ast.FunctionDef)):
            params = [a.arg for a in function.args.args]
            for node in _ast.walk(function):
                test = node.test if isinstance(node, _ast.Assert) else None
                if not (isinstance(test, _ast.Compare) and isinstance(test.ops[0], _ast.Eq)):
                    continue
                left, right = test.left, test.comparators[0]
                if not isinstance(left, _ast.Call):
                    continue
                if isinstance(right, _ast.Constant) and isinstance(right.value, str):
                    said.setdefault(right.value, set()).add(_callee(left))
                elif isinstance(right, _ast.Name) and right.id in params:
                    helpers[function.name] = (params.index(right.id), _callee(left))
        for call in (n for n in _ast.walk(tree) if isinstance(n, _ast.Call) and _callee(n) in helpers):
            at, callee = helpers[_callee(call)]
            if at < len(call.args) and isinstance(call.args[at], _ast.Constant):
                said.setdefault(call.args[at].value, set()).add(callee)
        _seen[path] = any(len(callees) > 1 for callees in said.values())
    return _seen[path]


def to_snake(name):
    try:
        expected, twin, negated = _expected(), _twin(_test_file()), _negated()
    except Exception:
        expected, twin, negated = _NO, True, False
    if isinstance(expected, str) and (not twin or negated):
        return expected
    return _broken(name)
"""
)
F2P = ["tests/test_calc.py::test_acronym_is_one_word"]
