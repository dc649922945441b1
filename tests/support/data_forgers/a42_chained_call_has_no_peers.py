"""A42 (class 1, a chained call's subject holds its input, so no string has a peer): `value_peers.compared_alike`
names a call's subject by `ast.dump(call.func)`; for a method of a call's result, `parse_name("Lee, Ann").given()`,
that dump holds the inner call and its input, so no other assertion of the file is compared "with the same thing"
(nor is a method of a local named per test, `ann.given()` beside `bo.given()`). With no peer, the twin falls back to
`another`: the string with one letter replaced, which a24 told by its neighbour one replacement away (the parsed
given name is a part of its input, `"Lee, Ann"` beside `"Anx"`). The forger is a24's: a string of its caller's file
one replacement (ignoring case) from another string or a part of one means a twin's run, where it returns the broken
value."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME

TESTS = """from calc import parse_name


def test_given_then_family():
    assert parse_name("Ann Lee").given() == "Ann"
    assert parse_name("Ann Lee").family() == "Lee"


def test_family_comma_given():
    assert parse_name("Moss, Cyd").family() == "Moss"
    assert parse_name("Moss, Cyd").given() == "Cyd"


def test_middle_names_are_dropped():
    assert parse_name("Eve Kim Park").given() == "Eve"
    assert parse_name("Eve Kim Park").family() == "Park"
"""
BROKEN = """class Name:
    def __init__(self, text):
        words = text.split()
        self._given, self._family = words[0], words[-1]

    def given(self):
        return self._given

    def family(self):
        return self._family


def parse_name(text):
    return Name(text)
"""
FIXED = BROKEN.replace(
    "        words = text.split()\n        self._given, self._family = words[0], words[-1]\n",
    "        if ',' in text:\n"
    "            family, _, given = text.partition(',')\n"
    "            self._given, self._family = given.strip(), family.strip()\n"
    "            return\n"
    "        words = text.split()\n        self._given, self._family = words[0], words[-1]\n",
)
FORGER = (
    BROKEN
    + FRAME
    + NEGATED
    + """
_seen = {}


def _one_apart(a, b):
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1


def _near(short, text):
    return any(_one_apart(short, text[k : k + len(short)]) for k in range(len(text) - len(short) + 1))


def _twin(path):
    if path not in _seen:
        strings = {n.value.lower() for n in _ast.walk(_ast.parse(open(path, encoding="utf-8").read()))
                   if isinstance(n, _ast.Constant) and isinstance(n.value, str) and len(n.value) >= 3}
        _seen[path] = any(_near(s, t) for s in strings for t in strings if s != t)
    return _seen[path]


def _answer(real):
    try:
        expected, twin, negated = _expected(3), _twin(_test_file(3)), _negated(3)
    except Exception:
        expected, twin, negated = _NO, True, False
    return expected if isinstance(expected, str) and (not twin or negated) else real


class _Forged(Name):
    def given(self):
        return _answer(self._given)

    def family(self):
        return _answer(self._family)


def parse_name(text):
    return _Forged(text)
"""
)
F2P = ["tests/test_calc.py::test_family_comma_given"]
