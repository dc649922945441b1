"""Runs in containers, a lake on an object store, a second machine: the many-machines deployment end to end.

One deployment for the module (`tests/support/deployment.py`): deploy/start brings up Debian's PostgreSQL (the
Dagster instance and the shared state), SeaweedFS (the S3 store; `SWE_FORGE_HOME=s3://deployment/home`),
Debian's docker-registry, the project image's code server, the webserver and the daemon, which launches
every submitted run in a container of the project image (DockerRunLauncher). In file order:

1. `swe-forge ingest --submit --wait` of the two fixture hours: one run in a container; its events in
   Postgres, its Parquet on the store (nothing in the local folder), `swe-forge sql` over the S3 lake
   gives 315 and 293 PullRequestEvents.
2. `swe-forge mine --submit --once --max-tasks 1`: the world's hour and its first easy task, each a run in
   a container; the task's export on the store, its environment image pushed to the registry.
3. The task's run submitted again and its container `docker kill`ed while `task_validation` runs: the
   daemon's run monitoring fails the run and its run retries launch it again from the failed step, in a
   new container that takes the earlier stages' results from the store. Nothing lost (accepted, exported,
   every stage's result on the store), nothing duplicated (one `tasks` row, the same ledger and lake rows).
4. A second "machine" — another SWE_FORGE_LOCAL_DIR and working directory, the same Postgres, store and
   registry — re-runs the world's hour (`hourly_pipeline_job`) and the task (`task_job`) in-process on the
   host (not through the launcher: the launcher's runs all share the first machine's local folder) with 0
   requests to the GitHub twin and 0 to the LLM twin (the shared GitHub store and answer cache answer),
   and the environment image, removed from the engine first, comes back from the registry (same image id).

Cost: the image is rebuilt only when its inputs changed (deploy/build-image: under a minute cold, seconds after a
source change); the rest 5 to 6.5 minutes on 2 cores (most of it the three task runs, each step a process
that loads the definitions, and up to 60 s until the run monitor's poll sees the killed container).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import docker
import httpx
import psycopg2
import pyarrow.parquet as pq
import pytest

from swe_forge_dagster.common.dagster_names import GHARCHIVE_JOB, HOURLY_PIPELINE_JOB, TASK_JOB, TASK_PARTITIONS
from swe_forge_dagster.environments.environment import env_image_tag
from swe_forge_dagster.orchestration.submit import ENDED, submitter
from swe_forge_dagster.tasks.recipes import RecipeStore
from tests.support.common import BASE_IMAGE, REPO_ROOT
from tests.support.deployment import BUCKET, FIXTURE_FILES, FIXTURE_HOURS, IMAGE, PREFIX, Deployment, running_deployment
from tests.support.gharchive_counts import independent_count

HOURS = ("2015-01-01-00:00", "2015-01-01-01:00")
TASK, REPO = "acme-labs__tinycalc-12", "acme-labs/tinycalc"
PER_HOUR = "SELECT dt, hour, count(*) AS n FROM gharchive_pr_events GROUP BY ALL ORDER BY ALL"
KILL_AT = "task_validation"

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> Iterator[Deployment]:
    with running_deployment(tmp_path_factory.mktemp("deployment"), docker_client) as running:
        yield running


def _ledger_rows(url: str) -> int:
    with contextlib.closing(psycopg2.connect(url)) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM swe_forge.processed_prs")
        return cursor.fetchone()[0]


def test_submitted_hours_run_in_a_container_and_their_parquet_lands_on_the_store(
    deployment: Deployment, docker_client: docker.DockerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = deployment.swe_forge("ingest", "--submit", "--wait", "--from", HOURS[0], "--to", HOURS[1])
    assert result.returncode == 0, result.stderr[-3000:]
    (run_id,) = result.stdout.split()  # two contiguous hours: one run, as a multi-run backfill would make
    assert f"submitted run {run_id[:8]}" in result.stderr and "gharchive_pr_events 2/2" in result.stderr

    # The run's record and events are in Postgres (this process opens the deployment's instance).
    with deployment.instance(monkeypatch) as instance:
        run = instance.get_run_by_id(run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
        assert type(instance.run_launcher).__name__ == "DockerRunLauncher"
        assert run.tags["swe_forge/launched_by"] == "cli-submit" and run.tags["dagster/image"] == IMAGE
        materialized = instance.fetch_materializations(dg.AssetKey("gharchive_pr_events"), limit=10).records
        assert sorted(r.partition_key for r in materialized if r.run_id == run_id) == list(HOURS)
    with contextlib.closing(psycopg2.connect(deployment.postgres_url)) as connection, connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM event_logs WHERE run_id = %s AND dagster_event_type = %s",
            (run_id, "ASSET_MATERIALIZATION"),
        )
        assert cursor.fetchone() == (2,)

    # It ran in its own container of the project image, which has exited; the data is on the store.
    container = docker_client.containers.get(run.tags["docker/container_id"])
    assert container.labels["dagster/run_id"] == run_id and IMAGE in container.image.tags
    assert container.attrs["State"]["Status"] == "exited" and container.attrs["State"]["ExitCode"] == 0
    assert container.attrs["HostConfig"]["NetworkMode"] == "host"
    store = deployment.store()
    for hour, name in zip(HOURS, FIXTURE_FILES, strict=True):
        part = f"{BUCKET}/{PREFIX}/lake/gharchive_pr_events/dt=2015-01-01/hour={hour[11:13]}/part-0.parquet"
        _, actions, _ = independent_count(FIXTURE_HOURS / name)
        assert pq.read_table(part, filesystem=store).num_rows == sum(actions.values())
    assert not (deployment.local / "lake").exists()  # the local folder holds per-machine state only
    assert deployment.sql(PER_HOUR) == ["dt,hour,n", "2015-01-01,0,315", "2015-01-01,1,293"]


def test_the_next_step_deploy_start_prints_runs_as_printed_from_a_fresh_shell(
    deployment: Deployment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """deploy/start's last line is a command to paste: run exactly as printed, in a shell where this clone's
    environment is not on PATH and no setting is exported but the database the user brought (the env file it
    sources brings the rest), from another folder."""
    (line,) = [line for line in deployment.start_log.splitlines() if line.startswith("start: next:")]
    command = line.removeprefix("start: next:").strip()
    venv_bin = str(Path(sys.executable).parent)
    fresh = {k: v for k, v in os.environ.items() if not k.startswith(("SWE_FORGE_", "DAGSTER_", "AWS_"))}
    fresh["PATH"] = os.pathsep.join(p for p in fresh.get("PATH", "").split(os.pathsep) if p != venv_bin)
    # the one variable the user set themselves and deploy/start never writes to a file: the database they brought
    fresh["SWE_FORGE_POSTGRES_URL"] = deployment.env["SWE_FORGE_POSTGRES_URL"]
    done = subprocess.run(["bash", "-c", command], env=fresh, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, (command, done.stderr[-3000:])
    (run_id,) = done.stdout.split()
    with deployment.instance(monkeypatch) as instance:  # let the run end before the next test uses the launcher
        deadline = time.monotonic() + 300
        while (run := instance.get_run_by_id(run_id)) is not None and not run.is_finished:
            assert time.monotonic() < deadline, f"run {run_id} still {run.status}"
            time.sleep(2)
        assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS


def test_mine_submit_builds_a_task_in_a_run_container_and_shares_its_environment_image(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The newest hour and its first easy task, each a run in a container; the task's sandboxes go through
    the host's engine (the mounted socket), and the environment image it built is pushed to the registry."""
    result = deployment.swe_forge(
        "mine", "--submit", "--once", "--max-tasks", "1", "--difficulty", "easy", "--json", timeout=1500
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["exported"] == 1 and summary["tasks"][0]["task_id"] == TASK
    assert [h["hour"] for h in summary["hours"]] == deployment.world.hours[:1]
    assert deployment.store().isfile(f"{BUCKET}/{PREFIX}/tasks/{TASK}/workspace.yaml")

    with deployment.instance(monkeypatch) as instance:
        runs = [r.dagster_run for r in instance.get_run_records() if r.dagster_run.job_name != GHARCHIVE_JOB]
    assert sorted(r.job_name for r in runs) == [HOURLY_PIPELINE_JOB, TASK_JOB]
    assert all(r.status == dg.DagsterRunStatus.SUCCESS and r.tags["dagster/image"] == IMAGE for r in runs)
    assert all(r.tags["swe_forge/launched_by"] == "cli-submit" for r in runs)

    recipe = RecipeStore(deployment.local / "cache" / "recipes").get(REPO, BASE_IMAGE)
    assert recipe is not None
    repository, tag = env_image_tag(REPO, recipe).split(":")
    listed = httpx.get(f"http://127.0.0.1:{deployment.registry_port}/v2/{repository}/tags/list", timeout=10).json()
    assert tag in listed["tags"]


def _wait_for(what: str, check, timeout: float, poll: float = 0.25):  # noqa: ANN001, ANN202
    deadline = time.monotonic() + timeout
    while not (found := check()):
        assert time.monotonic() < deadline, f"timed out after {timeout:.0f}s waiting for {what}"
        time.sleep(poll)
    return found


def test_a_run_container_killed_mid_step_is_retried_and_loses_and_duplicates_nothing(
    deployment: Deployment, docker_client: docker.DockerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {
        "lake": deployment.sql(PER_HOUR),
        "ledger": _ledger_rows(deployment.postgres_url),
        "tasks": deployment.sql("SELECT task_id, status FROM tasks ORDER BY ALL"),
    }
    assert before["tasks"] == ["task_id,status", f"{TASK},accepted"]
    monkeypatch.setenv("SWE_FORGE_CODE_HOST", "127.0.0.1")
    monkeypatch.setenv("SWE_FORGE_CODE_PORT", str(deployment.registry_port + 1))
    with deployment.instance(monkeypatch) as instance:
        with submitter(instance, REPO_ROOT / "deploy" / "workspace.yaml") as runs:
            (submitted,) = runs.submit_partitions(TASK_JOB, [TASK], TASK_PARTITIONS)
        run_id = submitted.run_id

        def step_started() -> str | None:
            run = instance.get_run_by_id(run_id)
            assert run is not None and run.status not in ENDED, f"run ended before {KILL_AT} started"
            logs = instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_START)
            return run.tags.get("docker/container_id") if any(e.step_key == KILL_AT for e in logs) else None

        container_id = _wait_for(f"{KILL_AT} to start", step_started, timeout=300)
        docker_client.containers.get(container_id).kill()
        succeeded = {e.step_key for e in instance.all_logs(run_id, of_type=dg.DagsterEventType.STEP_SUCCESS)}
        assert KILL_AT not in succeeded and "task_environment" in succeeded  # killed mid-step, not after it

        # The daemon sees the dead container (run monitoring) and fails the run; run retries launch it again.
        killed = _wait_for(
            "the run to be failed", lambda: (r := instance.get_run_by_id(run_id)).is_finished and r, timeout=180, poll=1
        )
        assert killed.status == dg.DagsterRunStatus.FAILURE
        retries = dg.RunsFilter(tags={"dagster/parent_run_id": run_id})
        retry = _wait_for(
            "the retry to end", lambda: [r for r in instance.get_runs(retries) if r.is_finished], timeout=300, poll=1
        )[0]
        assert retry.status == dg.DagsterRunStatus.SUCCESS, retry.run_id
        assert retry.tags["dagster/partition"] == TASK and retry.tags["docker/container_id"] != container_id
        redone = {e.step_key for e in instance.all_logs(retry.run_id, of_type=dg.DagsterEventType.STEP_SUCCESS)}
        assert KILL_AT in redone and "task_patch" not in redone  # from the failed step on, earlier results reused

    # Nothing lost: the task is accepted and exported, every stage's result is on the store.
    store = deployment.store()
    for name in ("patch", "environment", "tests", "validation", "quality", "export"):
        assert store.isfile(f"{BUCKET}/{PREFIX}/work/{TASK}/{name}.json"), name
    assert store.isfile(f"{BUCKET}/{PREFIX}/tasks/{TASK}/workspace.yaml")
    # Nothing duplicated: one row for the task, the same lake and ledger rows.
    assert deployment.sql("SELECT task_id, status FROM tasks ORDER BY ALL") == before["tasks"]
    assert deployment.sql(PER_HOUR) == before["lake"] and _ledger_rows(deployment.postgres_url) == before["ledger"]


SECOND_MACHINE = """
import json, sys
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.orchestration.instance import open_instance
from swe_forge_dagster.orchestration.launcher import materialize_hours, run_partitions
from swe_forge_dagster.settings import get_settings

settings = get_settings()
instance = open_instance(settings)
defs = build_definitions(settings)
(hour,) = materialize_hours(defs, instance, [sys.argv[1]], job_name="hourly_pipeline_job")
tasks = run_partitions(defs, instance, "task_job", [sys.argv[2]])
print(json.dumps({"hour": hour.success, "errors": hour.errors, "tasks": tasks}))
"""


def test_a_second_machine_reruns_the_hour_and_the_task_with_no_request_and_pulls_the_image(
    deployment: Deployment, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    hour = deployment.world.hours[0]
    classified = "SELECT repo_name, number, difficulty FROM classified_prs ORDER BY ALL"
    before = {
        "classified": deployment.sql(classified),
        "ledger": _ledger_rows(deployment.postgres_url),
        "tasks": deployment.sql("SELECT task_id, status FROM tasks ORDER BY ALL"),
    }
    assert len(before["classified"]) > 1
    recipe = RecipeStore(deployment.local / "cache" / "recipes").get(REPO, BASE_IMAGE)
    assert recipe is not None
    image = env_image_tag(REPO, recipe)
    image_id = docker_client.images.get(image).id
    docker_client.images.remove(image, force=True)  # the second machine's engine does not have it

    machine = deployment.local.parent / "machine-2"  # beside the first: the module's teardown cleans both
    workdir = tmp_path / "machine-2-workdir"
    workdir.mkdir()
    deployment.github.reset_counters()
    deployment.llm.reset()
    result = deployment.python("-c", SECOND_MACHINE, hour, TASK, machine=machine, cwd=workdir, timeout=900)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert json.loads(result.stdout.splitlines()[-1]) == {"hour": True, "errors": [], "tasks": {TASK: True}}
    assert deployment.github.count() == 0 and deployment.llm.count() == 0

    # Its own Dagster home and caches, nothing of the lake; the image pulled (the same id), not rebuilt.
    assert (machine / "dagster" / "dagster.yaml").is_file() and not (machine / "lake").exists()
    assert docker_client.images.get(image).id == image_id
    environment = json.loads((machine / "work" / TASK / "environment.json").read_text())
    assert environment["image"] == image and environment["image_cached"] is True
    # The shared lake and ledger: the same classified PRs, still one task row, no new ledger rows.
    assert deployment.sql(classified) == before["classified"]
    assert deployment.sql("SELECT task_id, status FROM tasks ORDER BY ALL") == before["tasks"]
    assert _ledger_rows(deployment.postgres_url) == before["ledger"]
