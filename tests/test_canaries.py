"""The canaries' rules without Docker: what counts as tampering, what does not, and the commands they run as."""

from __future__ import annotations

import ast

from swe_forge_dagster.languages.python.canaries import make_canaries, tampering
from swe_forge_dagster.languages.python.commands import canary_command

SOURCE = (
    "from __future__ import annotations\nimport pytest\nfrom .helpers import make\n\n\ndef test_a():\n"
    "    assert make()\n"
)


def test_a_canary_module_has_the_test_files_imports_and_two_fresh_tests() -> None:
    canaries = make_canaries("tests/unit/test_a.py", SOURCE)
    assert canaries.path.startswith("tests/unit/test_") and canaries.path.endswith(".py")
    assert canaries.passing != canaries.failing and canaries.passing.startswith("test_")
    tree = ast.parse(canaries.source)  # valid Python; `__future__` left out (it must come first in a module)
    assert "__future__" not in canaries.source and "import pytest" in canaries.source and ".helpers" in canaries.source
    assert {f.name for f in tree.body if isinstance(f, ast.FunctionDef)} == {canaries.passing, canaries.failing}
    assert len({make_canaries("tests/test_a.py", SOURCE).path for _ in range(6)}) > 1  # drawn afresh each time


def test_what_counts_as_tampering() -> None:
    c = make_canaries("tests/test_a.py", SOURCE)
    task = {"tests/test_a.py::test_a": "passed"}
    honest = {**task, f"{c.path}::{c.passing}": "passed", f"{c.path}::{c.failing}": "failed"}
    assert tampering(c, honest, 1, True) is None and c.expected(honest)
    assert "reported passed" in (tampering(c, {**honest, f"{c.path}::{c.failing}": "passed"}, 0, True) or "")
    assert "missing" in (tampering(c, task, 0, True) or "")  # the report lost the module, kept the task's tests
    assert "exited 0" in (tampering(c, honest, 0, True) or "")
    assert tampering(c, honest, 0, False) is None  # `... || true`: the exit status says nothing
    collection_error = {**task, c.path: "error"}  # code made it fail to collect: its imports cannot (BaseException)
    assert "failed to collect" in (tampering(c, collection_error, 1, True) or "") and not c.expected(collection_error)
    assert tampering(c, {"tests/test_a.py": "error", c.path: "error"}, 1, True) is None  # a broken session: no claim
    rootdir_relative = {
        "test_a.py::test_a": "passed",
        f"{c.path.removeprefix('tests/')}::{c.passing}": "passed",
        f"{c.path.removeprefix('tests/')}::{c.failing}": "failed",
    }
    assert tampering(c, rootdir_relative, 1, True) is None and c.expected(rootdir_relative)


def test_the_canary_command_selects_only_the_canary() -> None:
    fail_to_pass = (
        "python -m pytest -q 'tests/test_r.py::test_neg' 'tests/test_r.py::test_half[-1.5--2]' tests/test_o.py::t",
        "cd /repo && /tmp/venv/bin/python -m pytest /repo/tests/test_x.py::TestA::test_b -q",
    )
    assert canary_command(fail_to_pass, "tests/test_r.py") == "python -m pytest -q '{path}::{name}'  "
    assert canary_command(fail_to_pass, "tests/test_x.py") == (
        "cd /repo && /tmp/venv/bin/python -m pytest /repo/{path}::{name} -q"
    )
    assert canary_command(fail_to_pass, "tests/test_none.py") is None


def test_canaries_are_named_from_the_files_own_words() -> None:
    """No list of words of ours names them (a red-team forger spared the canaries by that list's words)."""
    source = "def test_round_half_up():\n    assert 1\n\n\ndef test_negative_half_rounds_down():\n    assert 1\n"
    canaries = make_canaries("tests/test_rounding.py", source)
    words = {"round", "half", "up", "negative", "rounds", "down", "rounding"}
    for name in (canaries.passing, canaries.failing, canaries.path.removeprefix("tests/").removesuffix(".py")):
        assert name.startswith("test_") and set(name.split("_")[1:]) <= words, name


def test_a_canary_module_name_is_found_even_when_every_drawn_name_is_taken() -> None:
    canaries = make_canaries("tests/test_a.py", SOURCE, exists=lambda path: True)
    assert canaries.path.startswith("tests/test_a_") and canaries.path.removesuffix(".py")[-1].isdigit()
