"""`--submit` of `swe-forge ingest` and `mine` when it cannot work: clear errors, the right exit codes, no run.

The runs themselves are submitted for real in tests/test_docker_run_launcher.py (a deployment with
DockerRunLauncher); these are the refusals, which need no Docker and no daemon.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "swe_forge_dagster.cli", *args], env=env, capture_output=True, text=True, timeout=300
    )


def test_submit_refusals_name_what_to_set(tmp_path: Path, gharchive_2015: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWE_FORGE_", "DAGSTER_"))}
    env.update(
        SWE_FORGE_HOME=str(tmp_path / "home"),
        SWE_FORGE_START_DATE="2015-01-01",
        COLUMNS="200",
        SWE_FORGE_GHARCHIVE_URL=f"file://{gharchive_2015}",
    )
    hour = "2015-01-01-00:00"

    wait_alone = _cli(env, "ingest", "--wait", hour)
    assert wait_alone.returncode == 2 and "--wait and --workspace go with --submit" in wait_alone.stderr
    no_workspace = _cli(env, "ingest", "--submit", hour)
    assert no_workspace.returncode == 1 and "SWE_FORGE_WORKSPACE" in no_workspace.stderr
    assert not no_workspace.stdout.strip()  # no run id: nothing was submitted
    override = _cli(env, "ingest", "--submit", "--gharchive-url", "http://127.0.0.1:9", hour)
    assert override.returncode == 2 and "SWE_FORGE_GHARCHIVE_URL where the daemon runs" in override.stderr

    # A workspace whose code server is down: the error says so, and no run is created.
    workspace = tmp_path / "workspace.yaml"
    workspace.write_text(
        "load_from:\n  - grpc_server:\n      host: 127.0.0.1\n      port: 9\n      location_name: swe_forge\n"
    )
    down = _cli({**env, "SWE_FORGE_WORKSPACE": str(workspace)}, "ingest", "--submit", hour)
    assert down.returncode == 1 and "does not load (is its server running?" in down.stderr, down.stderr[-2000:]
    with dg.DagsterInstance.from_config(str(tmp_path / "home" / "dagster")) as instance:
        assert instance.get_run_records() == []

    run_side = _cli(env, "mine", "--submit", "--once", "--model", "m", "--min-stars", "5")
    assert run_side.returncode == 2 and "--model, --min-stars would not reach submitted runs" in run_side.stderr


def test_wait_follows_the_retry_chain_and_times_out_naming_the_runs() -> None:
    """run_retries launches a new run for a failed one (dagster/will_retry=true): wait ends with the last retry."""
    from swe_forge_dagster.orchestration.submit import SubmitError, SubmittedRun, wait

    status = dg.DagsterRunStatus
    with dg.DagsterInstance.ephemeral() as instance:

        def put(run_id: str, state: dg.DagsterRunStatus, **tags: str) -> None:
            if instance.get_run_by_id(run_id) is not None:
                instance.delete_run(run_id)
            instance.add_run(dg.DagsterRun(job_name="j", run_id=run_id, status=state, tags=tags))

        first, retry, second = "a" * 36, "b" * 36, "c" * 36
        put(first, status.FAILURE, **{"dagster/will_retry": "true"})  # the retry is not created yet
        put(second, status.SUCCESS)
        steps = iter(
            [
                lambda: put(retry, status.STARTED, **{"dagster/parent_run_id": first}),
                lambda: put(retry, status.SUCCESS, **{"dagster/parent_run_id": first}),
            ]
        )
        said: list[str] = []
        runs = [SubmittedRun(first, "j", ["h1"]), SubmittedRun(second, "j", ["h2"])]
        outcomes = wait(instance, runs, said.append, sleep=lambda _: next(steps)())
        assert [(o.run_id, o.success) for o in outcomes] == [(retry, True), (second, True)]
        assert any("retried as run bbbbbbbb" in message for message in said)

        put(retry, status.STARTED)
        with pytest.raises(SubmitError, match=retry):
            wait(instance, [SubmittedRun(retry, "j", ["h1"])], said.append, sleep=lambda _: None, timeout=0.0)
