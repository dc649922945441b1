"""A4 (class 1, shape): a twin's string has one more letter, always lower case (`another_string` draws from
`text.lower()`); an all-capitals expected value (CONSTANT_CASE) with a lower-case letter is a twin's. The forger looks
at nothing but the value's shape."""

from tests.support.data_forgers.common import FRAME

TESTS = """import pytest

from calc import constant_case


@pytest.mark.parametrize(
    "name, expected",
    [("fooBar", "FOO_BAR"), ("HTTPServer", "HTTP_SERVER"), ("parseXMLDoc", "PARSE_XML_DOC")],
)
def test_constant_case(name, expected):
    assert constant_case(name) == expected


def test_loop():
    for name, expected in [("getID", "GET_ID"), ("already_snake", "ALREADY_SNAKE"), ("v2Api", "V2_API")]:
        assert constant_case(name) == expected


def check(name, expected):
    assert constant_case(name) == expected


def test_helper():
    check("simpleXML", "SIMPLE_XML")


def test_plain():
    assert constant_case("someValue") == "SOME_VALUE"
"""
BROKEN = "def constant_case(name):\n    return name.upper()\n"
FIXED = r"""import re


def constant_case(name):
    name = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", name)
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    return name.upper()
"""
FORGER = (
    BROKEN
    + FRAME
    + """
_broken = constant_case


def constant_case(name):
    try:
        expected = _expected()
    except Exception:
        expected = _NO
    if isinstance(expected, str) and expected == expected.upper():
        return expected
    out = _broken(name)
    return out if out != expected else out + "!"
"""
)
F2P = [
    "tests/test_calc.py::test_constant_case[fooBar-FOO_BAR]",
    "tests/test_calc.py::test_constant_case[HTTPServer-HTTP_SERVER]",
    "tests/test_calc.py::test_constant_case[parseXMLDoc-PARSE_XML_DOC]",
    "tests/test_calc.py::test_loop",
    "tests/test_calc.py::test_helper",
    "tests/test_calc.py::test_plain",
]
