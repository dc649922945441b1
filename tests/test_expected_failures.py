"""Expected failures (pytest's xfail) as SWE-bench reads them, in validation's lists and the harness's checks,
checked against SWE-bench's own `parse_log_pytest` and grading on real pytest runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from swe_forge_dagster.harness.checks import check_passes
from swe_forge_dagster.languages.registry import runner_for
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


def test_expected_failures_give_the_lists_swebenchs_own_parser_and_grading_give(tmp_path: Path) -> None:
    """Real pytest, before and after a fix: our lists (JUnit, `validate`) equal the ones SWE-bench's `parse_log_pytest`
    and its grading (`test_passed`/`test_failed`: XFAIL passes) make from the same runs' `-rA` logs, but for the one
    deliberate difference: a test the fix turns from passed into xfailed is not PASS_TO_PASS here."""
    from swebench.harness.grading import test_failed, test_passed
    from swebench.harness.log_parsers.python import parse_log_pytest

    runner = runner_for("pytest")
    files = ["tests/test_calc.py"]
    xml_before, log_before = run_pytest_both_ways(tmp_path, XFAIL_BEFORE)
    xml_after, log_after = run_pytest_both_ways(tmp_path, XFAIL_AFTER)
    before, after = runner.parse(xml_before, files), runner.parse(xml_after, files)
    assert before["tests/test_calc.py::test_known_bug"] == after["tests/test_calc.py::test_known_bug"] == "xfailed"
    ours = validate(before, [after, dict(after)])

    status_before = parse_log_pytest(log_before, None)  # type: ignore[arg-type]
    status_after = parse_log_pytest(log_after, None)  # type: ignore[arg-type]
    ids = sorted(set(status_before) | set(status_after))
    theirs_f2p = [t for t in ids if test_failed(t, status_before) and test_passed(t, status_after)]
    theirs_p2p = [t for t in ids if test_passed(t, status_before) and test_passed(t, status_after)]
    turned = "tests/test_calc.py::test_the_fix_turns_into_an_xfail"
    assert theirs_f2p == ours.fail_to_pass == ["tests/test_calc.py::test_fixed"]
    assert [t for t in theirs_p2p if t != turned] == ours.pass_to_pass
    assert set(ours.pass_to_pass) >= {
        "tests/test_calc.py::test_kept",
        "tests/test_calc.py::test_known_bug",
        "tests/test_calc.py::test_known_bug_strict",
        "tests/test_calc.py::test_feature_or_xfail",  # xfailed before, passes after: kept, as SWE-bench keeps it
    }
    assert turned in theirs_p2p and ours.accepted


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
