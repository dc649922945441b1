"""The fault run of `benchmarks/host_faults.py` in its own process (benchmarks import no test code): a host killed
mid-step on a deployment with 2 worker hosts, then an evaluation on the hosts, every invariant checked.

    python -m tests.support.host_faults      # one JSON line on stdout: what was seen, and the check that failed

The deployment of `tests/support/deployment.py` with two simulated hosts (`deploy/hosts`: Debian's docker.io in the
project image, a Celery worker, 1 CPU each, on a private network; RabbitMQ as the broker). In order:

1. `swe-forge mine --submit --once --max-tasks 2`: the world's newest hour and its tasks, each a run; while a task's
   step runs on host 2, host 2 is killed (`deploy/hosts kill`). RabbitMQ gives the step back once host 2's
   connection is gone, and host 1 runs it; then host 2 comes back (`deploy/hosts start 2`: a replaced machine, its
   engine's image store kept on its volume) and the rest of the work spreads again. Checked: steps ran on both hosts
   (Dagster's own step records name the worker), the killed step ran again elsewhere and its run succeeded, every
   task is exported once, the ledger and the task rows appear once.
2. An evaluation of the exported tasks by the oracle on the hosts (`eval_job`, submitted to the daemon like the
   harness sensor's runs): one verdict per task, every step on a host.
3. `deploy/hosts check 40` (4 steps of 40 s) with the broker restarted while its steps run (`deploy/hosts
   restart-broker`): the run ends, and no step started twice.

It was a Docker-tier test until its 10 to 16 minutes took CI's test phase over its budget; its checks are these.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import dagster as dg
import docker
import psycopg2
import pytest

from swe_forge_dagster.common.dagster_names import (
    HOURLY_PIPELINE_JOB,
    TASK_JOB,
)
from swe_forge_dagster.orchestration.host_check import JOB_NAME as HOST_CHECK_JOB
from swe_forge_dagster.orchestration.host_check import step_records
from tests.support import host_eval
from tests.support.common import REPO_ROOT
from tests.support.deployment import Deployment, running_deployment

HOSTS = ("host1", "host2")
"""The step records' hosts (`hosts`: `celery_hosts.host_of` of the worker names, one worker per kind of work)."""


class CheckFailed(Exception):
    """A fault run's invariant that did not hold."""


def check(condition: object, what: str | Callable[[], str]) -> None:
    """`what` is called only when `condition` fails: a message that waits on a process (its output) must not run
    while the process is meant to go on."""
    if not condition:
        raise CheckFailed(what() if callable(what) else what)


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


def _step_on(instance: dg.DagsterInstance, host: str) -> tuple[str, str] | None:
    """A task run's step that a worker of `host` runs now: (run id, step key), or None."""
    for run_id, steps in _workers(instance, TASK_JOB).items():
        for key, step in steps.items():
            if step["hosts"][-1:] == [host] and step["starts"] and not step["ended"]:
                return run_id, key
    return None


def kill_mid_step(deployment: Deployment, record: dict) -> None:
    """Mining on both hosts, host 2 killed while it runs a task's step, then brought back."""
    mining = deployment.popen("mine", "--submit", "--once", "--max-tasks", "2", "--json")
    began = time.monotonic()
    with pytest.MonkeyPatch.context() as patch, deployment.instance(patch) as instance:
        deadline = began + 1200
        killed_step = None
        while killed_step is None:
            check(
                mining.poll() is None,
                lambda: f"mining ended before host 2 ran a step: {mining.communicate()[1][-3000:]}",
            )
            check(time.monotonic() < deadline, "no task step ran on host 2")
            killed_step = _step_on(instance, HOSTS[1])
            time.sleep(1)
        killed = _hosts(deployment, "kill", "2")
        check(killed.returncode == 0, f"deploy/hosts kill 2: {killed.stderr}")
        killed_at = time.monotonic()
        while len(_workers(instance, TASK_JOB)[killed_step[0]][killed_step[1]]["workers"]) < 2:
            check(mining.poll() is None and time.monotonic() < deadline, "the killed host's step was not taken again")
            time.sleep(1)
        record["step_taken_again_s"] = round(time.monotonic() - killed_at, 1)
        back = _hosts(deployment, "start", "2")  # the machine replaced: the rest of the work spreads again
        check(back.returncode == 0, f"deploy/hosts start 2: {back.stderr[-2000:]}")
        out, err = mining.communicate(timeout=1800)
        check(mining.returncode == 0, f"mine --submit failed: {err[-3000:]}")
        record["mine_s"] = round(time.monotonic() - began, 1)
        summary = json.loads(out)

        run_id, step_key = killed_step
        step = _workers(instance, TASK_JOB)[run_id][step_key]
        record["killed_step"] = {"run": run_id, "step": step_key, "workers": step["workers"]}
        check(step["hosts"][0] == HOSTS[1] and step["hosts"][-1] != HOSTS[1], f"not run elsewhere: {step}")
        check(instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.SUCCESS, "the killed step's run failed")
        every = [
            s
            for job in (TASK_JOB, HOURLY_PIPELINE_JOB)
            for run in _workers(instance, job).values()
            for s in run.values()
        ]
        record["mining_workers"] = sorted({w for s in every for w in s["workers"]})
        hosts = {h for s in every for h in s["hosts"]}
        check(hosts == set(HOSTS), f"steps not on both hosts: {record['mining_workers']}")

    rows = deployment.sql("SELECT task_id, count(*) AS n, max(status) AS status FROM tasks GROUP BY 1 ORDER BY 1")
    check(rows[1:] and all(line.split(",")[1] == "1" for line in rows[1:]), f"a task row twice: {rows}")
    accepted = sorted(line.split(",")[0] for line in rows[1:] if line.endswith(",accepted"))
    mined = sorted(task["task_id"] for task in summary["tasks"] if task["status"] == "accepted")
    record["tasks"] = accepted
    check(accepted == mined and len(accepted) == summary["exported"] == 2, f"tasks {rows} against {summary['tasks']}")
    twice = _ledger_twice(deployment.postgres_url)
    check(not twice, f"ledger rows twice: {twice}")


def evaluate_on_hosts(deployment: Deployment, record: dict) -> None:
    """The oracle's evaluation of the exported tasks, one run per task, submitted to the daemon: one verdict each."""
    back = _hosts(deployment, "start", "2")
    check(back.returncode == 0, f"deploy/hosts start 2: {back.stderr[-2000:]}")
    tasks = deployment.sql("SELECT task_id FROM tasks WHERE status = 'accepted' ORDER BY 1")[1:]
    check(tasks, "mining exported no task")
    began = time.monotonic()
    evaluation = host_eval.evaluate_on_hosts(deployment, tasks)
    outcomes, steps = evaluation.outcomes, evaluation.steps.values()
    check(all(o.success for o in outcomes), f"evaluation runs failed: {[o.errors for o in outcomes]}")
    record["eval_workers"] = sorted({w for run in steps for s in run.values() for w in s["workers"]})
    hosts = {h for run in steps for s in run.values() for h in s["hosts"]}
    check(hosts and hosts <= set(HOSTS), f"eval steps not on the hosts: {record['eval_workers']}")
    unplaced = [key for run in steps for key, s in run.items() if s["starts"] and not s["hosts"]]
    check(not unplaced, f"eval steps that ran with no worker host recorded: {unplaced}")
    record["eval_s"] = round(time.monotonic() - began, 1)
    verdicts = deployment.sql("SELECT task_id, count(*) AS n FROM eval_results GROUP BY 1 ORDER BY 1")
    record["verdicts"] = verdicts[1:]
    check([line.split(",")[0] for line in verdicts[1:]] == tasks, f"verdicts {verdicts} against tasks {tasks}")
    check(all(v.endswith(",1") for v in verdicts[1:]), f"a verdict twice: {verdicts}")


BROKER_DOWN_S = 20
"""How long the broker stays down between its stop and its start: a restart on a loaded machine, or a blip."""
RECOUNT_AFTER_S = 60
"""How long after the check's run ends its steps are counted: RabbitMQ delivers the unacknowledged messages again once
the workers reconnect, which the last fault run saw in the hosts' logs after the run had ended."""


def restart_broker_mid_run(deployment: Deployment, record: dict) -> None:
    """`deploy/hosts check 40` (host_check_job: 4 steps of 40 s) with the broker restarted while its steps run: the
    run ends, and each step ran once (a step started twice would have run twice: its first host never stopped)."""
    with ThreadPoolExecutor(1) as pool:
        checking = pool.submit(_hosts, deployment, "check", "40")
        with pytest.MonkeyPatch.context() as patch, deployment.instance(patch) as instance:
            deadline = time.monotonic() + 600
            while not any(
                step["starts"] for run in _workers(instance, HOST_CHECK_JOB).values() for step in run.values()
            ):
                check(
                    not checking.done(),
                    lambda: f"the check ended before a step started: {checking.result().stderr[-2000:]}",
                )
                check(time.monotonic() < deadline, "no host_check step started")
                time.sleep(1)
            restarted = deployment.run(
                "env", f"SWE_FORGE_BROKER_DOWN_S={BROKER_DOWN_S}", str(REPO_ROOT / "deploy" / "hosts"), "restart-broker"
            )
            check(restarted.returncode == 0, f"deploy/hosts restart-broker: {restarted.stderr[-2000:]}")
            done = checking.result(timeout=1500)
            time.sleep(RECOUNT_AFTER_S)  # messages delivered again may come after the run ended: count after them
            runs = _workers(instance, HOST_CHECK_JOB)
    steps = next(iter(runs.values()), {})  # the last run (a run that failed was retried)
    starts = Counter(key for run in runs.values() for key, step in run.items() for _ in range(step["starts"]))
    record["broker_restart"] = {
        "exit": done.returncode,
        "down_s": BROKER_DOWN_S,
        "runs": len(runs),
        "starts": dict(sorted(starts.items())),
        "workers": {key: step["workers"] for key, step in sorted(steps.items())},
        "ended": {key: step["ended"] for key, step in sorted(steps.items())},
        "answered_again": {key: step["answered_again"] for key, step in sorted(steps.items())},
        "recounted_after_s": RECOUNT_AFTER_S,
    }
    check(done.returncode == 0, f"host_check across a broker restart failed: {done.stderr[-3000:]}")
    twice = {key: count for key, count in starts.items() if count != 1}  # in every run: a failed run's steps ran too
    check(not twice, f"steps started more than once across the broker restart (over {len(runs)} runs): {twice}")


def fault_run(client: docker.DockerClient) -> dict:
    """Both phases on one fresh deployment; the record says what was seen and the first check that failed."""
    record: dict = {"failed": None}
    with tempfile.TemporaryDirectory(prefix="host-faults-") as temp:
        started = time.monotonic()
        with running_deployment(
            Path(temp), client, hosts=2, extra_env={"SWE_FORGE_AGENT": host_eval.ORACLE}
        ) as deployment:
            record["deploy_start_s"] = round(time.monotonic() - started, 1)
            try:
                kill_mid_step(deployment, record)
                evaluate_on_hosts(deployment, record)
                restart_broker_mid_run(deployment, record)
            except CheckFailed as failed:
                record["failed"] = str(failed)
    return record


if __name__ == "__main__":
    print(json.dumps(fault_run(docker.from_env())))
