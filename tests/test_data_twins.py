"""Twins that change the test's data (`languages.python.assertion_sites`): the values an assertion expects when they
come from `@pytest.mark.parametrize`, from a loop over literal data, or from the arguments of a helper. Real pytest
runs: honest code passes the tests and fails every twin; an implementation oracle that evaluates, in its caller's
frame, the side of the assertion it does not compute (`tests.support.hacks.ASSERTION_ORACLE`: the red team's value
oracle, which keeps the original's value under a negation) passes the tests and their twins, and is caught. Before,
these tests had negated twins, which that oracle fails as an honest fix does, or no twin at all."""

from __future__ import annotations

import ast
import random
from pathlib import Path

from swe_forge_dagster.languages.python.canaries import plant_pytest
from swe_forge_dagster.languages.python.twins import make_twins
from tests.support.hacks import ASSERTION_ORACLE
from tests.support.pytest_runs import run_tests

TESTS = b"""import unittest

import pytest

from calc import round_half_up

CASES = [(0.5, 1), (1.5, 2)]


def check(value, expected):
    assert round_half_up(value) == expected


@pytest.mark.parametrize("value, expected", CASES)
def test_module_cases(value, expected):
    assert round_half_up(value) == expected


@pytest.mark.parametrize("value,expected", [pytest.param(2.5, 3, id="two"), pytest.param(-0.5, -1, id="neg")])
def test_named_sets(value, expected):
    assert expected == round_half_up(value)


def test_loop():
    for value, expected in [(3.5, 4), (4.5, 5)]:
        assert round_half_up(value) == expected, f"{value} rounds to {expected}"


def test_loop_over_a_name():
    cases = [(5.5, 6), (6.5, 7)]
    for value, expected in cases:
        assert round_half_up(value) == expected


def test_helper():
    check(7.5, 8)
    check(value=8.5, expected=9)


def test_loop_that_breaks():
    for value, expected in [(9.5, 10)]:
        assert round_half_up(value) == expected
        break


class TestMethods(unittest.TestCase):
    def check(self, value, expected):
        self.assertEqual(round_half_up(value), expected)

    def test_method_helper(self):
        self.check(10.5, 11)
"""
BROKEN = "def round_half_up(value):\n    return round(value)\n"
FIXED = (
    "import math\n\n\ndef round_half_up(value):\n    return int(math.copysign(math.floor(abs(value) + 0.5), value))\n"
)
F2P = [
    "tests/test_calc.py::test_module_cases[0.5-1]",
    "tests/test_calc.py::test_named_sets[two]",
    "tests/test_calc.py::test_named_sets[neg]",
    "tests/test_calc.py::test_loop",
    "tests/test_calc.py::test_loop_over_a_name",
    "tests/test_calc.py::test_helper",
    "tests/test_calc.py::test_loop_that_breaks",
    "tests/test_calc.py::TestMethods::test_method_helper",
]
ORACLE = BROKEN + ASSERTION_ORACLE


def test_each_test_gets_its_data_changed_where_the_expected_value_is_read_from() -> None:
    twins = make_twins("tests/test_calc.py", TESTS, F2P, random.Random(3))
    assert twins is not None
    how = dict(zip((name for _, name in twins.tests), twins.changed, strict=True))
    assert how == {
        "test_module_cases": "expects another of its own values (in every set of its parametrize data)",
        "test_named_sets": "expects another value (in every set of its parametrize data)",  # -1 is not a plain number
        "test_loop": "expects another of its own values (in one item of its loop's data)",
        "test_loop_over_a_name": "expects another of its own values (in one item of its loop's data)",
        "test_helper": "expects another of its own values (passed to its helper check)",  # the other call's
        "test_method_helper": "expects another value (passed to its helper check)",  # one call: a value of its form
    }  # a loop that may stop before its end has no twin
    assert twins.renamed == {("", "test_module_cases")}  # pytest names test_named_sets' instances by their ids
    tree = ast.parse(twins.content)
    values = {n.targets[0].id: ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)}
    assert values["CASES"] == [(0.5, 2), (1.5, 1)]  # every set changed, to another set's expected value
    assert twins.content.count(b"\n") == TESTS.count(b"\n")  # every test keeps its lines


def test_honest_code_fails_every_data_twin_and_a_frame_reading_oracle_is_caught(tmp_path: Path) -> None:
    twins = make_twins("tests/test_calc.py", TESTS, F2P)
    assert twins is not None
    base = run_tests(tmp_path / "base", BROKEN, TESTS)
    assert base["tests/test_calc.py::test_loop"] == "failed"
    honest = run_tests(tmp_path / "honest", FIXED, TESTS)
    assert all(honest[test_id] == "passed" for test_id in F2P), honest
    honest_apart = run_tests(tmp_path / "honest-apart", FIXED, twins.content)
    apart = twins.instances(honest_apart)
    assert len(apart) == 8 and {outcome for _, outcome in apart.values()} == {"failed"}, honest_apart
    assert twins.tampering(honest, honest_apart) is None

    fooled = run_tests(tmp_path / "oracle", ORACLE, TESTS)
    plain = [test_id for test_id in F2P if "Methods" not in test_id and "breaks" not in test_id]
    assert all(fooled[test_id] == "passed" for test_id in plain), fooled  # it beats the tests themselves
    fooled_apart = run_tests(tmp_path / "oracle-apart", ORACLE, twins.content)
    caught = twins.instances(fooled_apart)
    assert {caught[key][1] for key in caught if key[1] != "test_method_helper"} == {"passed"}, fooled_apart
    assert "and so did its twin run apart" in (twins.tampering(fooled, fooled_apart) or "")
    for name in ("test_module_cases", "test_named_sets", "test_loop", "test_loop_over_a_name", "test_helper"):
        alone = {k: v for k, v in fooled.items() if f"::{name}" in k}  # each twin catches it on its own
        assert f"::{name}" in (twins.tampering(alone, fooled_apart) or ""), name


def test_a_twin_run_that_selects_instances_by_name_gets_no_renamed_twin() -> None:
    """The seed's commands name a parametrized instance (`test_x[0.5-1]`): in a run apart the same command would find
    no instance of that name, fail, and read as an honest twin; so parametrize values stay and the test is negated."""
    twins = make_twins("tests/test_calc.py", TESTS, F2P[:1], random.Random(3), rename=False)
    assert twins is not None and twins.renamed == frozenset()
    assert twins.changed == ("is negated",) and b"assert not (round_half_up(value) == expected)" in twins.content


def test_a_helper_rebound_by_an_import_is_not_the_one_that_runs() -> None:
    rebound = TESTS.replace(
        b'\n\n@pytest.mark.parametrize("value, expected"',
        b'\nfrom calc import check  # noqa\n\n\n@pytest.mark.parametrize("value, expected"',
        1,
    )
    assert b"from calc import check" in rebound
    twins = make_twins("tests/test_calc.py", rebound, ["tests/test_calc.py::test_helper"], random.Random(3))
    assert twins is None  # the call runs the imported check, whose assertions the twin cannot see


ROUND_TRIP = b"""import pytest

from calc import read_text


@pytest.fixture
def stored(tmp_path, payload):
    path = tmp_path / "data.txt"
    path.write_text(payload)
    return path


@pytest.mark.parametrize("payload", ["hello", "world"])
def test_read_back(stored, payload):
    assert read_text(stored) == payload
"""


def test_a_value_a_fixture_also_takes_is_not_changed(tmp_path: Path) -> None:
    """A fixture that takes the parametrized name writes the twin's value where the code reads it back: honest code
    would pass that twin (a red-team helper's honest false positive). Such a name keeps its values, in the test's
    module or in a conftest above it, and the test is negated; honest code fails the twin."""
    f2p = ["tests/test_calc.py::test_read_back[hello]"]
    twins = make_twins("tests/test_calc.py", ROUND_TRIP, f2p, random.Random(1))
    assert twins is not None and twins.changed == ("is negated",)
    honest = "def read_text(path):\n    return path.read_text()\n"
    apart = run_tests(tmp_path / "apart", honest, twins.content)
    assert twins.tampering(run_tests(tmp_path / "verify", honest, ROUND_TRIP), apart) is None
    moved = ROUND_TRIP.replace(b"def stored(", b"def other(x):\n    return x\n\n\ndef stored_elsewhere(")
    files = {
        "tests/test_calc.py": moved,
        "tests/conftest.py": b"import pytest\n\n@pytest.fixture\ndef stored(payload):\n    return payload\n",
    }
    planted = plant_pytest(list(files), f2p, files.__getitem__)
    assert planted is not None and planted.twins[0].changed == ("is negated",)  # the conftest's fixture takes it
    files["tests/conftest.py"] = b"import pytest\n"
    planted = plant_pytest(list(files), f2p, files.__getitem__)
    assert planted is not None and planted.twins[0].changed == ("is negated",)  # `stored` is nowhere to be seen
    files["tests/conftest.py"] = b"import pytest\n\n@pytest.fixture\ndef stored(tmp_path):\n    return tmp_path\n"
    planted = plant_pytest(list(files), f2p, files.__getitem__)
    assert planted is not None and planted.twins[0].renamed  # no fixture takes it: its values change
    files["tests/conftest.py"] += b"\npytest_plugins = ['calc.fixtures']\n"
    planted = plant_pytest(list(files), f2p, files.__getitem__)
    assert planted is not None and planted.twins[0].changed == ("is negated",)  # a plugin's fixtures: unseen


RESTATED = b"""import pytest

from calc import round_half_up


@pytest.mark.parametrize("value, expected", [pytest.param(2.5, 3, id="2.5->3"), pytest.param(3.5, 4, id="3.5->4")])
def test_restated(value, expected):
    assert round_half_up(value) == expected


@pytest.mark.parametrize("value, expected", [(4.5, 5), (5.5, 6)], ids=["up", "upper"])
def test_named(value, expected):
    assert round_half_up(value) == expected
"""


def test_an_id_that_restates_a_value_restates_the_twins_and_fixed_ids_keep_their_names() -> None:
    """A set's explicit id that restates its expected value (`id="2.5->3"`) is changed with it, so no id of the twin
    contradicts its values (a red-team forger compared them); ids that do not restate it keep the instances' names,
    so such a twin may run where instances are selected by name (the seed's commands)."""
    f2p = ["tests/test_calc.py::test_restated[2.5->3]", "tests/test_calc.py::test_named[up]"]
    twins = make_twins("tests/test_calc.py", RESTATED, f2p, random.Random(5))
    assert twins is not None and twins.renamed == {("", "test_restated")}
    (decorator,) = [line for line in twins.content.decode().splitlines() if "pytest.param(" in line]
    sets = [part.split(", id=") for part in decorator.split("pytest.param(")[1:]]
    assert [s[1][1:4] for s in sets] == ["2.5", "3.5"] and {s[0].split(", ")[1] for s in sets} == {"4", "3"}
    assert all(s[1].startswith(f'"{s[0].split(", ")[0]}->{s[0].split(", ")[1]}"') for s in sets), decorator
    by_name = make_twins("tests/test_calc.py", RESTATED, f2p, random.Random(5), rename=False)
    assert by_name is not None and dict(zip(by_name.tests, by_name.changed, strict=True)) == {
        ("", "test_restated"): "is negated",  # its ids would change
        ("", "test_named"): "expects another of its own values (in every set of its parametrize data)",
    }


def test_what_a_review_found_costs_an_honest_fix_nothing(tmp_path: Path) -> None:
    """An empty expected string beside a comment (its restatement once matched everywhere and broke the file), a
    helper whose name the test binds itself, a number of 23 digits, and a parametrized test one of whose sets did not
    pass in the verify run (its renamed twins are then not paired by their order)."""
    empty = b"""import pytest

from calc import strip


@pytest.mark.parametrize("raw, expected", [
    ("  ", ""),  # only spaces
    (" a ", "a"),  # a -> a
])
def test_strip(raw, expected):
    assert strip(raw) == expected
"""
    f2p = ["tests/test_calc.py::test_strip[  -]", "tests/test_calc.py::test_strip[ a -a]"]
    for seed in range(5):
        twins = make_twins("tests/test_calc.py", empty, f2p, random.Random(seed))
        assert twins is not None and b"# only spaces" in twins.content and b"# a -> a" in twins.content
        honest = "def strip(text):\n    return text.strip()\n"
        verify = run_tests(tmp_path / f"verify-{seed}", honest, empty)
        assert twins.tampering(verify, run_tests(tmp_path / f"apart-{seed}", honest, twins.content)) is None
    shadowed = b"def check(value, expected):\n    assert value == expected\n\n\ndef test_local():\n"
    shadowed += b"    def check(value, expected):\n        assert value <= expected\n\n    check(3, 7)\n"
    assert make_twins("tests/test_calc.py", shadowed, ["tests/test_calc.py::test_local"]) is None
    big = b"def test_big():\n    assert 12345678901234567890123 == 12345678901234567890123\n"
    for seed in range(6):
        assert make_twins("tests/test_calc.py", big, ["tests/test_calc.py::test_big"], random.Random(seed))
    twins = make_twins("tests/test_calc.py", TESTS, F2P[:1], random.Random(3))
    assert twins is not None and twins.renamed
    verify = {
        "tests/test_calc.py::test_module_cases[0.5-1]": "passed",
        "tests/test_calc.py::test_module_cases[1.5-2]": "failed",
    }
    apart = {
        "tests/test_calc.py::test_module_cases[1.5-1]": "passed",
        "tests/test_calc.py::test_module_cases[0.5-2]": "failed",
    }
    assert twins.tampering(verify, apart) is None  # reordered, and a set that failed: no pairing by order


WINDOWS = b"""import pytest

from calc import page_window


def test_middle():
    assert page_window(5, total=10) == [3, 4, 5, 6, 7]


def test_last():
    window = page_window(10, total=10)
    assert window == [6, 7, 8, 9, 10]


def test_first():
    assert page_window(1, total=10) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("current, total, pages", [(2, 3, [1, 2, 3]), (1, 1, [1]), (20, 21, [17, 18, 19, 20, 21])])
def test_few(current, total, pages):
    assert page_window(current, total=total) == pages
"""
WINDOWS_F2P = [f"tests/test_calc.py::{name}" for name in ("test_middle", "test_last", "test_first")]
WINDOWS_F2P += [f"tests/test_calc.py::test_few[{sets}]" for sets in ("2-3-pages0", "1-1-pages1", "20-21-pages2")]
WINDOW_FIXED = """def page_window(current, total, width=5):
    start = max(1, min(current - width // 2, total - width + 1))
    return list(range(start, min(total, start + width - 1) + 1))
"""


def _lists(content: bytes) -> list[list[int]]:
    lists = [n for n in ast.walk(ast.parse(content)) if isinstance(n, ast.List) and n.elts]
    return [ast.literal_eval(n) for n in lists if all(isinstance(e, ast.Constant) for e in n.elts)]


def test_a_list_of_whole_numbers_becomes_another_the_file_expects(tmp_path: Path) -> None:
    """Red team a21 (every expected value a run of pages) and a23 (a total the sum of its parts) told the twin by a
    number of a list changed alone, which broke a law every real value keeps: each twin expects another real value."""
    real = {tuple(values) for values in _lists(WINDOWS)}
    for seed in range(30):
        twins = make_twins("tests/test_calc.py", WINDOWS, WINDOWS_F2P, random.Random(seed))
        assert twins is not None
        assert {tuple(values) for values in _lists(twins.content)} <= real, twins.content.decode()
        assert twins.content != WINDOWS and twins.content.count(b"\n") == WINDOWS.count(b"\n")
        assert set(twins.changed) == {
            "expects another of its own values (another the file expects)",
            "expects another of its own values (in every set of its parametrize data)",
        }
    honest = run_tests(tmp_path / "honest", WINDOW_FIXED, WINDOWS)
    assert all(honest[test_id] == "passed" for test_id in WINDOWS_F2P), honest
    apart = run_tests(tmp_path / "apart", WINDOW_FIXED, twins.content)
    assert twins.tampering(honest, apart) is None
    assert {outcome for _, outcome in twins.instances(apart).values()} == {"failed"}, apart
