"""The oracle's evaluation of exported tasks on worker hosts, submitted to the daemon one run per task as the harness
sensor submits them (`eval_job`): what `tests/support/host_faults.py` checks after a host was killed, and what
`tests/support/host_rounds.py` times on 1 and on 2 hosts."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import dagster as dg
import pytest

from swe_forge_dagster.assets.partitions import eval_key
from swe_forge_dagster.common.dagster_names import AGENT_PARTITIONS, EVAL_JOB, TASK_PARTITIONS
from swe_forge_dagster.harness.store import agent_key
from swe_forge_dagster.orchestration.host_check import step_records
from swe_forge_dagster.orchestration.submit import SubmittedRun, submitter, wait
from tests.support.common import REPO_ROOT
from tests.support.deployment import Deployment

ORACLE = "oracle"


@dataclass
class Evaluation:
    """Each run's outcome (`success`, `errors`), and each evaluation run's steps' records (the workers that took each
    step, its starts), by run id."""

    outcomes: list
    steps: dict[str, dict[str, dict]]


def evaluate_on_hosts(
    deployment: Deployment, tasks: Sequence[str], timeout: float = 1500, repeats: int = 1
) -> Evaluation:
    """The oracle's evaluation of `tasks`, one `eval_job` run each (`repeats` runs each: every run evaluates its task
    afresh, as a re-materialization from the UI does), all submitted before any is waited for."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SWE_FORGE_CODE_HOST", "127.0.0.1")
        patch.setenv("SWE_FORGE_CODE_PORT", str(deployment.registry_port + 1))
        with deployment.instance(patch) as instance:
            instance.add_dynamic_partitions(AGENT_PARTITIONS, [agent_key(ORACLE)])
            instance.add_dynamic_partitions(TASK_PARTITIONS, list(tasks))
            with submitter(instance, REPO_ROOT / "deploy" / "workspace.yaml") as runs:
                submitted = []
                for task in [task for _ in range(repeats) for task in tasks]:
                    key = eval_key(ORACLE, task)
                    tags = {"dagster/partition": str(key)}
                    tags |= {f"dagster/partition/{dim}": value for dim, value in key.keys_by_dimension.items()}
                    submitted.append(SubmittedRun(runs.submit(EVAL_JOB, tags), EVAL_JOB, [str(key)]))
                outcomes = wait(instance, submitted, lambda line: print(line, file=sys.stderr), timeout=timeout)
            done = instance.get_runs(filters=dg.RunsFilter(job_name=EVAL_JOB))
            steps = {run.run_id: step_records(instance, run.run_id) for run in done}
    return Evaluation(outcomes, steps)
