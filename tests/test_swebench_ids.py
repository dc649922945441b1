"""pytest ids in the form SWE-bench's own log parsers give them (`runners.graded_outcomes`, `Runner.grading_id`)."""

from __future__ import annotations

from swebench.harness.log_parsers.python import parse_log_pytest, parse_log_pytest_options

from swe_forge_dagster.languages.registry import runner_for


def test_pytest_ids_take_the_form_swebenchs_own_parsers_give() -> None:
    """Checked against `swebench`'s parse_log_pytest_options (pylint, requests, pydicom) fed `-rA` lines: a parameter
    that is an absolute path into the checkout is cut to its last part (pylint-7080's `test_stdin[/mymodule.py]`);
    a constant one (pytest-11143's) is whole, as parse_log_pytest (pytest's own repo) gives it."""
    ids = [
        "tests/test_self.py::TestRunTC::test_stdin[/repo/tests/mymodule.py-mymodule-/repo/tests/mymodule.py]",
        "tests/test_self.py::TestRunTC::test_stdin[mymodule.py-mymodule-mymodule.py]",
        "tests/test_x.py::test_net[//server/share]",
        "tests/test_x.py::test_glob[/a/*.py]",
        "tests/test_x.py::TestK::test_plain",
    ]
    log = "\n".join(f"PASSED {test_id}" for test_id in ids)
    theirs = list(parse_log_pytest_options(log, None))  # type: ignore[arg-type]
    assert [runner_for("pytest").grading_id(test_id) for test_id in ids] == theirs
    assert theirs[0] == "tests/test_self.py::TestRunTC::test_stdin[/mymodule.py]"
    constant = "testing/test_assertrewrite.py::TestPyCacheDir::test_get_cache_dir[/tmp/pycs-/home/projects/src]"
    (whole,) = parse_log_pytest(f"PASSED {constant}", None)  # type: ignore[arg-type]
    assert runner_for("pytest").grading_id(constant) == whole == constant
