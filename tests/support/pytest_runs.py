"""A real pytest run of one test file over a small package, read from its JUnit report (the twins' tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from swe_forge_dagster.languages.python.junit_ids import pytest_outcomes


def run_tests(tmp_path: Path, calc: str, content: bytes) -> dict[str, str]:
    """A real pytest run of `content` as `tests/test_calc.py`, with `calc` as the code under test (`calc.py`)."""
    (tmp_path / "tests").mkdir(parents=True, exist_ok=True)
    (tmp_path / "calc.py").write_text(calc)
    (tmp_path / "tests" / "test_calc.py").write_bytes(content)
    report = tmp_path / "report.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", "tests"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        timeout=120,
    )
    return pytest_outcomes(report.read_text(), known_files=["tests/test_calc.py"])
