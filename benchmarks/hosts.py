"""The same work on 1 and on 2 worker hosts (issue 38): wall time, its ratio, and what the hosts pulled.

    .venv/bin/python benchmarks/hosts.py [--tasks 2] [--cpus 1] [--evaluations 3] [--json hosts.json]

For each host count, a fresh deployment of `tests/support/deployment.py` (the demo's task world, its GitHub and LLM
twins, `SWE_FORGE_HOME` on SeaweedFS) started with `deploy/start --hosts N`, each host pinned to one core; then
`swe-forge mine --submit --once --max-tasks TASKS`, timed from submission to its end, and the oracle's evaluation of
the exported tasks (EVALUATIONS `eval_job` runs per task, submitted together, each a harness run of sandboxes on a
host's engine: the test runs that outgrow one machine), timed from submission to the last run's end: the demo has
two tasks, so one evaluation each is some 20 s a round, where a few seconds of noise move the ratio by a tenth.
Mining is bound by latency (a task's steps run one after another, each a message, a container and a Python start),
so its ratio is printed apart, with where its time went (per job: runs, span, the sum of run times; the task builds,
`task_job`, are what runs side by side on the hosts); the goal is the evaluation's. Every step runs on a host;
the hosts start empty but for the image store of an earlier round (their volumes are removed with the deployment).
Printed per round: the hosts, the mining seconds, the tasks exported, the steps per worker (Dagster's step records),
and the bytes the hosts' engines hold in images pulled from the registry (the project image, base images,
environment images another host built) rather than built; then the ratio of the two rounds (goal: at most 0.6).
deploy/start's own time (the hosts' first pull of the project image among it) is printed apart, not in the ratio.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _support_process import run_support

from swe_forge_dagster.common.dagster_names import TASK_JOB


def one_round(hosts: int, tasks: int, cpus: str, evaluations: int) -> dict:
    """`python -m tests.support.host_rounds HOSTS TASKS CPUS EVALUATIONS` (the deployment and its twins live in test
    support)."""
    return run_support(
        "tests.support.host_rounds", str(hosts), str(tasks), cpus, str(evaluations), what=f"{hosts} host(s)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument(
        "--cpus",
        default="1",
        help="each host's CPUs (SWE_FORGE_HOST_CPUS): 1 core, or a fraction of one (0.5) that leaves this machine's "
        "other cores to the deployment's own services",
    )
    parser.add_argument(
        "--evaluations", type=int, default=3, help="the oracle's evaluations of each exported task, submitted together"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rounds = [one_round(count, args.tasks, args.cpus, args.evaluations) for count in (1, 2)]
    for row in rounds:
        print(
            f"{row['hosts']} host(s) of {row['cpus_per_host']} CPU: mine {row['mine_s']} s, {row['exported']} "
            f"exported, task steps per worker {row['task_steps_per_worker']}; evaluate {row['eval_s']} s, "
            f"{row['evaluated']} of {row['eval_runs']} runs resolved, steps per worker {row['eval_steps_per_worker']}; "
            f"pulled {row['pulled_bytes'] / 1e9:.2f} GB (deploy/start {row['deploy_start_s']} s)"
        )
        for job, runs in row["mining_by_job"].items():
            print(f"  mining, {job}: {runs['runs']} run(s), span {runs['span_s']} s, runs' own {runs['sum_s']} s")
    failed = [
        row
        for row in rounds
        if row["returncode"] != 0
        or row["exported"] != args.tasks
        or row["evaluated"] != row["eval_runs"]
        or row["eval_runs"] != row["exported"] * args.evaluations
    ]
    for row in failed:  # a ratio of runs that did not do the work measures nothing: say what went wrong instead
        print(f"{row['hosts']} host(s): exit {row['returncode']}, {row['exported']} of {args.tasks} exported")
        for task in row.get("tasks") or []:
            print(f"  {task['task_id']}: {task['status']} {task.get('reason') or ''}")
        print("  " + (row.get("stderr_tail") or "").replace("\n", "\n  "))
    ratios = {}
    for what, key in (("mining", "mine_s"), ("evaluation", "eval_s")):
        ratios[what] = rounds[1][key] / rounds[0][key] if rounds[0][key] and not failed else float("nan")
    builds = [row["mining_by_job"].get(TASK_JOB, {}).get("span_s") for row in rounds]
    ratios["task builds"] = builds[1] / builds[0] if builds[0] and builds[1] and not failed else float("nan")
    print(f"2 hosts / 1 host, mining: {ratios['mining']:.2f} (latency-bound: its steps run one after another)")
    print(f"2 hosts / 1 host, the task builds' span ({TASK_JOB}): {ratios['task builds']:.2f}")
    print(
        f"2 hosts / 1 host, evaluation: {ratios['evaluation']:.2f} (goal <= 0.6)"
        + (" (no ratio: a round failed)" if failed else "")
    )
    if args.json:
        args.json.write_text(json.dumps({"rounds": rounds, "ratios": ratios}, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
