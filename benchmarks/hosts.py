"""The same work on 1 and on 2 worker hosts (issue 38): wall time, its ratio, and what the hosts pulled.

    .venv/bin/python benchmarks/hosts.py [--tasks 2] [--json hosts.json]

For each host count, a fresh deployment of `tests/support/deployment.py` (the demo's task world, its GitHub and LLM
twins, `SWE_FORGE_HOME` on SeaweedFS) started with `deploy/start --hosts N`, each host pinned to one core; then
`swe-forge mine --submit --once --max-tasks TASKS`, timed from submission to its end. Every step runs on a host;
the hosts start empty but for the image store of an earlier round (their volumes are removed with the deployment).
Printed per round: the hosts, the mining seconds, the tasks exported, the steps per worker (Dagster's step records),
and the bytes the hosts' engines hold in images pulled from the registry (the project image, base images,
environment images another host built) rather than built; then the ratio of the two rounds (goal: at most 0.6).
deploy/start's own time (the hosts' first pull of the project image among it) is printed apart, not in the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import dagster as dg
import docker

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from swe_forge_dagster.common.dagster_names import TASK_JOB  # noqa: E402
from swe_forge_dagster.orchestration.host_check import step_records  # noqa: E402
from tests.support.deployment import running_deployment  # noqa: E402


def _pulled_bytes(client: docker.DockerClient, deploy_dir: Path) -> int:
    """What the hosts' engines hold in images they pulled (every image there came from the registry or was built by
    a step: a built environment image carries the builder's label, and is left out)."""
    total = 0
    hosts = client.containers.list(filters={"label": ["swe-forge.role=worker-host", f"swe-forge.deploy={deploy_dir}"]})
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


def one_round(hosts: int, tasks: int, client: docker.DockerClient) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"bench-hosts-{hosts}-") as temp:
        started = time.monotonic()
        with running_deployment(Path(temp), client, hosts=hosts) as deployment:
            start_seconds = time.monotonic() - started
            began = time.monotonic()
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
            pulled = _pulled_bytes(client, deployment.dir)
    return {
        "hosts": hosts,
        "deploy_start_s": round(start_seconds, 1),
        "mine_s": round(seconds, 1),
        "exported": summary.get("exported"),
        "task_steps_per_worker": dict(per_worker),
        "pulled_bytes": pulled,
        "returncode": mined.returncode,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    client = docker.from_env()
    rounds = [one_round(count, args.tasks, client) for count in (1, 2)]
    for row in rounds:
        print(
            f"{row['hosts']} host(s): mine {row['mine_s']} s, {row['exported']} exported, task steps per worker "
            f"{row['task_steps_per_worker']}, pulled {row['pulled_bytes'] / 1e9:.2f} GB (deploy/start "
            f"{row['deploy_start_s']} s)"
        )
    ratio = rounds[1]["mine_s"] / rounds[0]["mine_s"] if rounds[0]["mine_s"] else float("nan")
    print(f"2 hosts / 1 host wall time: {ratio:.2f} (goal <= 0.6)")
    if args.json:
        args.json.write_text(json.dumps({"rounds": rounds, "ratio": ratio}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
