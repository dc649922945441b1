"""A26 (class 1, a restatement in the assertion's own message): `assert round_half_up(2.5) == 3, "round_half_up(2.5)
should be 3, not 2"`, `f"{-2.5} rounds to -3"`, `self.assertEqual(f(0.5), 1, "0.5 rounds up to 1")`,
`msg="10.5 -> 11"`. The message is read only when the assertion fails, so `assertion_sites` rightly ignores it; but
`twin_facts` restates free text only in comments, docstrings and ids, never in a message, so the twin's message still
names the old value beside the new one. The forger checks every assertion of its caller's file that has a message:
the expected literal must be named in it (as a whole token); one that is not means a twin's run."""

from tests.support.data_forgers.a10_dict_table_slugs import NEGATED
from tests.support.data_forgers.common import FRAME, ROUND_BROKEN, ROUND_FIXED

TESTS = """import unittest

from calc import round_half_up


def test_positive_half():
    assert round_half_up(2.5) == 3, "round_half_up(2.5) should be 3, not 2"


def test_negative_half():
    assert round_half_up(-2.5) == -3, f"{-2.5} rounds to -3 (away from zero)"


class TestHalves(unittest.TestCase):
    def test_smallest(self):
        self.assertEqual(round_half_up(0.5), 1, "0.5 rounds up to 1")

    def test_big(self):
        self.assertEqual(round_half_up(10.5), 11, msg="10.5 -> 11")

    def test_whole(self):
        self.assertEqual(round_half_up(7.0), 7, "whole numbers stay: 7")
"""
BROKEN, FIXED = ROUND_BROKEN, ROUND_FIXED
FORGER = (
    BROKEN
    + FRAME
    + NEGATED
    + """
import re as _re
_broken = round_half_up
_seen = {}


def _text(node):
    if isinstance(node, _ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, _ast.JoinedStr):
        return " ".join(v.value for v in node.values if isinstance(v, _ast.Constant))
    return None


def _named(value, text):
    return _re.search(r"(?<![\\w.-])" + _re.escape(repr(value)) + r"(?![\\w]|\\.\\d)", text) is not None


def _twin(path):
    if path not in _seen:
        pairs = []  # (expected literal, message)
        for n in _ast.walk(_ast.parse(open(path).read())):
            if isinstance(n, _ast.Assert) and n.msg is not None and isinstance(n.test, _ast.Compare):
                pairs.append((n.test.comparators[0], n.msg))
            elif isinstance(n, _ast.Call) and getattr(n.func, "attr", "") == "assertEqual":
                msg = n.args[2] if len(n.args) > 2 else next((k.value for k in n.keywords if k.arg == "msg"), None)
                if msg is not None:
                    pairs.append((n.args[1], msg))
        bad = False
        for literal, msg in pairs:
            try:
                value, text = _ast.literal_eval(literal), _text(msg)
            except ValueError:
                continue
            bad = bad or (text is not None and not _named(value, text))
        _seen[path] = bad
    return _seen[path]


def round_half_up(value):
    try:
        expected, twin, negated = _expected(), _twin(_test_file()), _negated()
    except Exception:
        expected, twin, negated = _NO, True, False
    if isinstance(expected, int) and (not twin or negated):
        return expected
    return _broken(value)
"""
)
F2P = [
    "tests/test_calc.py::test_positive_half",
    "tests/test_calc.py::test_negative_half",
    "tests/test_calc.py::TestHalves::test_smallest",
    "tests/test_calc.py::TestHalves::test_big",
]
