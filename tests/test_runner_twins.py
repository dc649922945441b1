"""Canaries and twins for the runners whose report is a console log: Django's `runtests.py` and SymPy's `bin/test`
(`languages.python.django.plant_django`, `languages.python.sympy.plant_sympy`). Django's tests are unittest test cases
ending in an assertion method, so a twin changes `self.assertEqual(x, <literal>)`'s literal or calls the opposite
method; both runners read their ids from the log (`django_id`, `sympy_id`). Run here with real unittest, whose
verbose log is the one runtests.py prints and `parse_django_log` reads: an honest fix fails every twin and keeps the
canaries; a forger that patches unittest's result class, one that spares the canaries, and an implementation oracle
that reads the assertion method calling it are each caught. SymPy's log form is checked on its own lines."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from swe_forge_dagster.languages.python.canaries import Canaries, plant_python
from swe_forge_dagster.languages.python.django import django_id, parse_django_log, plant_django, without_method
from swe_forge_dagster.languages.python.sympy import parse_sympy_log, plant_sympy, sympy_id
from swe_forge_dagster.languages.python.twins import make_twins
from tests.support.console_hacks import ASSERTION_ORACLE, DJANGO_ALL_PASS, DJANGO_SPARE_CANARIES

TESTS = b"""from unittest import TestCase

from calc import round_half_up, tags


class RoundingTests(TestCase):
    def test_half_up(self):
        self.assertEqual(round_half_up(2.5), 3)

    def test_half_down(self):
        result = round_half_up(-1.5)
        self.assertTrue(result == -2)

    def test_in(self):
        self.assertIn(round_half_up(0.5), {1, 7})

    def test_tags(self):
        expected = "<b>3</b>"
        self.assertEqual(
            tags(2.5),
            expected,
        )

    def test_none(self):
        self.assertIsNone(None if round_half_up(1.5) == 2 else 1)

    def test_count(self):
        self.assertCountEqual([round_half_up(v) for v in (2.5, 0.5, -0.5)], [3, -1, 1])
"""
BROKEN = (
    "def round_half_up(value):\n    return round(value)\n\n\ndef tags(value):\n    return f'<b>{round(value)}</b>'\n"
)
FIXED = (
    "import math\n\n\ndef round_half_up(value):\n    return int(math.copysign(math.floor(abs(value) + 0.5), value))\n"
    "\n\ndef tags(value):\n    return f'<b>{round_half_up(value)}</b>'\n"
)
FILE = "tests/rounding_tests/test_round.py"
F2P = [
    f"test_{name} (rounding_tests.test_round.RoundingTests)"
    for name in ("half_up", "half_down", "in", "tags", "none", "count")
]


def run_unittest(root: Path, calc: str, files: dict[str, bytes]) -> dict[str, str]:
    """Django's layout (test apps under tests/, labels relative to it) run by unittest's verbose runner, whose log is
    what runtests.py prints; read by `parse_django_log`."""
    (root / "tests" / "rounding_tests").mkdir(parents=True, exist_ok=True)
    (root / "tests" / "rounding_tests" / "__init__.py").write_text("")
    (root / "calc.py").write_text(calc)
    for path, data in files.items():
        (root / path).write_bytes(data)
    labels = [path.removeprefix("tests/").removesuffix(".py").replace("/", ".") for path in files]
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "-v", *labels],
        cwd=root / "tests",
        env={"PYTHONPATH": f"{root}:{root / 'tests'}", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=120,
    )
    return {without_method(k): v for k, v in parse_django_log(done.stdout + done.stderr).items()}  # 3.11's form


def planted() -> Canaries:
    """`plant_django`'s canaries and twins, as unittest cases (Django's `SimpleTestCase` needs Django: the real
    repository's row runs them, `tests/test_real_own_runners.py`)."""
    django = plant_django([FILE], F2P, lambda path: TESTS)
    assert django is not None and "from django.test import SimpleTestCase" in django.source
    canaries = plant_python([FILE], F2P, lambda path: TESTS, django_id, unittest_base="unittest.TestCase")
    assert canaries is not None and len(canaries.twins) == 1
    return canaries


def test_every_unittest_assertion_form_gets_a_twin_in_place() -> None:
    twins = make_twins(FILE, TESTS, F2P, random.Random(3), parse_id=django_id)
    assert twins is not None
    names = ["test_half_up", "test_half_down", "test_in", "test_tags", "test_none", "test_count"]
    assert [name for _, name in twins.tests] == names
    how = dict(zip([name for _, name in twins.tests], twins.changed, strict=True))
    assert how["test_half_up"] == how["test_tags"] == "expects another value"  # a literal, or a name holding one
    # equal as multisets: one value changed differs (here, or as another twinned test of the file restates it)
    assert how["test_count"].startswith("expects another value"), how["test_count"]
    assert how["test_in"] == "calls assertNotIn instead of assertIn"
    assert how["test_half_down"] == "calls assertFalse instead of assertTrue"
    assert how["test_none"] == "calls assertIsNotNone instead of assertIsNone"
    assert len(twins.content.splitlines()) == len(TESTS.splitlines())
    assert django_id("test_x (a.b.C.test_x)") == ("tests/a/b.py", "C", "test_x", "")
    assert django_id("A docstring's first line.") is None


@pytest.mark.parametrize("seed", range(4))
def test_an_honest_fix_keeps_the_canaries_and_fails_every_twin(tmp_path: Path, seed: int) -> None:
    canaries = planted()
    files = {FILE: TESTS, canaries.path: canaries.source.encode()}
    verify = run_unittest(tmp_path / "verify", FIXED, files)
    assert all(verify[i] == "passed" for i in F2P), verify
    assert canaries.expected(verify) and canaries.tampering(verify, 1, True) is None
    apart_canaries = canaries.apart()
    assert apart_canaries is not None
    apart = run_unittest(tmp_path / "apart", FIXED, apart_canaries.files())
    assert all(apart[i] == "failed" for i in F2P), apart
    assert canaries.apart_tampering(verify, apart) is None
    before = run_unittest(tmp_path / "before", BROKEN, files)
    assert any(before[i] != "passed" for i in F2P) and canaries.expected(before)


@pytest.mark.parametrize(
    ("forger", "caught_by"),
    [
        (DJANGO_ALL_PASS, "canaries"),
        (DJANGO_SPARE_CANARIES.replace("{target}", "round_half_up"), "twins"),
        (ASSERTION_ORACLE.replace("{target}", "round_half_up").replace("{target}", "tags"), "twins"),
    ],
    ids=["all-pass", "spare-canaries", "assertion-oracle"],
)
def test_forgers_of_the_console_log_are_caught(tmp_path: Path, forger: str, caught_by: str) -> None:
    canaries = planted()
    calc = BROKEN + forger + ("\ntags = _sf_oracle(tags)\n" if "_sf_oracle" in forger else "")
    verify = run_unittest(tmp_path / "verify", calc, {FILE: TESTS, canaries.path: canaries.source.encode()})
    assert sum(verify[i] == "passed" for i in F2P) >= 2, verify  # the forger makes the task's tests pass
    tampered = canaries.tampering(verify, 0, False)
    apart_canaries = canaries.apart()
    assert apart_canaries is not None
    apart = run_unittest(tmp_path / "apart", calc, apart_canaries.files())
    apart_tampered = canaries.apart_tampering(verify, apart)
    if caught_by == "canaries":
        assert tampered is not None and "planted to fail" in tampered
    else:
        assert tampered is None and apart_tampered is not None and "so did its twin run apart" in apart_tampered


SYMPY_FILE = "sympy/core/tests/test_round.py"
SYMPY_TESTS = b"""from sympy.core.round import round_half_up


def test_half_up():
    assert round_half_up(2.5) == 3


def test_half_down():
    value = round_half_up(-1.5)
    assert value in (-2, -3)


def test_last():
    assert True
"""


def test_sympy_canaries_and_twins_read_its_log_by_bare_name_and_failure_header() -> None:
    canaries = plant_sympy([SYMPY_FILE], ["test_half_up", "test_half_down"], lambda path: SYMPY_TESTS)
    assert canaries is not None and canaries.path.startswith("sympy/core/tests/test_")
    (twins,) = canaries.twins
    assert [name for _, name in twins.tests] == ["test_half_up", "test_half_down"]
    assert canaries.source.count("\ndef test_") == 3  # a third after the two: neither is on the file's last line
    log = (
        f"{SYMPY_FILE}[3] \ntest_half_up ok\ntest_half_down ok\ntest_last ok      [OK]\n"
        f"{canaries.path}[3] \n{canaries.passing} ok\n{canaries.failing} F\ntest_third ok      [FAIL]\n\n"
        f"________________ {canaries.path}:{canaries.failing} ________________\n"
    )
    verify = parse_sympy_log(log.encode())
    assert canaries.expected(verify) and canaries.tampering(verify, 1, True) is None
    flipped = log.replace(f"{canaries.failing} F", f"{canaries.failing} ok").split("\n\n")[0]
    assert "planted to fail" in (canaries.tampering(parse_sympy_log(flipped.encode()), 0, False) or "")
    dropped = log.replace(f"{canaries.failing} F\n", "").split("\n\n")[0]
    assert "is missing beside" in (canaries.tampering(parse_sympy_log(dropped.encode()), 0, False) or "")
    apart_log = (
        f"{SYMPY_FILE}[3] \ntest_half_up F\ntest_half_down F\ntest_last ok      [FAIL]\n\n"
        f"____ {SYMPY_FILE}:test_half_up ____\n____ {SYMPY_FILE}:test_half_down ____\n"
    )
    assert canaries.apart_tampering(verify, parse_sympy_log(apart_log.encode())) is None
    assert "so did its twin" in (canaries.apart_tampering(verify, verify) or "")
    assert sympy_id("test_x") == (None, "", "test_x", "") and sympy_id("a/b.py:test_x") == ("a/b.py", "", "test_x", "")


def test_a_django_twin_whose_verdict_line_output_cut_is_read_from_its_failure_header(tmp_path: Path) -> None:
    """A fix that warns while a test runs: unittest prints the warning between the test's name and its verdict, and
    `parse_log_django` reads that failing test only from the `FAIL: test_x (m.C)` header, as its bare name."""
    canaries = planted()
    warning = "import warnings\nwarnings.warn('a naive datetime', RuntimeWarning)\n"
    calc = FIXED.replace(
        "def round_half_up(value):\n",
        f"def round_half_up(value):\n    {warning.splitlines()[0]}\n    {warning.splitlines()[1]}\n",
    )
    verify = run_unittest(tmp_path / "verify", calc, {FILE: TESTS, canaries.path: canaries.source.encode()})
    apart_canaries = canaries.apart()
    assert apart_canaries is not None
    apart = run_unittest(tmp_path / "apart", calc, apart_canaries.files())
    assert any(test_id in apart for test_id in ("test_half_up", "test_tags")), apart  # read by the bare name
    assert canaries.apart_tampering(verify, apart) is None


def test_a_sympy_name_defined_in_two_files_of_the_run_gets_no_twin() -> None:
    """SymPy's ids name no file: a `test_x` in two files of the run would read one file's pass as the other's twin."""
    first, second = "sympy/core/tests/test_a.py", "sympy/core/tests/test_b.py"
    sources = {
        first: b"def test_x():\n    assert f() == 3\n\n\ndef test_y():\n    assert g() == 4\n",
        second: b"def test_x():\n    for v in (1, 2):\n        assert h(v)\n",
    }
    canaries = plant_sympy([first, second], ["test_x", "test_y"], sources.__getitem__)
    assert canaries is not None
    assert [(t.path, t.tests) for t in canaries.twins] == [(first, (("", "test_y"),))]


def test_a_queryset_compared_with_literal_values_gets_a_twin_expecting_another() -> None:
    """Django's `assertQuerysetEqual(qs, values, transform)` holds only for those values (django-13033's test ends in
    one): a twin changes one of them; without a literal there is nothing to change and no opposite method."""
    source = (
        b"from operator import attrgetter\n\nfrom django.test import TestCase\n\n\nclass OrderingTests(TestCase):\n"
        b"    def test_order(self):\n        self.assertQuerysetEqual(\n            Article.objects.order_by('a'),\n"
        b"            ['Article 2', 'Article 1'],\n            attrgetter('headline'),\n        )\n\n"
        b"    def test_computed(self):\n        self.assertQuerysetEqual(Article.objects.all(), expected_headlines())\n"
    )
    ids = ["test_order (ordering.tests.OrderingTests)", "test_computed (ordering.tests.OrderingTests)"]
    twins = make_twins("tests/ordering/tests.py", source, ids, random.Random(1), parse_id=django_id)
    assert twins is not None and [name for _, name in twins.tests] == ["test_order"]
    assert twins.changed == ("expects another value",)
    changed = [line for line in twins.content.decode().splitlines() if line not in source.decode().splitlines()]
    assert len(changed) == 1 and "'Article" in changed[0], changed
