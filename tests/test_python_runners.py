"""Django's `tests/runtests.py` and SymPy's `bin/test` as runners of the Python pack (`languages.python.django`,
`languages.python.sympy`): their logs read into SWE-bench's ids (the same as `swebench`'s own parsers give), their
labels, and how their commands are recognised.

The logs (`support/python_runner_logs`) are excerpts of real runs (docker, `swe-forge-base` images): Django 3.0
on Python 3.9 (django__django-11099 before its fix), Django 5.0 on 3.11 (django__django-17087 before), Django 3.2
on 3.9 (django__django-13658 after), and SymPy 1.1.1 on 3.9 (sympy__sympy-13031 and -12481 before their fixes).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from swebench.harness.log_parsers.python import parse_log_django, parse_log_sympy

from swe_forge_dagster.languages.python.django import (
    DJANGO_RUNNER,
    DJANGO_TEST,
    PYTHON36_DESCRIPTIONS,
    described,
    django_labels,
    django_single_id,
    parse_django_log,
    parse_django_log_statuses,
    without_method,
)
from swe_forge_dagster.languages.python.recipes import python_recipes
from swe_forge_dagster.languages.python.runner import PYTEST, PYTEST_COMMAND, PYTEST_RUNNER
from swe_forge_dagster.languages.python.suites import own_runner_command
from swe_forge_dagster.languages.python.sympy import (
    SYMPY_RUNNER,
    SYMPY_RUNTESTS_TEST,
    SYMPY_TEST,
    parse_sympy_log,
    parse_sympy_log_statuses,
)

LOGS = Path(__file__).parent / "support" / "python_runner_logs"
DJANGO_30_BEFORE = (LOGS / "django30_before.log").read_text()
DJANGO_50_BEFORE = (LOGS / "django50_before.log").read_text()
DJANGO_32_DOCSTRINGS = (LOGS / "django32_docstrings.log").read_text()
SYMPY_FAILED = (LOGS / "sympy_failed.log").read_text()
SYMPY_ERROR = (LOGS / "sympy_error.log").read_text()
LITE = Path("/work/shared/fixtures/swebench/lite-test-and-multilingual/swebench_lite_origin.jsonl")

DJANGO_LOGS = (DJANGO_30_BEFORE, DJANGO_50_BEFORE, DJANGO_32_DOCSTRINGS)
SYMPY_LOGS = (SYMPY_FAILED, SYMPY_ERROR)


@pytest.mark.parametrize("log", DJANGO_LOGS)
def test_django_ids_are_swebenchs(log: str) -> None:
    assert parse_django_log_statuses(log) == parse_log_django(log, None)  # type: ignore[arg-type]


@pytest.mark.parametrize("log", SYMPY_LOGS)
def test_sympy_ids_are_swebenchs(log: str) -> None:
    assert parse_sympy_log_statuses(log) == parse_log_sympy(log, None)  # type: ignore[arg-type]


def test_django_before_python_311() -> None:
    outcomes = parse_django_log(DJANGO_30_BEFORE.encode())
    assert outcomes["test_help_text (auth_tests.test_validators.UserAttributeSimilarityValidatorTest)"] == "passed"
    assert len([o for o in outcomes.values() if o == "passed"]) == 20
    # a test whose subtests failed prints ` ... ` and no verdict; its `FAIL:` header names it by its bare method
    assert "test_ascii_validator (auth_tests.test_validators.UsernameValidatorsTests)" not in outcomes
    assert outcomes["test_ascii_validator"] == outcomes["test_unicode_validator"] == "failed"


def test_django_python_311_ids_and_docstrings() -> None:
    outcomes = parse_django_log(DJANGO_50_BEFORE.encode())
    failing = (
        "test_serialize_nested_class_method (migrations.test_writer.WriterTests.test_serialize_nested_class_method)"
    )
    assert outcomes[failing] == "failed"
    assert outcomes["test_serialize_nested_class_method"] == "failed"  # from the `FAIL:` header
    assert outcomes["A reference in a local scope can't be serialized."] == "passed"
    assert outcomes["#24155 - Tests ordering of imports."] == "passed"
    assert without_method(failing) == "test_serialize_nested_class_method (migrations.test_writer.WriterTests)"
    assert django_single_id(failing) == "migrations.test_writer.WriterTests.test_serialize_nested_class_method"
    assert django_single_id("test_x (m.C)") == "m.C.test_x"
    assert without_method("test_x (m.C)") == "test_x (m.C)"
    assert without_method("Regression for #20509") == "Regression for #20509"


def test_django_docstring_ids() -> None:
    outcomes = parse_django_log(DJANGO_32_DOCSTRINGS.encode())
    assert outcomes["Program name is computed from the execute_from_command_line()'s argv"] == "passed"
    assert outcomes["test_suggestions (admin_scripts.tests.DjangoAdminSuggestions)"] == "passed"
    names = described(DJANGO_32_DOCSTRINGS)
    assert names["test_program_name_from_argv (admin_scripts.tests.ExecuteFromCommandLine)"] == (
        "Program name is computed from the execute_from_command_line()'s argv"
    )
    assert "test_suggestions (admin_scripts.tests.DjangoAdminSuggestions)" not in names


def test_sympy_outcomes() -> None:
    failed = parse_sympy_log(SYMPY_FAILED.encode())
    assert failed["test_sparse_matrix"] == "failed"
    assert failed["sympy/matrices/tests/test_sparse.py:test_sparse_matrix"] == "failed"  # the failure's header
    assert failed["test_sparse_solve"] == "passed"
    assert "test_hermitian" not in failed  # the file's last test shares its line with `[FAIL]`, as in SWE-bench
    errored = parse_sympy_log(SYMPY_ERROR.encode())
    assert errored["test_args"] == "error"
    assert sum(o == "passed" for o in errored.values()) == 8


def test_django_labels_as_swebench_makes_them() -> None:
    files = [
        "tests/utils_tests/test_html.py",
        "tests/forms_tests/tests/test_error_messages.py",
        "tests/ordering/models.py",
        "tests/templates/x.html",
        "tests/utils_tests/test_html.py",
    ]
    assert django_labels(files) == ["utils_tests.test_html", "forms_tests.tests.test_error_messages", "ordering.models"]
    assert [f for f in files if DJANGO_RUNNER.runs(f)] == [files[0], files[1], files[4]]
    assert not DJANGO_RUNNER.runs("tests/runtests.py")
    assert not DJANGO_RUNNER.runs("tests/test_sqlite.py")
    assert DJANGO_RUNNER.runs("tests/admin_scripts/tests.py")
    command, report = DJANGO_RUNNER.command(DJANGO_TEST, ["tests/utils_tests/test_html.py"], "/tmp/r.log")
    assert command == (
        "python tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 utils_tests.test_html"
        " > /tmp/r.log 2>&1"
    )
    assert report == "/tmp/r.log"


def test_sympy_files() -> None:
    files = ["sympy/core/tests/test_numbers.py", "sympy/core/numbers.py", "sympy/core/tests/test_numbers.py"]
    assert [f for f in files if SYMPY_RUNNER.runs(f)] == [files[0], files[2]]
    command, _ = SYMPY_RUNNER.command(SYMPY_TEST, [files[0]], "/tmp/r.log")
    assert command == (
        "PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' python bin/test -C --verbose "
        "sympy/core/tests/test_numbers.py > /tmp/r.log 2>&1"
    )


@pytest.mark.parametrize(
    ("command", "runner"),
    [
        (DJANGO_TEST, "django"),
        ("./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 {tests}", "django"),
        ("./tests/runtests.py --verbosity 2 utils_tests.test_html", "django"),
        ("coverage run ./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1", "django"),
        ("cd /repo && python3.9 -u tests/runtests.py {tests} > {report} 2>&1", "django"),
        ("LANG=C.UTF-8 /repo/tests/runtests.py {tests}", "django"),
        (SYMPY_TEST, "sympy"),
        ("PYTHONWARNINGS='ignore::UserWarning,ignore::SyntaxWarning' bin/test -C --verbose {tests}", "sympy"),
        ("bin/test -C --verbose sympy/core/tests/test_basic.py", "sympy"),
        ("./bin/test {tests} > {report}", "sympy"),
        (SYMPY_RUNTESTS_TEST, "sympy"),
        (SYMPY_RUNNER.single_test("test_x", ["sympy/core/tests/test_x.py"]), "sympy"),
        (PYTEST, "pytest"),
        ("pytest tests/runtests.py", "pytest"),
        ("python -m pytest bin/test", "pytest"),
        ("python -m pytest tests/test_runtests.py", "pytest"),
        ("make test", None),
        ("python setup.py test", None),
        ("cat tests/runtests.py", None),
        ("ls bin/test_data", None),
    ],
)
def test_detect(command: str, runner: str | None) -> None:
    found = [r.name for r in (PYTEST_RUNNER, DJANGO_RUNNER, SYMPY_RUNNER) if re.search(r.detect, command)]
    assert found == ([runner] if runner else [])


FAKE_RUNTESTS = """import os, sys
def test(*paths, kw=None, verbose=False):
    print("test", list(paths), kw, verbose, os.environ.get("SYMPY_USE_CACHE"), __name__)
    return RESULT
"""


@pytest.mark.parametrize(
    ("module", "result", "status"),
    [
        ("sympy/testing/runtests.py", "True", 0),  # 1.6 to 1.12: a bool
        ("sympy/testing/runtests.py", "1", 1),  # 1.13: an exit code
        ("sympy/utilities/runtests.py", "False", 1),  # before 1.6: no sympy.testing
    ],
)
def test_a_sympy_tree_without_bin_test_runs_the_runner_bin_test_calls(
    tmp_path: Path, module: str, result: str, status: int
) -> None:
    """A release sdist has no `bin/`: the runner module `bin/test` calls is called with `bin/test -C --verbose`'s
    arguments (the cache off before SymPy is imported), and its answer becomes the exit status."""
    tree = {"setup.py", "sympy/__init__.py", module, "sympy/core/tests/test_x.py"}
    assert own_runner_command(tree) == SYMPY_RUNTESTS_TEST
    assert own_runner_command({*tree, "bin/test", "sympy/utilities/runtests.py"}) == SYMPY_TEST
    for path in tree:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    (tmp_path / module).write_text(FAKE_RUNTESTS.replace("RESULT", result))
    if "/testing/" in module:
        (tmp_path / "sympy" / "testing" / "__init__.py").write_text("")
    env = {"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"}
    whole, _ = SYMPY_RUNNER.command(SYMPY_RUNTESTS_TEST, ["sympy/core/tests/test_x.py"], str(tmp_path / "r.log"))
    done = subprocess.run(["bash", "-c", whole], cwd=tmp_path, env=env, capture_output=True, text=True)
    dotted = module.removesuffix(".py").replace("/", ".")
    assert done.returncode == status, (done.stderr, (tmp_path / "r.log").read_text())
    assert (tmp_path / "r.log").read_text() == f"test ['sympy/core/tests/test_x.py'] None True no {dotted}\n"
    one = SYMPY_RUNNER.single_test("test_y", ["sympy/core/tests/test_x.py"])
    done = subprocess.run(["bash", "-c", one], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.stdout == f"test ['sympy/core/tests/test_x.py'] ['test_y'] True no {dotted}\n", done.stderr


def test_pytest_detect_ignores_them() -> None:
    for command in (DJANGO_TEST, SYMPY_TEST, SYMPY_RUNTESTS_TEST):
        assert not re.search(PYTEST_COMMAND, command)


def test_swebench_command_prints_to_the_console() -> None:
    assert DJANGO_RUNNER.swebench_log is not None and SYMPY_RUNNER.swebench_log is not None
    assert DJANGO_RUNNER.swebench_log.parser == "parse_log_django"
    assert SYMPY_RUNNER.swebench_log.parser == "parse_log_sympy"
    command, _ = DJANGO_RUNNER.command(DJANGO_TEST, ["tests/a/tests.py"], "/tmp/swe-forge-report")
    assert DJANGO_RUNNER.swebench_log.command(command) == (
        "python tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 a.tests 2>&1"
    )
    command, _ = SYMPY_RUNNER.command(SYMPY_TEST, ["sympy/a/tests/test_b.py"], "/tmp/swe-forge-report")
    assert SYMPY_RUNNER.swebench_log.command(command).endswith("bin/test -C --verbose sympy/a/tests/test_b.py 2>&1")


def test_well_formed() -> None:
    assert DJANGO_RUNNER.well_formed("test_x (m.C)")
    assert DJANGO_RUNNER.well_formed("Regression for #20509")
    assert not DJANGO_RUNNER.well_formed("")
    assert not DJANGO_RUNNER.well_formed("test_x (m.C) ... ok")
    assert SYMPY_RUNNER.well_formed("test_sinc")
    assert not SYMPY_RUNNER.well_formed("sympy/a/tests/test_b.py:test_c")
    assert not SYMPY_RUNNER.well_formed("[100%]")


@pytest.mark.skipif(not LITE.exists(), reason="the SWE-bench Lite fixture is not on this machine")
def test_every_lite_id_is_well_formed() -> None:
    runners = {"django/django": DJANGO_RUNNER, "sympy/sympy": SYMPY_RUNNER}
    for line in LITE.read_text().splitlines():
        row = json.loads(line)
        runner = runners.get(row["repo"])
        if runner is None:
            continue
        for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            assert all(runner.well_formed(test_id) for test_id in json.loads(row[key])), row["instance_id"]


def test_a_project_whose_oldest_python_is_36_gets_its_test_names_on_a_newer_python(tmp_path: Path) -> None:
    """SWE-bench listed Django 3.0 to 3.2 on Python 3.6, whose unittest gives a test whose docstring starts on the
    line after its quotes no description; 3.7 and later name it by the docstring. The install step's `.pth` line,
    run by a real interpreter (this one, 3.11), names such a test as 3.6 did and leaves a one-line docstring's."""
    line = re.search(r'"(import unittest[^"]+)"', PYTHON36_DESCRIPTIONS).group(1)  # type: ignore[union-attr]
    (tmp_path / "old_descriptions.pth").write_text(line + "\n")
    script = (
        "import site, sys, unittest\n"
        f"site.addsitedir({str(tmp_path)!r})\n"
        "class T(unittest.TestCase):\n"
        "    def test_a(self):\n        '''\n        Starts on the next line.\n        '''\n"
        "    def test_b(self):\n        '''On the first line.'''\n"
        "print(T('test_a').shortDescription(), '|', T('test_b').shortDescription())\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "None | On the first line."
    unpatched = subprocess.run([sys.executable, "-c", script.replace("site.addsitedir", "print")], capture_output=True)
    assert b"Starts on the next line. | On the first line." in unpatched.stdout

    django = {"tests/runtests.py", "django/__init__.py"}
    for classifiers, expected in (("3.6", True), ("3.5", True), ("3.8", False), (None, False)):
        setup_py = f"classifiers=['Programming Language :: Python :: {classifiers}']" if classifiers else "setup()"
        installs = [r.install_commands[-1] for r in python_recipes({"setup.py": setup_py}, django, "img")]
        assert all((PYTHON36_DESCRIPTIONS in install) == expected for install in installs), (classifiers, installs)
    assert PYTHON36_DESCRIPTIONS not in str(python_recipes({"setup.py": "python 3.6"}, {"t/test_x.py"}, "img"))
