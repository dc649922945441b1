"""JUnit XML -> SWE-bench test ids (checked against real pytest output and real SWE-bench ids), and
the FAIL_TO_PASS / PASS_TO_PASS rules."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from swe_forge_dagster.execution.junit import Outcome, parse_junit
from swe_forge_dagster.languages.python.junit_ids import pytest_outcomes
from swe_forge_dagster.languages.registry import runner_for
from swe_forge_dagster.tasks.validation import validate

# --- parse_junit on hand-written reports ---------------------------------------------------------


def test_outcomes_single_testsuite_root() -> None:
    xml = """<?xml version="1.0" encoding="utf-8"?>
    <testsuite name="pytest" tests="5">
      <testcase classname="tests.test_x" name="test_ok" time="0.1"/>
      <testcase classname="tests.test_x" name="test_bad"><failure message="assert 0">tb</failure></testcase>
      <testcase classname="tests.test_x" name="test_setup"><error message="failed on setup"/></testcase>
      <testcase classname="tests.test_x" name="test_skip"><skipped type="pytest.skip" message="no"/></testcase>
      <testcase classname="tests.test_x" name="test_xfail"><skipped type="pytest.xfail" message=""/></testcase>
      <testcase classname="tests.test_x" name="test_out"><system-out>hi</system-out></testcase>
    </testsuite>"""
    assert pytest_outcomes(xml) == {
        "tests/test_x.py::test_ok": "passed",
        "tests/test_x.py::test_bad": "failed",
        "tests/test_x.py::test_setup": "error",
        "tests/test_x.py::test_skip": "skipped",
        "tests/test_x.py::test_xfail": "xfailed",
        "tests/test_x.py::test_out": "passed",
    }


def test_testsuites_wrapper_nested_classes_and_odd_params() -> None:
    xml = b"""<testsuites><testsuite name="a"><testsuite name="nested">
      <testcase classname="pkg.tests.test_m.TestA.TestB" name="test_y[param-1]"/>
      <testcase classname="pkg.tests.test_m.TestA" name="test_z[a.b/c::d-1.5]"/>
      <testcase classname="pkg.tests.test_m" name="test_w[x[0]]"/>
    </testsuite></testsuite></testsuites>"""
    assert pytest_outcomes(xml) == {
        "pkg/tests/test_m.py::TestA::TestB::test_y[param-1]": "passed",
        "pkg/tests/test_m.py::TestA::test_z[a.b/c::d-1.5]": "passed",
        "pkg/tests/test_m.py::test_w[x[0]]": "passed",
    }


def test_file_attribute_known_files_and_convention() -> None:
    xml = """<testsuite>
      <testcase classname="tests.v1.2.test_dot.TestC" name="test_a" file="tests/v1.2/test_dot.py"/>
      <testcase classname="tests.test_child.TestChild" name="test_inherited" file="tests/base.py"/>
      <testcase classname="tests.lower.test_m.helper_cls" name="test_b"/>
      <testcase classname="" name="tests.test_broken"><error message="collection failure"/></testcase>
    </testsuite>"""
    # The file attribute settles the first; an inherited test's file (tests/base.py) is ignored.
    assert pytest_outcomes(xml) == {
        "tests/v1.2/test_dot.py::TestC::test_a": "passed",
        "tests/test_child.py::TestChild::test_inherited": "passed",
        "tests/lower/test_m/helper_cls.py::test_b": "passed",  # convention is wrong for a lowercase class
        "tests/test_broken.py": "error",
    }
    known = ["tests/lower/test_m.py", "./tests/test_child.py"]
    assert "tests/lower/test_m.py::helper_cls::test_b" in pytest_outcomes(xml, known_files=known)


def test_duplicates_worst_outcome_wins() -> None:
    xml = """<testsuite>
      <testcase classname="t.test_a" name="test_1"><failure/></testcase>
      <testcase classname="t.test_a" name="test_1"><error message="failed on teardown"/></testcase>
      <testcase classname="t.test_a" name="test_2"/>
      <testcase classname="t.test_a" name="test_2"><skipped/></testcase>
      <testcase classname="t.test_a" name="test_3"><skipped/></testcase>
      <testcase classname="t.test_a" name="test_3"/>
    </testsuite>"""
    assert pytest_outcomes(xml) == {
        "t/test_a.py::test_1": "error",
        "t/test_a.py::test_2": "skipped",
        "t/test_a.py::test_3": "skipped",
    }


def test_other_frameworks_and_bad_input() -> None:
    xml = """<testsuite><testcase classname="com.google.gson.JsonWriterTest" name="testLenient"/>
      <testcase classname="github.com/gin-gonic/gin" name="TestContext/header"><failure/></testcase></testsuite>"""
    assert parse_junit(xml, "junit") == {
        "com.google.gson.JsonWriterTest#testLenient": "passed",
        "github.com/gin-gonic/gin#TestContext/header": "failed",
    }
    assert parse_junit(xml, "name")["TestContext/header"] == "failed"
    with pytest.raises(ValueError, match="unsupported id form"):
        parse_junit(xml, "tap")
    with pytest.raises(ValueError, match="not a JUnit report"):
        parse_junit("<html/>", "junit")
    assert parse_junit("<testsuites/>", "junit") == {}


# --- parse_junit on what pytest really writes ----------------------------------------------------

REAL_MODULE = """
import pytest
from tests.base import Base

@pytest.mark.parametrize("x", ["a.b", "c/d", "e::f", "g[h]", "i j", 1.5])
def test_param(x):
    pass

class TestOuter:
    def test_ok(self):
        pass
    def test_fail(self):
        assert False
    class TestInner:
        @pytest.mark.parametrize("v", ["x.y", "p::q"])
        def test_nested(self, v):
            pass

class TestChild(Base):
    pass

def test_skip():
    pytest.skip("no")

@pytest.mark.xfail
def test_xfail():
    assert False

@pytest.fixture
def broken():
    raise RuntimeError

def test_setup_error(broken):
    pass

@pytest.fixture
def bad_teardown():
    yield
    raise RuntimeError

def test_fail_and_teardown_error(bad_teardown):
    assert False
"""
REAL_EXPECTED: dict[str, Outcome] = {
    **{f"tests/unit/test_mod.py::test_param[{p}]": "passed" for p in ("a.b", "c/d", "e::f", "g[h]", "i j", "1.5")},
    "tests/unit/test_mod.py::TestOuter::test_ok": "passed",
    "tests/unit/test_mod.py::TestOuter::test_fail": "failed",
    "tests/unit/test_mod.py::TestOuter::TestInner::test_nested[x.y]": "passed",
    "tests/unit/test_mod.py::TestOuter::TestInner::test_nested[p::q]": "passed",
    "tests/unit/test_mod.py::TestChild::test_inherited": "passed",
    "tests/unit/test_mod.py::test_skip": "skipped",
    "tests/unit/test_mod.py::test_xfail": "xfailed",
    "tests/unit/test_mod.py::test_setup_error": "error",
    "tests/unit/test_mod.py::test_fail_and_teardown_error": "error",  # two testcases: failure + error
    "tests/v1.2/test_dot.py::test_dotted_dir": "passed",
    "tests/test_broken.py": "error",  # collection error
}


@pytest.mark.parametrize("family", ["xunit1", "xunit2"])
def test_real_pytest_junit_maps_back_to_node_ids(tmp_path: Path, family: str) -> None:
    files = {
        "pytest.ini": "[pytest]\n",
        "tests/__init__.py": "",
        "tests/base.py": "class Base:\n    def test_inherited(self):\n        pass\n",
        "tests/unit/__init__.py": "",
        "tests/unit/test_mod.py": REAL_MODULE,
        "tests/v1.2/test_dot.py": "def test_dotted_dir():\n    pass\n",
        "tests/test_broken.py": "import not_a_module_anywhere\n",
    }
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    report = tmp_path / "report.xml"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "--continue-on-collection-errors",
        "-o",
        f"junit_family={family}",
        f"--junitxml={report}",
        "-q",
        "tests",
    ]
    subprocess.run(command, cwd=tmp_path, capture_output=True, check=False, timeout=120)

    known = [name for name in files if name.endswith(".py")]
    assert pytest_outcomes(report.read_bytes(), known_files=known) == REAL_EXPECTED
    if family == "xunit1":  # `file` alone is enough, even for the dotted directory
        assert pytest_outcomes(report.read_bytes()) == REAL_EXPECTED


# --- round trip of the real SWE-bench ids ----------------------------------------------------------


def swebench_pytest_ids(root: Path) -> set[str]:
    """Every pytest-style FAIL_TO_PASS/PASS_TO_PASS id in the fixtures (JSON strings or lists)."""
    instances = []
    for path in sorted(root.glob("*/*.json")):
        instances += json.loads(path.read_text())
    for path in sorted(root.glob("*/*.jsonl")):
        instances += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    ids = set()
    for instance in instances:
        for key in ("FAIL_TO_PASS", "PASS_TO_PASS"):
            value = instance.get(key) or []
            for test_id in json.loads(value) if isinstance(value, str) else value:
                if "::" in test_id and test_id.split("::")[0].endswith(".py"):
                    ids.add(test_id)
    return ids


def pytest_junit_report(ids: set[str], *, with_file: bool) -> bytes:
    """The testcases pytest's junitxml plugin would write for these node ids (`mangle_test_address`)."""
    suite = ET.Element("testsuite", name="pytest")
    for test_id in sorted(ids):
        path, bracket, params = test_id.partition("[")
        names = path.split("::")
        file = names[0]
        names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
        names[-1] += bracket + params
        attrs = {"classname": ".".join(names[:-1]), "name": names[-1]}
        if with_file:
            attrs["file"] = file
        ET.SubElement(suite, "testcase", attrs)
    return ET.tostring(suite, encoding="utf-8")


def test_swebench_ids_round_trip(shared_fixtures: Path) -> None:
    root = shared_fixtures / "swebench"
    ids = swebench_pytest_ids(root) if root.is_dir() else set()
    if not ids:
        pytest.skip(f"no SWE-bench instances with pytest ids under {root}")
    known = {test_id.split("::")[0] for test_id in ids}
    expected = dict.fromkeys(ids, "passed")

    with_file = pytest_outcomes(pytest_junit_report(ids, with_file=True))
    with_known = pytest_outcomes(pytest_junit_report(ids, with_file=False), known_files=known)
    by_convention = pytest_outcomes(pytest_junit_report(ids, with_file=False))
    convention_hits = len(ids & by_convention.keys())
    print(
        f"\nSWE-bench pytest ids: {len(ids)}; round trip with file=: {len(ids & with_file.keys())}, "
        f"with known_files: {len(ids & with_known.keys())}, by convention only: {convention_hits}"
    )
    assert with_file == expected
    assert with_known == expected
    assert convention_hits / len(ids) > 0.95


# --- validation rules ------------------------------------------------------------------------------

P = "tests/test_a.py::test_fix[1.5-a/b]"
Q = "tests/test_a.py::TestK::test_keep"
R = "tests/test_b.py::test_other"


def test_accepts_a_normal_fix() -> None:
    before: dict[str, Outcome] = {P: "failed", Q: "passed", R: "skipped"}
    after: dict[str, Outcome] = {P: "passed", Q: "passed", R: "skipped"}
    result = validate(before, [after, dict(after), dict(after)])
    assert result.accepted and result.reason is None
    assert (result.fail_to_pass, result.pass_to_pass, result.flaky, result.broken) == ([P], [Q], [], [])


def test_error_and_missing_before_count_as_failing() -> None:
    new = "tests/test_new.py::test_new_api[x::y]"
    before: dict[str, Outcome] = {P: "error", Q: "passed", "tests/test_new.py": "error"}
    after: dict[str, Outcome] = {P: "passed", Q: "passed", new: "passed", "tests/test_new.py": "passed"}
    result = validate(before, [after] * 3)
    assert result.accepted
    assert result.fail_to_pass == sorted([P, new, "tests/test_new.py"])


def test_suite_did_not_start() -> None:
    ok: dict[str, Outcome] = {P: "passed"}
    assert validate(None, [ok] * 3).reason == "test suite did not start (before)"
    assert validate({}, [ok] * 3).reason == "test suite did not start (before)"
    result = validate({P: "failed"}, [ok, None, {}])
    assert not result.accepted
    assert result.reason == "test suite did not start (after run 2, after run 3)"
    assert validate({P: "failed"}, []).reason == "test suite did not start (no after run)"


def test_no_fail_to_pass() -> None:
    runs: dict[str, Outcome] = {P: "passed", Q: "passed"}
    result = validate(dict(runs), [runs] * 3)
    assert not result.accepted
    assert result.reason == "no FAIL_TO_PASS: the tests pass without the fix"
    assert result.pass_to_pass == sorted([P, Q])


def test_tests_failing_before_and_after_mean_a_broken_environment_not_a_useless_fix() -> None:
    before: dict[str, Outcome] = {P: "error", Q: "failed", R: "passed"}
    after: dict[str, Outcome] = {P: "error", Q: "failed", R: "passed"}
    result = validate(before, [after] * 3)
    stuck = sorted([P, Q])
    assert not result.accepted and result.stuck == stuck and result.pass_to_pass == [R]
    assert (
        result.reason
        == f"no FAIL_TO_PASS: environment broken: 2 tests fail before and after the fix ({', '.join(stuck)})"
    )


def test_pass_to_fail_regression() -> None:
    before: dict[str, Outcome] = {P: "failed", Q: "passed", R: "passed"}
    after: dict[str, Outcome] = {P: "passed", Q: "error"}  # R vanished: its module no longer imports
    result = validate(before, [after] * 3)
    assert not result.accepted
    assert result.broken == [Q, R]
    assert result.reason == f"PASS→FAIL regression: {Q}, {R}"
    assert result.fail_to_pass == [P]


def test_flaky_between_after_runs() -> None:
    before: dict[str, Outcome] = {P: "failed", Q: "passed", R: "passed"}
    run1: dict[str, Outcome] = {P: "passed", Q: "passed", R: "passed"}
    run2: dict[str, Outcome] = {P: "passed", Q: "failed", R: "passed"}
    run3: dict[str, Outcome] = {P: "passed", R: "passed"}
    result = validate(before, [run1, run2, run3])
    assert not result.accepted
    assert result.flaky == [Q]
    assert result.reason == f"flaky: {Q}"
    assert (result.fail_to_pass, result.pass_to_pass, result.broken) == ([P], [R], [])


def test_fail_to_pass_must_come_from_the_test_patch_when_named() -> None:
    before: dict[str, Outcome] = {P: "failed", R: "passed"}
    after: dict[str, Outcome] = {P: "passed", R: "passed"}
    for selector in (P, "tests/test_a.py", "tests/test_a.py::test_fix"):
        assert validate(before, [after] * 3, [selector]).accepted, selector
    result = validate(before, [after] * 3, ["tests/test_b.py", "tests/test_a.py::test_fi"])
    assert not result.accepted
    assert result.reason == f"no FAIL_TO_PASS among the test patch's tests (FAIL_TO_PASS: {P})"
    assert validate(before, [after] * 3, []).accepted  # nothing named: no check


def test_reason_lists_are_truncated_and_deterministic() -> None:
    ids = [f"tests/test_a.py::test_{i:02d}" for i in range(15)]
    before: dict[str, Outcome] = dict.fromkeys(ids, "passed") | {P: "failed"}
    after: dict[str, Outcome] = dict.fromkeys(reversed(ids), "failed") | {P: "passed"}
    result = validate(before, [after] * 3)
    assert result.broken == ids
    assert result.reason is not None and result.reason.endswith("test_09 (+5 more)")


def test_a_compiled_runner_without_a_report_before_the_fix_failed_every_test() -> None:
    """Go, cargo, CMake: a test patch that uses the fix's new function does not build without it, so the run
    before the fix has no report; SWE-bench reads every test as failed then. pytest keeps the stricter rule."""
    after = [{"TestNew": "passed", "TestOld": "passed"}] * 3
    assert not validate(None, after).accepted  # pytest: the suite did not start
    compiled = validate(None, after, no_report_before_fails=True)
    assert compiled.accepted and compiled.fail_to_pass == ["TestNew", "TestOld"]
    assert not validate(None, [None, None, None], no_report_before_fails=True).accepted


INTERNAL_ERROR_REPORT = b"""<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="12">
<testcase classname="testing.io.test_saferepr" name="test_simple_repr" time="0.001"/>
<testcase classname="testing.io.test_saferepr" name="test_maxsize" time="0.001"/>
<testcase time="0.000"/>
<testcase classname="pytest" name="internal"><error message="internal error">RuntimeError</error></testcase>
</testsuite></testsuites>"""


def test_a_session_that_hit_an_internal_error_passes_nothing() -> None:
    """pytest-7168's test patch crashes pytest (INTERNALERROR in saferepr): the report lists the tests run before
    as passed plus an empty testcase and `pytest.py::internal`; SWE-bench's log parser sees no test pass (no `-rA`
    summary is printed), and neither do we; the empty testcase is no test (it once became the id `.py`)."""
    files = ["testing/io/test_saferepr.py"]
    assert runner_for("pytest").parse(INTERNAL_ERROR_REPORT, files) == {
        "testing/io/test_saferepr.py::test_simple_repr": "error",
        "testing/io/test_saferepr.py::test_maxsize": "error",
    }
    assert ".py" not in pytest_outcomes(INTERNAL_ERROR_REPORT, known_files=files)
