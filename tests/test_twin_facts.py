"""A fact a twin changes is changed the same way wherever another test of the file restates it
(`languages.python.twin_facts`): a forger that scanned the twin file for one input given two expected values told the
twin's run by it (red team a2, 2026-11-30; its real pytest run is `tests/test_data_forgers.py`). Here, the twin text
itself over many draws: one answer per input in every twin file, inputs never changed, parametrize data left alone
where the twin run selects instances by name."""

from __future__ import annotations

import ast
import random

import pytest

from swe_forge_dagster.languages.python.fact_rows import Rows
from swe_forge_dagster.languages.python.twin_values import Offsets
from swe_forge_dagster.languages.python.twins import make_twins

TESTS = """import unittest

import pytest

from calc import double, label


@pytest.mark.parametrize("value, expected", [(2, 4), (3, 6), (5, 10)])
def test_table(value, expected):
    assert double(value) == expected


def test_spot_checks():
    assert double(2) == 4
    assert 6 == double(3)


def test_loop():
    for value, expected in [(2, 4), (5, 10)]:
        assert double(value) == expected  # 2 -> 4


def check(value, expected):
    assert double(value) == expected


def test_helper():
    check(3, 6)
    check(5, 10)


def test_labels():
    assert label("a") == "A:a"
    for text, expected in [("a", "A:a"), ("b", "B:b")]:
        assert label(text) == expected


class DoubleTest(unittest.TestCase):
    def test_method(self):
        self.assertEqual(double(2), 4)
        self.assertEqual(label("b"), "B:b")
"""
F2P = [
    "tests/test_calc.py::test_table[2-4]",
    "tests/test_calc.py::test_spot_checks",
    "tests/test_calc.py::test_loop",
    "tests/test_calc.py::test_helper",
    "tests/test_calc.py::test_labels",
    "tests/test_calc.py::DoubleTest::test_method",
]
IDENTITY = """from calc import ident


def test_pair():
    assert ident((2, 1)) == (2, 1)


def test_again():
    assert ident((2, 1)) == (2, 1)
"""


def answers(text: str) -> dict[tuple, set]:
    """Each input the file states (a fact's row without its value, and the value's place) and the values it gives."""
    tree, offsets = ast.parse(text), Offsets(text)
    rows = Rows(tree, text, offsets)
    found: dict[tuple, set] = {}
    for constant in rows.constants.values():
        fact = rows.fact(constant)
        if fact is not None:
            found.setdefault(fact[:2], set()).add(fact[2])
    return found


@pytest.mark.parametrize("seed", range(40))
def test_every_twin_file_gives_one_answer_per_input(seed: int) -> None:
    twins = make_twins("tests/test_calc.py", TESTS.encode(), F2P, random.Random(seed))
    assert twins is not None and len(twins.tests) == len(F2P)
    text = twins.content.decode()
    original = answers(TESTS)
    conflicts = {row: values for row, values in answers(text).items() if len(values) > 1 and row in original}
    assert not conflicts, f"seed {seed}: one input, several answers: {conflicts}\n{text}"
    assert text != TESTS


@pytest.mark.parametrize("seed", range(20))
def test_a_value_another_test_computes_with_is_never_changed(seed: int) -> None:
    both = ["tests/test_ident.py::test_pair", "tests/test_ident.py::test_again"]
    twins = make_twins("tests/test_ident.py", IDENTITY.encode(), both, random.Random(seed))
    assert twins is not None and len(twins.tests) == 2
    text = twins.content.decode()
    assert text.count("ident((2, 1))") == 2, text  # both inputs: an honest `ident` would pass a changed one's twin
    assert text.count("== (2, 1)") == 0, text  # both expected values changed, the same way
    assert len({line.split("==")[1] for line in text.splitlines() if "==" in line}) == 1, text


def test_parametrize_data_is_not_restated_when_the_twin_run_selects_instances_by_name() -> None:
    for seed in range(20):
        twins = make_twins("tests/test_calc.py", TESTS.encode(), F2P, random.Random(seed), rename=False)
        assert twins is not None
        table = twins.content.decode().split("def test_table")[0]
        assert "[(2, 4), (3, 6), (5, 10)]" in table, table
        assert not twins.renamed


STATE = """from calc import lookup, register


def test_register():
    register("x", 5)


def test_lookup():
    assert lookup("x") == 5
"""


def test_a_value_a_test_with_no_twin_hands_to_code_is_never_changed() -> None:
    """The twin of `test_lookup` changes 5; `test_register` hands 5 to code whose state the twinned test reads (a
    review found an honest registry passing the twin when both changed)."""
    both = ["tests/test_state.py::test_register", "tests/test_state.py::test_lookup"]
    for seed in range(10):
        twins = make_twins("tests/test_state.py", STATE.encode(), both, random.Random(seed))
        assert twins is not None and 'register("x", 5)' in twins.content.decode()


EDGES = (
    """# -*- coding: latin-1 -*-
import unittest

from calc import big, double, normalize, parse_number


def test_alias():
    assert normalize("coding") == "latin"


def test_duplicate_keys():
    for value, expected in {2: 5, 3: 6, 2: 4}.items():
        assert double(value) == expected


def test_huge_float():
    assert parse_number("36028797018963968") == 36028797018963968.0


def test_big():
    assert big(2, 0x"""
    + "f" * 4000
    + """) == 4


class T(unittest.TestCase):
    def test_a(self):
        self.assertEqual(double(2), 4)

    def test_b(self):
        self.assertEqual(4, second=double(2))
"""
)


def test_what_a_review_found_in_restatements_holds() -> None:
    """An encoding declaration is no comment to restate; a dict with a key given twice is no loop data (the value
    overwritten is never compared); a float too large for a whole number away to differ is negated, not changed; an
    assertion with one positional argument and an int too long to print break nothing."""
    ids = [f"tests/test_edges.py::{name}" for name in ("test_alias", "test_duplicate_keys", "test_huge_float")]
    ids += ["tests/test_edges.py::T::test_a"]
    for seed in range(10):
        twins = make_twins("tests/test_edges.py", EDGES.encode(), ids, random.Random(seed))
        assert twins is not None
        text = twins.content.decode()
        assert text.startswith("# -*- coding: latin-1 -*-\n"), text[:40]
        how = dict(zip(twins.tests, twins.changed, strict=True))
        assert "loop" not in how.get(("", "test_duplicate_keys"), ""), how
        assert how.get(("", "test_huge_float")) == "is negated", how


def test_a_test_with_no_twin_keeps_its_instance_names_where_the_run_selects_them_by_name() -> None:
    text = """import pytest

from calc import double
from numpy.testing import assert_equal


def test_spot():
    assert double(2) == 4


@pytest.mark.parametrize("value, expected", [(2, 4), (3, 6)])
def test_table(value, expected):
    assert_equal(double(value), expected)
"""
    ids = ["tests/test_t.py::test_spot", "tests/test_t.py::test_table[2-4]", "tests/test_t.py::test_table[3-6]"]
    for seed in range(10):
        twins = make_twins("tests/test_t.py", text.encode(), ids, random.Random(seed), rename=False)
        assert twins is not None and "[(2, 4), (3, 6)]" in twins.content.decode()
