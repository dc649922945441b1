"""One round of `benchmarks/hosts.py` in its own process (benchmarks import no test code): the demo's task world on a
fresh deployment with N worker hosts (`deployment.running_deployment`), `mine --submit` timed, then the oracle's
evaluation of the exported tasks on the hosts (`host_eval`, one run per task, submitted together) timed, and what the
hosts pulled.

    python -m tests.support.host_rounds HOSTS TASKS [CPUS [EVALUATIONS]]   # one JSON line on stdout

CPUS is each host's (1); EVALUATIONS how often each exported task is evaluated (1), all runs submitted together.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import dagster as dg
import docker

from swe_forge_dagster.common.dagster_names import TASK_JOB
from swe_forge_dagster.orchestration.host_check import step_records
from tests.support import host_eval
from tests.support.deployment import running_deployment


def _pulled_bytes(client: docker.DockerClient, deploy_dir: Path) -> int:
    """What the hosts' engines hold in images they pulled (every image there came from the registry or was built by
    a step: a built environment image carries the builder's label, and is left out)."""
    total = 0
    hosts = client.containers.list(
        ignore_removed=True, filters={"label": ["swe-forge.role=worker-host", f"swe-forge.deploy={deploy_dir}"]}
    )
    for host in hosts:
        done = host.exec_run(["docker", "images", "--format", "{{json .}}", "--no-trunc"])
        for line in done.output.decode().splitlines():
            image = json.loads(line)
            inspect = host.exec_run(["docker", "image", "inspect", image["ID"], "--format", "{{json .}}"])
            attrs = json.loads(inspect.output.decode())
            built_here = any(tag.startswith("swe-forge-env/") for tag in attrs.get("RepoTags") or []) and not (
                attrs.get("RepoDigests")
            )
            if not built_here:
                total += int(attrs.get("Size") or 0)
    return total


def _runs_by_job(instance: dg.DagsterInstance, since: float) -> dict[str, dict]:
    """Per job, the runs created after `since` (a Unix time): how many, their span (first start to last end) and the
    sum of their own times, in seconds. Where mining's time goes: the stages that run once per hour of GH Archive
    (ingest, candidates, enrichment, classification) against the task builds that run on the hosts side by side."""
    by_job: dict[str, dict] = {}
    for record in instance.get_run_records(filters=dg.RunsFilter(created_after=dt.datetime.fromtimestamp(since))):
        if record.start_time is None or record.end_time is None:
            continue
        job = by_job.setdefault(record.dagster_run.job_name, {"runs": 0, "first": None, "last": None, "sum_s": 0.0})
        job["runs"] += 1
        job["first"] = min(job["first"] or record.start_time, record.start_time)
        job["last"] = max(job["last"] or record.end_time, record.end_time)
        job["sum_s"] += record.end_time - record.start_time
    return {
        name: {"runs": job["runs"], "span_s": round(job["last"] - job["first"], 1), "sum_s": round(job["sum_s"], 1)}
        for name, job in sorted(by_job.items())
    }


def one_round(hosts: int, tasks: int, client: docker.DockerClient, cpus: str = "1", evaluations: int = 1) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"bench-hosts-{hosts}-") as temp:
        started = time.monotonic()
        settings = {"SWE_FORGE_HOST_CPUS": cpus, "SWE_FORGE_AGENT": host_eval.ORACLE}
        with running_deployment(Path(temp), client, hosts=hosts, extra_env=settings) as deployment:
            start_seconds = time.monotonic() - started
            began, mining_began = time.monotonic(), time.time()
            mined = deployment.swe_forge(
                "mine", "--submit", "--once", "--max-tasks", str(tasks), "--json", timeout=5400
            )
            seconds = time.monotonic() - began
            summary = json.loads(mined.stdout) if mined.stdout.strip() else {}
            per_worker: Counter[str] = Counter()
            os.environ["SWE_FORGE_POSTGRES_URL"] = deployment.postgres_url  # the instance's storage reads it
            with dg.DagsterInstance.from_config(str(deployment.local / "dagster")) as instance:
                for run in instance.get_runs(filters=dg.RunsFilter(job_name=TASK_JOB)):
                    for step in step_records(instance, run.run_id).values():
                        if step["workers"]:
                            per_worker[step["workers"][-1]] += 1
                mining_by_job = _runs_by_job(instance, mining_began)
            exported = deployment.sql("SELECT task_id FROM tasks WHERE status = 'accepted' ORDER BY 1")[1:]
            began = time.monotonic()
            evaluation = host_eval.evaluate_on_hosts(deployment, exported, repeats=evaluations) if exported else None
            eval_seconds = time.monotonic() - began
            eval_steps: Counter[str] = Counter(
                step["workers"][-1]
                for run in (evaluation.steps.values() if evaluation else ())
                for step in run.values()
                if step["workers"]
            )
            pulled = _pulled_bytes(client, deployment.dir)
    return {
        "hosts": hosts,
        "cpus_per_host": cpus,
        "deploy_start_s": round(start_seconds, 1),
        "mine_s": round(seconds, 1),
        "exported": summary.get("exported"),
        "task_steps_per_worker": dict(per_worker),
        "mining_by_job": mining_by_job,
        "eval_s": round(eval_seconds, 1),
        "eval_runs": len(evaluation.outcomes) if evaluation else 0,
        "evaluated": sum(o.success for o in evaluation.outcomes) if evaluation else 0,
        "eval_steps_per_worker": dict(eval_steps),
        "pulled_bytes": pulled,
        "returncode": mined.returncode,
        "tasks": [
            {key: task.get(key) for key in ("task_id", "status", "reason")} for task in summary.get("tasks") or []
        ],
        "stderr_tail": "" if mined.returncode == 0 else mined.stderr[-3000:],
    }


if __name__ == "__main__":
    cpus, evaluations = [*sys.argv[3:], "1", "1"][:2]
    print(json.dumps(one_round(int(sys.argv[1]), int(sys.argv[2]), docker.from_env(), cpus, int(evaluations))))
