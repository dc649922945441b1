"""Runs in containers: deploy/start brings up the deployment (project image from deploy/Dockerfile, Postgres
instance, SeaweedFS, docker-registry, code server, webserver, daemon) and `swe-forge ingest --submit --wait`
sends two GH Archive hours through the run queue; the daemon launches the run with DockerRunLauncher.

What must hold: the run ran in a container of the project image (not in this process), its events are in
the Postgres event log, and its Parquet files outlived the container in the host folder SWE_FORGE_HOME
names (the trap of a plain DockerRunLauncher: SUCCESS, and the data left inside the stopped container),
with exactly the PullRequestEvents of each hour. Cost: the image is rebuilt only when its inputs changed
(deploy/build-image: about a minute after a source change, seconds otherwise); the rest about 2 minutes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import docker
import httpx
import pyarrow.parquet as pq
import pytest

from swe_forge_dagster.demo.twins.github_twin import GithubTwin
from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin
from swe_forge_dagster.demo.worlds.task_world import TaskWorld, build_task_world
from swe_forge_dagster.demo.worlds.world_agent import world_agent_responder
from swe_forge_dagster.execution.environment import env_image_tag
from swe_forge_dagster.tasks.recipes import RecipeStore
from tests.support.common import BASE_IMAGE, REPO_ROOT, SHARED_FIXTURES
from tests.support.gharchive_counts import independent_count
from tests.support.gharchive_server import GharchiveServer
from tests.support.postgres_server import postgres_database
from tests.support.registry_server import registry_binary

IMAGE = "swe-forge:test"
HOURS = ("2015-01-01-00:00", "2015-01-01-01:00")
FIXTURE_HOURS = SHARED_FIXTURES / "gharchive" / "full-hours-2015-01-01"
TOKEN, KEY = "ghp_deploy_test_token_0123", "sk-deploy-test-key-0123"


def _free_base(count: int) -> int:
    """A port p with p..p+count-1 all free on 127.0.0.1 (SeaweedFS takes 8 consecutive ports)."""
    for base in range(31000, 60000, 97):
        with contextlib.ExitStack() as stack:
            try:
                for port in range(base, base + count):
                    sock = stack.enter_context(socket.socket())
                    sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return base
    raise RuntimeError("no block of free ports")


@dataclass
class Deployment:
    dir: Path
    env: dict[str, str]
    home: Path
    postgres_url: str
    world: TaskWorld
    registry_port: int

    def swe_forge(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """`swe-forge ARGS` in a shell that sourced the deployment's env file, as a user would."""
        command = f'. "{self.dir}/env" && exec "{sys.executable}" -m swe_forge_dagster.cli "$@"'
        return subprocess.run(["bash", "-c", command, "swe-forge", *args], env=self.env, capture_output=True,
                              text=True, timeout=timeout)  # fmt: skip


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> Iterator[Deployment]:
    """The deployment, with a GH Archive mirror (the fixture hours and the task world's) and the world's
    GitHub and LLM twins; the world's git remotes sit in the host folder, which run containers mount."""
    if not (FIXTURE_HOURS / "2015-01-01-0.json.gz").is_file():
        pytest.skip(f"GH Archive fixture hours missing in {FIXTURE_HOURS}")
    registry_binary()  # skip (or fail under SWE_FORGE_REQUIRE_DOCKER=1) without Debian's docker-registry
    root = tmp_path_factory.mktemp("deployment")
    home, mirror = root / "home", root / "mirror"
    world = build_task_world(home / "world", mirror=mirror)
    for name in ("2015-01-01-0.json.gz", "2015-01-01-1.json.gz"):  # beside the world's hours (a temporary copy)
        shutil.copyfile(FIXTURE_HOURS / name, mirror / name)
    with contextlib.ExitStack() as stack:
        postgres_url = stack.enter_context(postgres_database(root / "postgres"))
        gharchive = stack.enter_context(GharchiveServer(mirror))
        github = stack.enter_context(GithubTwin(world.github, token=TOKEN))
        llm = stack.enter_context(OpenAITwin(world_agent_responder(world.git), api_key=KEY))
        base = _free_base(12)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SWE_FORGE_", "DAGSTER_", "AWS_"))}
        env.pop("OPENROUTER_API_KEY", None)
        env.update(
            SWE_FORGE_DEPLOY_DIR=str(root / "deploy"), SWE_FORGE_HOME=str(home), SWE_FORGE_IMAGE=IMAGE,
            SWE_FORGE_POSTGRES_URL=postgres_url, SWE_FORGE_START_DATE="2015-01-01",
            SWE_FORGE_GHARCHIVE_URL=gharchive.url, SWE_FORGE_GITHUB_API_URL=github.url, GITHUB_TOKEN=TOKEN,
            SWE_FORGE_LLM_BASE_URL=llm.url, SWE_FORGE_LLM_API_KEY=KEY, SWE_FORGE_GIT_URL=world.git.url_template,
            SWE_FORGE_DOCKER_IMAGE=BASE_IMAGE, SWE_FORGE_S3_PORT=str(base), SWE_FORGE_REGISTRY_PORT=str(base + 8),
            SWE_FORGE_CODE_PORT=str(base + 9), SWE_FORGE_UI_PORT=str(base + 10), COLUMNS="200", NO_COLOR="1",
        )  # fmt: skip
        started = subprocess.run([str(REPO_ROOT / "deploy" / "start")], env=env, capture_output=True, text=True,
                                 timeout=1500)  # fmt: skip
        try:
            assert started.returncode == 0, started.stderr[-4000:]
            yield Deployment(root / "deploy", env, home, postgres_url, world, base + 8)
        finally:
            stopped = subprocess.run([str(REPO_ROOT / "deploy" / "stop")], env=env, capture_output=True, text=True,
                                     timeout=300)  # fmt: skip
            for container in docker_client.containers.list(all=True, filters={"label": "swe-forge.role=run-worker"}):
                if f"SWE_FORGE_HOME={home}" in (container.attrs["Config"]["Env"] or []):
                    container.remove(force=True)
            store = RecipeStore(home / "cache" / "recipes")
            for repo in ("acme-labs/tinycalc", "northwind/datekit", "globex-oss/yaml-lite"):
                if (recipe := store.get(repo, BASE_IMAGE)) is not None:
                    with contextlib.suppress(docker.errors.ImageNotFound):
                        docker_client.images.remove(env_image_tag(repo, recipe), force=True)
            assert stopped.returncode == 0, stopped.stderr[-2000:]


@pytest.mark.docker
def test_submitted_hours_run_in_a_container_and_their_parquet_outlives_it(
    deployment: Deployment, docker_client: docker.DockerClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = deployment.swe_forge("ingest", "--submit", "--wait", "--from", HOURS[0], "--to", HOURS[1])
    assert result.returncode == 0, result.stderr[-3000:]
    (run_id,) = result.stdout.split()  # two contiguous hours: one run, as a multi-run backfill would make
    assert f"submitted run {run_id[:8]}" in result.stderr and "gharchive_pr_events 2/2" in result.stderr

    # The run's record and events are in Postgres (this process opens the deployment's instance).
    monkeypatch.setenv("SWE_FORGE_POSTGRES_URL", deployment.postgres_url)
    monkeypatch.setenv("SWE_FORGE_IMAGE", IMAGE)
    with dg.DagsterInstance.from_config(str(deployment.home / "dagster")) as instance:
        run = instance.get_run_by_id(run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
        assert type(instance.run_launcher).__name__ == "DockerRunLauncher"
        assert run.tags["swe_forge/launched_by"] == "cli-submit" and run.tags["dagster/image"] == IMAGE
        materialized = instance.fetch_materializations(dg.AssetKey("gharchive_pr_events"), limit=10).records
        assert sorted(r.partition_key for r in materialized if r.run_id == run_id) == list(HOURS)
    import psycopg2

    with contextlib.closing(psycopg2.connect(deployment.postgres_url)) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM event_logs WHERE run_id = %s AND dagster_event_type = %s",
                       (run_id, "ASSET_MATERIALIZATION"))  # fmt: skip
        assert cursor.fetchone() == (2,)

    # It ran in its own container of the project image, which has exited; the data is on the host.
    container = docker_client.containers.get(run.tags["docker/container_id"])
    assert container.labels["dagster/run_id"] == run_id and IMAGE in container.image.tags
    assert container.attrs["State"]["Status"] == "exited" and container.attrs["State"]["ExitCode"] == 0
    assert container.attrs["HostConfig"]["NetworkMode"] == "host"
    for hour, name in zip(HOURS, ("2015-01-01-0.json.gz", "2015-01-01-1.json.gz"), strict=True):
        part = deployment.home / "lake" / "gharchive_pr_events" / "dt=2015-01-01" / f"hour={hour[11:13]}"
        _, actions, _ = independent_count(FIXTURE_HOURS / name)
        assert pq.read_table(part / "part-0.parquet").num_rows == sum(actions.values())
    counts = deployment.swe_forge("sql", "--format", "csv", "SELECT hour, count(*) AS n FROM gharchive_pr_events "
                                  "GROUP BY hour ORDER BY hour")  # fmt: skip
    assert counts.returncode == 0, counts.stderr[-2000:]
    assert counts.stdout.split() == ["hour,n", "0,315", "1,293"]


@pytest.mark.docker
def test_mine_submit_builds_a_task_in_a_run_container_and_shares_its_environment_image(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The newest hour and its first easy task, each a run in a container; the task's sandboxes go through
    the host's engine (the mounted socket), and the environment image it built is pushed to the registry."""
    result = deployment.swe_forge("mine", "--submit", "--once", "--max-tasks", "1", "--difficulty", "easy", "--json",
                                  timeout=1500)  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert summary["exported"] == 1 and summary["tasks"][0]["task_id"] == "acme-labs__tinycalc-12"
    assert [h["hour"] for h in summary["hours"]] == deployment.world.hours[:1]
    task_dir = Path(summary["tasks"][0]["task_dir"])
    assert task_dir.is_relative_to(deployment.home) and (task_dir / "workspace.yaml").is_file()

    monkeypatch.setenv("SWE_FORGE_POSTGRES_URL", deployment.postgres_url)
    monkeypatch.setenv("SWE_FORGE_IMAGE", IMAGE)
    with dg.DagsterInstance.from_config(str(deployment.home / "dagster")) as instance:
        runs = [r.dagster_run for r in instance.get_run_records() if r.dagster_run.job_name != "gharchive_job"]
    assert sorted(r.job_name for r in runs) == ["hourly_pipeline_job", "task_job"]
    assert all(r.status == dg.DagsterRunStatus.SUCCESS and r.tags["dagster/image"] == IMAGE for r in runs)
    assert all(r.tags["swe_forge/launched_by"] == "cli-submit" for r in runs)

    recipe = RecipeStore(deployment.home / "cache" / "recipes").get("acme-labs/tinycalc", BASE_IMAGE)
    assert recipe is not None
    repository, tag = env_image_tag("acme-labs/tinycalc", recipe).split(":")
    listed = httpx.get(f"http://127.0.0.1:{deployment.registry_port}/v2/{repository}/tags/list", timeout=10).json()
    assert tag in listed["tags"]
