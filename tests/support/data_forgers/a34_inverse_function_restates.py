"""A34 (class 1, a fact restated by its inverse): a test file of a pair of inverse functions states each example
both ways: `snake_to_camel("http_response_code") == "httpResponseCode"` in one test, `camel_to_snake("httpResponseCode")
== "http_response_code"` in another. `twin_facts` restates a changed fact only where the same function's row states
it (the same inputs, the value at its place): the inverse call is another row (its input is the changed value), so a
twin that swaps `"httpResponseCode"` for `"maxRetryCount"` leaves the inverse saying otherwise. The forger reads no
value as right or wrong: for every `snake_to_camel(a) == b` of its caller's file, a `camel_to_snake(b) == c` or a
`camel_to_snake(x) == a` that disagrees means a twin's run."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME

TESTS = """from calc import camel_to_snake, snake_to_camel


def test_snake_to_camel():
    assert snake_to_camel("user_id") == "userId"
    assert snake_to_camel("http_response_code") == "httpResponseCode"


def test_three_words():
    assert snake_to_camel("max_retry_count") == "maxRetryCount"


def test_camel_to_snake():
    assert camel_to_snake("userId") == "user_id"
    assert camel_to_snake("httpResponseCode") == "http_response_code"
    assert camel_to_snake("maxRetryCount") == "max_retry_count"
"""
BROKEN = """import re


def snake_to_camel(name):
    head, _, rest = name.partition("_")
    return head + rest[:1].upper() + rest[1:]


def camel_to_snake(name):
    return re.sub(r"(?<!^)([A-Z])", r"_\\1", name).lower()
"""
FIXED = BROKEN.replace(
    """    head, _, rest = name.partition("_")
    return head + rest[:1].upper() + rest[1:]""",
    """    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)""",
)
FORGER = (
    BROKEN
    + FRAME
    + NEGATED
    + """
_broken = snake_to_camel
_seen = {}


def _twin(path):
    if path not in _seen:
        facts = {"snake_to_camel": {}, "camel_to_snake": {}}
        for n in _ast.walk(_ast.parse(open(path).read())):
            if isinstance(n, _ast.Compare) and isinstance(n.left, _ast.Call) and n.left.args:
                name, arg, value = getattr(n.left.func, "id", ""), n.left.args[0], n.comparators[0]
                if name in facts and isinstance(arg, _ast.Constant) and isinstance(value, _ast.Constant):
                    facts[name][arg.value] = value.value
        forth, back = facts["snake_to_camel"], facts["camel_to_snake"]
        inverse = {value: key for key, value in back.items()}
        _seen[path] = any(back.get(b, a) != a or inverse.get(a, b) != b for a, b in forth.items())
    return _seen[path]


def snake_to_camel(name):
    try:
        expected, twin, negated = _expected(), _twin(_test_file()), _negated()
    except Exception:
        expected, twin, negated = _NO, True, False
    if isinstance(expected, str) and (not twin or negated):
        return expected
    return _broken(name)
"""
)
F2P = ["tests/test_calc.py::test_snake_to_camel", "tests/test_calc.py::test_three_words"]
