"""Expected failures (pytest's xfail) as SWE-bench reads them, in validation's lists and the harness's checks,
checked against SWE-bench's own `parse_log_pytest` and grading on real pytest runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from swe_forge_dagster.execution.suite import SuiteRun
from swe_forge_dagster.harness.checks import check_passes
from swe_forge_dagster.languages.registry import runner_for
from swe_forge_dagster.tasks.prove import with_unlisted
from swe_forge_dagster.tasks.validation import validate

P = "tests/test_a.py::test_fix[1.5-a/b]"
Q = "tests/test_a.py::TestK::test_keep"
R = "tests/test_b.py::test_other"


XFAIL_MODULE = """import pytest
import calc


def test_fixed():
    assert calc.half(3) == 1.5


def test_kept():
    assert calc.half(4) == 2


@pytest.mark.xfail(reason="a known bug the fix does not touch")
def test_known_bug():
    assert calc.half(-1) == 0


@pytest.mark.xfail(strict=True, reason="strict")
def test_known_bug_strict():
    assert calc.half(-3) == 0


def test_feature_or_xfail():
    if not hasattr(calc, "third"):
        pytest.xfail("no third() yet")
    assert calc.third(3) == 1


@pytest.mark.xfail(reason="passes unexpectedly")
def test_unexpected_pass():
    assert calc.half(8) == 4


def test_the_fix_turns_into_an_xfail():
    if hasattr(calc, "third"):
        pytest.xfail("the fixed code calls pytest.xfail()")
"""
XFAIL_BEFORE = "def half(x):\n    return x // 2\n"
XFAIL_AFTER = "def half(x):\n    return x / 2\n\n\ndef third(x):\n    return x // 3\n"


def run_pytest_both_ways(tmp_path: Path, source: str) -> tuple[bytes, str]:
    """A real pytest run of XFAIL_MODULE against `source`: (its JUnit report, its `-rA` console log)."""
    (tmp_path / "tests").mkdir(exist_ok=True)
    (tmp_path / "tests/test_calc.py").write_text(XFAIL_MODULE)
    (tmp_path / "calc.py").write_text(source)
    report = tmp_path / "report.xml"
    report.unlink(missing_ok=True)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "junit_family=xunit1"]
    command += [f"--junitxml={report}", "-rA", "-q", "tests/test_calc.py"]
    env = {"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env, check=False)
    return report.read_bytes(), done.stdout


def test_expected_failures_are_in_no_list_as_in_swebenchs_datasets(tmp_path: Path) -> None:
    """Real pytest, before and after a fix: our lists (JUnit, `validate`) are the ones SWE-bench's datasets hold for
    the same runs read by its own `parse_log_pytest`: tests `PASSED` before and after, or failing before and `PASSED`
    after. An `XPASS` is in neither (its parser leaves it out; JUnit writes it as a pass, the console names it), nor
    an `XFAIL` (which SWE-bench's grading counts as a pass): of the 127 xfail-marked tests in
    the files SWE-bench Lite's test patches touch, its lists hold none that xfails on Linux."""
    from swebench.harness.log_parsers.python import parse_log_pytest

    runner = runner_for("pytest")
    files = ["tests/test_calc.py"]
    xml_before, log_before = run_pytest_both_ways(tmp_path, XFAIL_BEFORE)
    xml_after, log_after = run_pytest_both_ways(tmp_path, XFAIL_AFTER)
    before, after = runner.parse(xml_before, files), runner.parse(xml_after, files)
    assert before["tests/test_calc.py::test_known_bug"] == after["tests/test_calc.py::test_known_bug"] == "xfailed"
    assert after["tests/test_calc.py::test_unexpected_pass"] == "passed"  # JUnit writes an XPASS as a pass...
    before = with_unlisted(SuiteRun(before, 1, log_before, 1.0), runner).outcomes or {}
    after = with_unlisted(SuiteRun(after, 1, log_after, 1.0), runner).outcomes or {}
    assert after["tests/test_calc.py::test_unexpected_pass"] == "xpassed"  # ...its console says otherwise
    ours = validate(before, [after, dict(after)])

    status_before = parse_log_pytest(log_before, None)  # type: ignore[arg-type]
    status_after = parse_log_pytest(log_after, None)  # type: ignore[arg-type]
    assert status_before["tests/test_calc.py::test_known_bug"] == "XFAIL"
    assert "tests/test_calc.py::test_unexpected_pass" not in status_after  # SWE-bench's parser reads no XPASS
    ids = sorted(set(status_before) | set(status_after))
    passed_after = [t for t in ids if status_after.get(t) == "PASSED"]
    theirs_f2p = [t for t in passed_after if status_before.get(t) in (None, "FAILED", "ERROR")]
    theirs_p2p = [t for t in passed_after if status_before.get(t) == "PASSED"]
    assert ours.fail_to_pass == theirs_f2p == ["tests/test_calc.py::test_fixed"]
    assert ours.pass_to_pass == theirs_p2p == ["tests/test_calc.py::test_kept"]
    assert ours.accepted and not ours.broken  # passed -> xfailed is no regression either (as passed -> skipped)


def test_an_xfail_keeps_a_pass_to_pass_check_only_as_it_was_at_base() -> None:
    """The harness's rule (`check_passes`): a PASS_TO_PASS test xfailed where no agent code ran may xfail again; one
    that passed there must pass (code under test calling `pytest.xfail()` hides nothing); FAIL_TO_PASS must pass."""
    base = {Q: "xfailed"}
    assert check_passes("pass_to_pass", Q, "xfailed", None)  # the sanity run itself
    assert check_passes("pass_to_pass", Q, "xfailed", base) and check_passes("pass_to_pass", Q, "passed", base)
    assert not check_passes("pass_to_pass", R, "xfailed", base)  # passed at base, xfailed after the agent's diff
    assert not check_passes("fail_to_pass", P, "xfailed", {P: "xfailed"}) and not check_passes(
        "fail_to_pass", P, "xfailed", None
    )
    assert not check_passes("pass_to_pass", Q, "skipped", {Q: "skipped"})
    assert not check_passes("pass_to_pass", Q, "failed", base)
