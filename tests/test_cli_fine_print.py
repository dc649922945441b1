"""The CLI's fine print as a newcomer meets it (issue 39): two options that disagree are an error, not a silent
winner; the input is checked before the options that only matter once it loads; SWE-bench's report from a
predictions run goes where the user said or under the home, never silently into the current folder."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from swe_forge_dagster.cli.harness_predictions import report_writer
from tests.support.common import run_cli


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SWE_FORGE_", "DAGSTER_"))}
    return {**base, "SWE_FORGE_HOME": str(tmp_path / "home"), "COLUMNS": "200", "NO_COLOR": "1"}


def cli(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=env, cwd=cwd)


def test_json_and_another_format_are_an_error_not_a_silent_choice(env: dict[str, str], tmp_path: Path) -> None:
    done = cli(env, tmp_path, "sql", "-f", "csv", "--json", "SELECT 1 AS one")
    assert done.returncode == 2 and "--json asks for JSON and --format for csv" in done.stderr, done.stderr
    agree = cli(env, tmp_path, "sql", "-f", "json", "--json", "SELECT 1 AS one")
    assert agree.returncode == 0 and json.loads(agree.stdout) == [{"one": 1}], agree.stderr
    assert cli(env, tmp_path, "sql", "-f", "csv", "SELECT 1 AS one").stdout.split() == ["one", "1"]


def test_a_missing_input_is_named_before_any_option(env: dict[str, str], tmp_path: Path) -> None:
    done = cli(env, tmp_path, "harness", "-i", str(tmp_path / "nonexistent"))
    assert done.returncode == 2, done.stderr
    assert f"--input {tmp_path / 'nonexistent'}: no such file or directory" in done.stderr
    assert "--agent-dir" not in done.stderr


def test_the_swebench_report_goes_under_the_home_unless_an_output_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = SimpleNamespace(model_name="gold", run_id="r1")
    home_reports = tmp_path / "home" / "reports"
    summary: dict = {}
    report_writer([], config, [], output=None, json_output=True, reports_dir=home_reports)([], summary)  # type: ignore[arg-type]
    assert Path(summary["swebench_report"]).parent == home_reports and not list(tmp_path.glob("gold*.json"))
    report_writer([], config, [], output=tmp_path / "out" / "s.json", json_output=True, reports_dir=home_reports)(
        [], summary
    )  # type: ignore[arg-type]
    assert Path(summary["swebench_report"]).parent == tmp_path / "out"


def test_help_obeys_the_width_the_user_gives_and_keeps_option_names_whole(env: dict[str, str], tmp_path: Path) -> None:
    narrow = cli({**env, "COLUMNS": "60"}, tmp_path, "harness", "-h")
    assert narrow.returncode == 0 and max(len(line) for line in narrow.stdout.splitlines()) <= 60, narrow.stdout
    assert "--agent-dir" in narrow.stdout and "--input" in narrow.stdout
    piped = cli({k: v for k, v in env.items() if k not in ("COLUMNS", "TERMINAL_WIDTH")}, tmp_path, "harness", "-h")
    assert max(len(line) for line in piped.stdout.splitlines()) <= 120 and "--no-keep-containers" in piped.stdout
