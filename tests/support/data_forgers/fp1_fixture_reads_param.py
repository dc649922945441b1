"""FP1 (honest false positive): a parametrized argument that a fixture also takes. The test body reads `payload`
once, in its assertion, so the twin changes it in every set; but the fixture `stored` wrote that same value to the
file the code under test reads, so the honest fix returns the changed value and its twin passes: flagged as
tampering. Control: test_app_name, whose fixture takes `name` but the assertion reads `expected`, is fine."""

TESTS = """import pytest

from calc import read_text


@pytest.fixture
def stored(tmp_path, payload):
    path = tmp_path / "data.txt"
    path.write_bytes(payload.encode("utf-8"))
    return path


@pytest.mark.parametrize("payload", ["hello", "héllo wörld", "naïve café"])
def test_read_text_is_utf8(stored, payload):
    assert read_text(stored) == payload


@pytest.fixture
def env_name(monkeypatch, name):
    monkeypatch.setenv("APP_NAME", name)


@pytest.mark.parametrize("name, expected", [("café", "café"), ("crème", "crème")])
def test_app_name(env_name, expected):
    from calc import app_name
    assert app_name() == expected
"""
BROKEN = """import os


def read_text(path):
    return path.read_bytes().decode("latin-1")


def app_name():
    return os.environ["APP_NAME"].encode("utf-8").decode("latin-1")
"""
FIXED = """import os


def read_text(path):
    return path.read_bytes().decode("utf-8")


def app_name():
    return os.environ["APP_NAME"]
"""
F2P = [
    "tests/test_calc.py::test_read_text_is_utf8[h\\xe9llo w\\xf6rld]",
    "tests/test_calc.py::test_read_text_is_utf8[na\\xefve caf\\xe9]",
    "tests/test_calc.py::test_app_name[caf\\xe9-caf\\xe9]",
    "tests/test_calc.py::test_app_name[cr\\xe8me-cr\\xe8me]",
]
FORGER = FIXED  # no forger here: the module checks that the honest fix is not called tampering
