"""Worker hosts' queues per kind of work (issue 38): each step's Celery queue comes from its pool, and each host runs
one worker per kind, with its own concurrency.

Checked without a broker: the queue dagster-celery's executor would give each step of every job of the real
definitions (the same expression as `dagster_celery.core_execution_loop`: the step's `dagster-celery/queue` tag, else
the app's default queue), the worker command lines deploy/host/entrypoint runs, and that the run worker's and the
host workers' apps declare each queue alike (RabbitMQ refuses a queue declared twice with other arguments).
"""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest
from dagster._core.execution.api import create_execution_plan
from dagster_celery.tags import DAGSTER_CELERY_QUEUE_TAG

from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.orchestration import celery_hosts
from swe_forge_dagster.orchestration.celery_hosts import (
    API_QUEUE,
    APP,
    BROKER_SETTING,
    DOCKER_QUEUE,
    KINDS,
    QUEUE,
    RESULTS_SETTING,
    host_of,
    queue_of,
    worker_commands,
)
from swe_forge_dagster.orchestration.instance import POOL_LIMITS
from swe_forge_dagster.settings import Settings
from tests.support.celery_apps import BROKER, RESULTS, executor_app
from tests.support.common import REPO_ROOT


@pytest.fixture(scope="module")
def step_queues() -> dict[tuple[str, str], tuple[str | None, str]]:
    """(job, step) -> (its pool, the queue the Celery executor puts it on), for every step of every job."""
    default_queue = executor_app().conf.task_default_queue
    defs = build_definitions(Settings(SWE_FORGE_HOME="/tmp/swe-forge-celery-queues"))
    found = {}
    for job in defs.resolve_all_job_defs():
        if job.name.startswith("__"):
            continue
        for step in create_execution_plan(job).get_all_steps_in_topo_order():
            found[(job.name, step.key)] = (step.pool, step.tags.get(DAGSTER_CELERY_QUEUE_TAG, default_queue))
    return found


def test_the_queue_tag_is_dagster_celerys() -> None:
    assert celery_hosts.QUEUE_TAG == DAGSTER_CELERY_QUEUE_TAG
    assert executor_app().conf.task_default_queue == QUEUE == "dagster"


def test_every_step_goes_to_the_queue_of_its_pool(step_queues: dict) -> None:
    pooled = {key: value for key, value in step_queues.items() if value[0] is not None}
    assert {pool for pool, _ in pooled.values()} == set(POOL_LIMITS)  # every pool has steps, all checked here
    assert {key: queue for key, (pool, queue) in pooled.items() if queue != queue_of(pool)} == {}
    by_step = {step: queue for (_, step), (_, queue) in step_queues.items()}
    for step in ("task_patch", "task_environment", "task_tests", "task_validation", "eval_result"):
        assert by_step[step] == DOCKER_QUEUE, step
    for step in ("gharchive_pr_events", "enriched_prs", "classified_prs", "task_quality"):
        assert by_step[step] == API_QUEUE, step
    assert by_step["catalog"] == QUEUE


def test_a_step_without_a_pool_goes_to_the_default_queue(step_queues: dict) -> None:
    unpooled = {key: queue for key, (pool, queue) in step_queues.items() if pool is None}
    assert {"pr_candidates", "swe_task", "swe_dataset", "eval_summary"} <= {step for _, step in unpooled}
    assert set(unpooled.values()) == {QUEUE}
    assert queue_of(None) == QUEUE


def test_every_pool_has_exactly_one_kind_and_an_unknown_pool_is_refused() -> None:
    kinds_of = [kind.queue for kind in KINDS for pool in kind.pools]
    assert len(kinds_of) == len(set(POOL_LIMITS)) and {p for kind in KINDS for p in kind.pools} == set(POOL_LIMITS)
    assert len({kind.queue for kind in KINDS}) == len(KINDS)
    with pytest.raises(ValueError, match="no host would take"):
        queue_of("gpu_training")


def test_the_tags_change_nothing_without_a_broker(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BROKER_SETTING, raising=False)
    defs = build_definitions(Settings(SWE_FORGE_HOME="/tmp/swe-forge-celery-queues"))
    executor = defs.resolve_job_def("task_job").executor_def
    assert executor.name == "multiprocess"  # queues are mere op tags then


def test_a_host_runs_one_worker_per_kind_with_its_concurrency() -> None:
    base = ["celery", "-A", APP, "worker"]
    assert worker_commands("host1", {}, cores=2) == [
        [*base, "-n", "docker@host1", "-Q", "docker", "-c", "2", "--loglevel", "INFO"],
        [*base, "-n", "api@host1", "-Q", "api", "-c", "4", "--loglevel", "INFO"],
        [*base, "-n", "dagster@host1", "-Q", "dagster", "-c", "1", "--loglevel", "INFO"],
    ]
    settings = {"SWE_FORGE_HOST_DOCKER_CONCURRENCY": "3", "SWE_FORGE_HOST_API_CONCURRENCY": "0"}
    commands = worker_commands("host2", settings, cores=1)
    assert [(c[c.index("-Q") + 1], c[c.index("-c") + 1]) for c in commands] == [("docker", "3"), ("dagster", "1")]
    assert {host_of(c[c.index("-n") + 1]) for c in commands} == {"host2"}


@pytest.mark.parametrize(
    ("host", "settings", "error"),
    [
        ("host 1", {}, "host name"),
        ("host1", {"SWE_FORGE_HOST_API_CONCURRENCY": "-1"}, "a number of steps"),
        ("host1", {kind.setting: "0" for kind in KINDS}, "take no step"),
    ],
)
def test_a_bad_host_setting_is_refused(host: str, settings: dict[str, str], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        worker_commands(host, settings, cores=1)


def test_the_entrypoint_runs_the_command_lines_celery_hosts_prints() -> None:
    env = {"PATH": "/usr/bin:/bin", "SWE_FORGE_HOST_DAGSTER_CONCURRENCY": "2"}
    module = "swe_forge_dagster.orchestration.celery_hosts"
    done = subprocess.run([sys.executable, "-m", module, "workers", "host1"], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert [line.split() for line in done.stdout.splitlines()] == worker_commands("host1", env)
    assert all("'" not in line and '"' not in line for line in done.stdout.splitlines())  # plain words for `read -a`
    entrypoint = (REPO_ROOT / "deploy" / "host" / "entrypoint").read_text()
    assert f'python -m {module} workers "$SWE_FORGE_HOST_NAME"' in entrypoint
    assert subprocess.run(["bash", "-n", str(REPO_ROOT / "deploy" / "host" / "entrypoint")]).returncode == 0
    assert subprocess.run(["bash", "-n", str(REPO_ROOT / "deploy" / "hosts")]).returncode == 0


def test_worker_names_give_their_host() -> None:
    assert host_of("docker@host1") == host_of("api@host1") == host_of("celery@host1") == "host1"


def test_the_run_worker_and_the_host_workers_declare_each_queue_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BROKER_SETTING, BROKER)
    monkeypatch.setenv(RESULTS_SETTING, RESULTS)
    sys.modules.pop("swe_forge_dagster.orchestration.celery_app", None)
    worker_app = importlib.import_module("swe_forge_dagster.orchestration.celery_app").app
    sender = executor_app()

    def declared(app: object, queue: str) -> tuple:
        found = app.amqp.queues[queue]  # type: ignore[attr-defined]
        return found.exchange.name, found.exchange.type, found.routing_key, found.queue_arguments

    for kind in KINDS:
        assert declared(worker_app, kind.queue) == declared(sender, kind.queue)
        assert declared(sender, kind.queue)[3] == {"x-max-priority": 10}  # dagster-celery's priorities hold on each
