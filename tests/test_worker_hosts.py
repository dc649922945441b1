"""Steps on worker hosts: `deploy/start --hosts 2`, each host a container with its own Docker engine.

The deployment of `tests/support/deployment.py` with two simulated hosts (deploy/hosts: Debian's docker.io in the
project image, a Celery worker, 1 CPU each, on a private network; RabbitMQ as the broker). Every run the daemon
launches runs its steps there (Dagster's `celery_docker_executor`): each step in a container of the project image,
pulled by digest from the registry, on the engine of the host whose worker took it. In file order:

1. `swe-forge mine --submit --once --max-tasks 2`: the world's newest hour and its tasks, each a run; while a task's
   step runs on host 2, host 2 is killed (`deploy/hosts kill`). RabbitMQ gives the step back once host 2's
   connection is gone, and host 1 runs it; then host 2 comes back (`deploy/hosts start 2`: a replaced machine, its
   engine's image store kept on its volume) and the rest of the work spreads again. Steps ran on both hosts
   (Dagster's own step records name the worker), every task is exported once, the ledger and the task rows appear
   once.
2. An evaluation of the exported tasks by the oracle on the hosts (`eval_job`, submitted to the daemon like the
   harness sensor's runs): one verdict per task.

Cost: about 10 minutes on 2 cores (deploy/start and the hosts' first pull of the project image about 4, the task
runs about 5, most of it the tasks' steps, each a container that loads the definitions).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import time
from collections.abc import Iterator

import dagster as dg
import docker
import psycopg2
import pytest

from swe_forge_dagster.assets.partitions import eval_key
from swe_forge_dagster.common.dagster_names import (
    AGENT_PARTITIONS,
    EVAL_JOB,
    HOURLY_PIPELINE_JOB,
    TASK_JOB,
    TASK_PARTITIONS,
)
from swe_forge_dagster.harness.store import agent_key
from swe_forge_dagster.orchestration.host_check import step_records
from swe_forge_dagster.orchestration.submit import SubmittedRun, submitter, wait
from tests.support.common import REPO_ROOT
from tests.support.deployment import Deployment, running_deployment

pytestmark = [pytest.mark.docker, pytest.mark.timeout(2400)]  # deploy/start, 2 hosts, 4 task runs: 8-10 min alone

HOST_2 = "celery@host2"
ORACLE = "oracle"


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> Iterator[Deployment]:
    root = tmp_path_factory.mktemp("hosts")
    with running_deployment(root, docker_client, hosts=2, extra_env={"SWE_FORGE_AGENT": ORACLE}) as running:
        yield running


def _hosts(deployment: Deployment, *args: str) -> subprocess.CompletedProcess[str]:
    return deployment.run(str(REPO_ROOT / "deploy" / "hosts"), *args, timeout=900)


def _workers(instance: dg.DagsterInstance, job_name: str) -> dict[str, dict[str, dict]]:
    """Run id -> its steps' records (the workers that took each, its starts), for every run of `job_name`."""
    runs = instance.get_runs(filters=dg.RunsFilter(job_name=job_name))
    return {run.run_id: step_records(instance, run.run_id) for run in runs}


def _ledger_twice(url: str) -> list[tuple]:
    """The ledger's PRs recorded more than once (the ledger keys a PR by its repository and number)."""
    with contextlib.closing(psycopg2.connect(url)) as connection, connection.cursor() as cursor:
        cursor.execute("SELECT * FROM swe_forge.processed_prs LIMIT 0")
        columns = [c.name for c in cursor.description]
        key = ", ".join(c for c in ("repo", "number", "pr_number", "pr_key") if c in columns) or columns[0]
        cursor.execute(f"SELECT {key}, count(*) FROM swe_forge.processed_prs GROUP BY {key} HAVING count(*) > 1")
        return cursor.fetchall()


def test_a_host_killed_mid_step_loses_and_duplicates_nothing_and_steps_ran_on_both_hosts(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    mining = deployment.popen("mine", "--submit", "--once", "--max-tasks", "2", "--json")
    with deployment.instance(monkeypatch) as instance:
        deadline = time.monotonic() + 1200
        killed_step = None
        while killed_step is None:  # a task's step that host 2 runs now
            assert mining.poll() is None, mining.communicate()[1][-3000:]
            assert time.monotonic() < deadline, "no task step ran on host 2"
            for run_id, steps in _workers(instance, TASK_JOB).items():
                running = [
                    k for k, s in steps.items() if s["workers"][-1:] == [HOST_2] and s["starts"] and not s["ended"]
                ]
                if running:
                    killed_step = (run_id, running[0])
            time.sleep(1)
        killed = _hosts(deployment, "kill", "2")
        assert killed.returncode == 0, killed.stderr
        while len(_workers(instance, TASK_JOB)[killed_step[0]][killed_step[1]]["workers"]) < 2:  # given back, taken
            assert mining.poll() is None and time.monotonic() < deadline, "the killed host's step was not taken again"
            time.sleep(1)
        back = _hosts(deployment, "start", "2")  # the machine replaced: the rest of the work spreads again
        assert back.returncode == 0, back.stderr[-2000:]
        out, err = mining.communicate(timeout=1800)
        assert mining.returncode == 0, err[-3000:]
        summary = json.loads(out)

        run_id, step_key = killed_step
        step = _workers(instance, TASK_JOB)[run_id][step_key]
        assert step["workers"][0] == HOST_2 and step["workers"][-1] != HOST_2, step  # given back, run elsewhere
        assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.SUCCESS
        every = [
            step
            for job in (TASK_JOB, HOURLY_PIPELINE_JOB)
            for run in _workers(instance, job).values()
            for step in run.values()
        ]
        assert {worker for step in every for worker in step["workers"]} == {"celery@host1", HOST_2}

    rows = deployment.sql("SELECT task_id, count(*) AS n, max(status) AS status FROM tasks GROUP BY 1 ORDER BY 1")
    assert rows[1:] and all(line.split(",")[1] == "1" for line in rows[1:]), rows  # each task's row once
    accepted = sorted(line.split(",")[0] for line in rows[1:] if line.endswith(",accepted"))
    mined = sorted(task["task_id"] for task in summary["tasks"] if task["status"] == "accepted")
    assert accepted == mined and len(accepted) == summary["exported"] == 2, (rows, summary["tasks"])
    assert _ledger_twice(deployment.postgres_url) == []


def test_an_evaluation_on_the_hosts_gives_one_verdict_per_task(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    back = _hosts(deployment, "start", "2")
    assert back.returncode == 0, back.stderr[-2000:]
    tasks = deployment.sql("SELECT task_id FROM tasks WHERE status = 'accepted' ORDER BY 1")[1:]
    assert tasks, "the mining test exported no task"
    monkeypatch.setenv("SWE_FORGE_CODE_HOST", "127.0.0.1")
    monkeypatch.setenv("SWE_FORGE_CODE_PORT", str(deployment.registry_port + 1))
    with deployment.instance(monkeypatch) as instance:
        instance.add_dynamic_partitions(AGENT_PARTITIONS, [agent_key(ORACLE)])
        instance.add_dynamic_partitions(TASK_PARTITIONS, tasks)
        with submitter(instance, REPO_ROOT / "deploy" / "workspace.yaml") as runs:
            submitted = []
            for task in tasks:
                key = eval_key(ORACLE, task)
                tags = {"dagster/partition": str(key)}
                tags |= {f"dagster/partition/{dim}": value for dim, value in key.keys_by_dimension.items()}
                submitted.append(SubmittedRun(runs.submit(EVAL_JOB, tags), EVAL_JOB, [str(key)]))
            outcomes = wait(instance, submitted, print, timeout=1500)
        assert all(outcome.success for outcome in outcomes), [o.errors for o in outcomes]
        workers = {w for steps in _workers(instance, EVAL_JOB).values() for s in steps.values() for w in s["workers"]}
        assert workers <= {"celery@host1", HOST_2} and workers
    verdicts = deployment.sql("SELECT task_id, count(*) AS n FROM eval_results GROUP BY 1 ORDER BY 1")
    assert [line.split(",")[0] for line in verdicts[1:]] == tasks and all(v.endswith(",1") for v in verdicts[1:])
