"""Next steps printed as commands that run as printed (`common.invocation`)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from swe_forge_dagster.common.invocation import CLONE, next_step


def test_a_next_step_runs_as_printed_from_the_clone_and_from_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # a fresh shell: `swe-forge` is not on it
    home = tmp_path / "a home"
    for where, expected in ((CLONE, "./swe-forge"), (tmp_path, shlex.quote(str(CLONE / "swe-forge")))):
        monkeypatch.chdir(where)
        line = next_step("--version", home=home)
        assert line == f"SWE_FORGE_HOME={shlex.quote(str(home))} {expected} --version"
        done = subprocess.run(
            ["bash", "-c", line], cwd=where, capture_output=True, text=True, timeout=300, env={**os.environ}
        )
        assert done.returncode == 0 and done.stdout.startswith("swe-forge "), done.stderr
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:/usr/bin:/bin")  # the environment activated
    assert next_step("sql", "SELECT 1") == "swe-forge sql 'SELECT 1'"
