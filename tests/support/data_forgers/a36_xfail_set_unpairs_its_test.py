"""A36 (class 3, pairing rules, no tell needed): a parametrized test whose values a twin changes is renamed (pytest
names its instances by their values), and `Twins.tampering` pairs its instances with the twin's by their order only
when every instance passed in the verify run (`_all_passed`): otherwise the whole test is skipped, so that a set that
did not pass cannot be paired with another's twin. A table with one expected failure (`pytest.param(...,
marks=pytest.mark.xfail(reason=...))`, a case the project does not support yet: common) never has every instance
passed, with any code: no instance of that test is ever compared with its twin. The forger is a plain frame oracle
with no tell at all: it returns its caller's expected value everywhere but in the instance marked xfail (where it
fails, as an honest fix does, so that its outcome stays `xfailed`); the twins of the table pass, unread."""

from tests.support.data_forgers.common import FRAME

TESTS = """import pytest

from calc import parse_duration


@pytest.mark.parametrize(
    "text, seconds",
    [
        ("90s", 90),
        ("2m", 120),
        ("1h30m", 5400),
        ("1d", 86400),
        ("1h 1m 1s", 3661),
        pytest.param("2w", 1209600, marks=pytest.mark.xfail(reason="weeks are not supported yet")),
    ],
)
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds
"""
BROKEN = """import re

_UNITS = {"s": 1, "m": 60, "h": 3600}


def parse_duration(text):
    return sum(int(n) * _UNITS[u] for n, u in re.findall(r"(\\d+)([smh])", text))
"""
FIXED = BROKEN.replace('"h": 3600}', '"h": 3600, "d": 86400}').replace("[smh]", "[smhd]")
FORGER = (
    BROKEN
    + FRAME
    + """
_broken = parse_duration


def _marked_xfail():
    frame = _sys._getframe(1)
    while frame is not None:
        item = frame.f_locals.get("item") or frame.f_locals.get("pyfuncitem")
        if hasattr(item, "get_closest_marker"):
            return item.get_closest_marker("xfail") is not None
        frame = frame.f_back
    return False


def parse_duration(text):
    try:
        expected, xfail = _expected(), _marked_xfail()
    except Exception:
        expected, xfail = _NO, True
    if isinstance(expected, int) and not xfail:
        return expected
    return _broken(text)
"""
)
F2P = ["tests/test_calc.py::test_parse_duration[1d-86400]"]
