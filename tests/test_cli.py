"""The `swe-forge` CLI and `dagster asset materialize`, as a user runs them (real subprocesses)."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import docker
import pytest

from swe_forge_dagster.languages.node.pack import NODE_IMAGE
from tests.support.demo_run import DemoRun
from tests.support.gharchive_counts import independent_count


def run(
    args: list[str], env: dict[str, str], *, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def cli(*args: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return run([sys.executable, "-m", "swe_forge_dagster.cli", *args], env, timeout=timeout)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SWE_FORGE_", "DAGSTER_"))}
    base.update(SWE_FORGE_HOME=str(tmp_path / "home"), SWE_FORGE_START_DATE="2015-01-01", COLUMNS="200", NO_COLOR="1")
    return base


def test_acceptance_dagster_asset_materialize_then_sql(gharchive_2015: Path, env: dict[str, str]) -> None:
    """Issue acceptance: the 2015-01-01-00:00 hour from a file:// mirror, counted independently."""
    env = {**env, "SWE_FORGE_GHARCHIVE_URL": f"file://{gharchive_2015}"}
    assert cli("setup", env=env).returncode == 0
    dagster_home = Path(env["SWE_FORGE_HOME"]) / "dagster"
    assert (dagster_home / "dagster.yaml").is_file()
    dagster = Path(sys.executable).with_name("dagster")
    materialize = run(
        [
            str(dagster),
            "asset",
            "materialize",
            "-m",
            "swe_forge_dagster.definitions",
            "--select",
            "gharchive_pr_events",
            "--partition",
            "2015-01-01-00:00",
        ],
        {**env, "DAGSTER_HOME": str(dagster_home)},
    )
    assert materialize.returncode == 0, materialize.stderr[-3000:]
    _, actions, merged = independent_count(gharchive_2015 / "2015-01-01-0.json.gz")
    result = cli(
        "sql",
        "SELECT count(*) AS n, count(*) FILTER (WHERE merged) AS merged FROM gharchive_pr_events",
        "--format",
        "json",
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [{"n": sum(actions.values()), "merged": merged}]
    with dg.instance_for_test(temp_dir=str(dagster_home)) as instance:
        records = instance.fetch_materializations(dg.AssetKey("gharchive_pr_events"), limit=5).records
        assert [r.asset_materialization.partition for r in records] == ["2015-01-01-00:00"]


def test_ingest_then_sql_in_every_format(gharchive_2015: Path, env: dict[str, str]) -> None:
    env = {**env, "SWE_FORGE_GHARCHIVE_URL": f"file://{gharchive_2015}"}
    ingest = cli("ingest", "--from", "2015-01-01-00:00", "--to", "2015-01-01-01:00", "--json", env=env)
    assert ingest.returncode == 0, ingest.stderr[-3000:]
    assert "hours materialized: gharchive_pr_events 2/2" in ingest.stderr
    (run,) = json.loads(ingest.stdout)["runs"]  # --json: the same report, for a program
    assert run["status"] == "ok" and run["hours"] == ["2015-01-01-00:00", "2015-01-01-01:00"]
    assert run["materialized"] == {"gharchive_pr_events": 2}
    assert (Path(env["SWE_FORGE_HOME"]) / "catalog.duckdb").is_file()
    sql = "SELECT hour, count(*) AS n FROM gharchive_pr_events GROUP BY hour ORDER BY hour"
    table = cli("sql", sql, env=env)
    assert table.returncode == 0 and "315" in table.stdout and "293" in table.stdout and "(2 rows)" in table.stdout
    csv = cli("sql", sql, "--format", "csv", env=env)
    assert csv.stdout.splitlines() == ["hour,n", "0,315", "1,293"]
    as_json = cli("sql", sql, "-f", "json", env=env)
    assert json.loads(as_json.stdout) == [{"hour": 0, "n": 315}, {"hour": 1, "n": 293}]


def test_cli_errors_are_specific_with_exit_codes(tmp_path: Path, env: dict[str, str]) -> None:
    (tmp_path / "empty-mirror").mkdir()
    env = {**env, "SWE_FORGE_GHARCHIVE_URL": f"file://{tmp_path / 'empty-mirror'}"}
    bad_key = cli("ingest", "2015-01-01T00", env=env)
    assert bad_key.returncode == 2 and "YYYY-MM-DD-HH:00" in bad_key.stderr
    missing = cli("ingest", "2015-01-01-05:00", env=env)
    assert missing.returncode == 1 and "not published yet" in missing.stderr and "skipped" in missing.stderr
    bad_sql = cli("sql", "SELECT * FROM no_such_view", env=env)
    assert bad_sql.returncode == 1 and "SQL error" in bad_sql.stderr and "gharchive_pr_events" in bad_sql.stderr
    bad_format = cli("sql", "SELECT 1", "--format", "xml", env=env)
    assert bad_format.returncode == 2 and "table, csv or json" in bad_format.stderr


@pytest.mark.docker
def test_demo_runs_end_to_end_offline(demo_run: DemoRun, docker_client: docker.DockerClient) -> None:
    result, env = demo_run, demo_run.env  # `swe-forge demo` of this session (tests/support/demo_run.py)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "trimmed" in result.stdout  # recent hours only (SWE_FORGE_START_DATE unset: `demo.run.demo_hours`)
    assert "swe-forge dev" in result.stdout
    demo_home = result.home
    assert (demo_home / "catalog.duckdb").is_file() and (demo_home / "dagster" / "dagster.yaml").is_file()
    # Its home stays in its world (`demo.world_home`): a later command there reads the home's settings.env.
    seen = run(
        [sys.executable, "-c", "from swe_forge_dagster.settings import Settings; print(Settings().model_dump_json())"],
        {**env, "SWE_FORGE_HOME": str(demo_home)},
    )
    home_settings = json.loads(seen.stdout)
    today = dt.datetime.now(dt.UTC).date()  # the demo's first day: the day before its newest hour (days of hours)
    assert today - dt.timedelta(days=2) <= dt.date.fromisoformat(home_settings["start_date"]) < today
    assert home_settings["demo_world"] == str(demo_home / "demo-world")
    assert home_settings["gharchive_url"] == f"file://{demo_home / 'gharchive-mirror'}"
    # The task stage: two Python tasks and a JavaScript one (npm + mocha, on the Node image) exported, the PR
    # whose tests pass without the fix rejected.
    assert "no FAIL_TO_PASS" in result.stdout and "globex-oss__yaml-lite-3" in result.stdout
    python_tasks = ["acme-labs__tinycalc-12", "northwind__datekit-7"]

    def sql(query: str) -> list[dict]:
        done = cli("sql", query, "--format", "json", env={**env, "SWE_FORGE_HOME": str(demo_home)})
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    (js_task,) = sql("SELECT status, stage, reason FROM tasks WHERE task_id = 'initech__slug-lite-4'")
    # the demo builds the Node image its JavaScript task needs when it is missing (`demo.images`)
    assert js_task["status"] == "accepted", js_task
    docker_client.images.get(NODE_IMAGE)
    assert sorted(p.name for p in (demo_home / "tasks").iterdir()) == sorted([*python_tasks, "initech__slug-lite-4"])
    assert (demo_home / "datasets" / "swe_dataset.parquet").is_file()
    rows = {r["instance_id"]: r for r in map(json.loads, (demo_home / "datasets" / "swe_dataset.jsonl").open())}
    js = rows["initech__slug-lite-4"]
    assert (js["language"], rows["acme-labs__tinycalc-12"]["language"]) == ("JavaScript", "Python")
    assert json.loads(js["FAIL_TO_PASS"]) == [
        "slugify accented titles folds letters to their base letter",
        "slugify accented titles folds them with a custom separator too",
    ]
    assert "slugify keeps digits" in json.loads(js["PASS_TO_PASS"]) and len(json.loads(js["PASS_TO_PASS"])) == 5
    environment = json.loads((demo_home / "tasks" / "initech__slug-lite-4" / "environment.json").read_text())
    assert (environment["runner"], environment["image"]) == ("mocha", NODE_IMAGE)
    assert environment["install_commands"][0].startswith("npm ci")  # the committed package-lock.json
    verdicts = sql(
        "SELECT split_part(agent, ' @ ', 1) AS agent, status FROM eval_results WHERE task_id = 'initech__slug-lite-4'"
    )
    assert {(r["agent"], r["status"]) for r in verdicts} == {
        ("oracle", "resolved"),
        ("python -m emptyagent", "unresolved"),
    }


def test_version_and_short_help_on_every_command_whole_when_piped(tmp_path: Path) -> None:
    environment = {**os.environ, "SWE_FORGE_HOME": str(tmp_path / "home")}
    done = cli("--version", env=environment)
    assert done.returncode == 0 and done.stdout.startswith("swe-forge 0.")
    for command in ([], ["llm"], ["llm", "serve"], ["gym"], ["validate"], ["harness"]):
        shown = cli(*command, "-h", env=environment)
        assert shown.returncode == 0 and "Usage: " in shown.stdout and "--help" in shown.stdout, (command, shown.stderr)
        # piped: option names whole (`--no-keep-containers`, not `--no-keep-contai…`), and no type for a flag
        assert "…" not in shown.stdout and "<bool>" not in shown.stdout, shown.stdout
    assert "--no-keep-containers" in cli("harness", "-h", env=environment).stdout
