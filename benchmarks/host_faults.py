"""Faults on worker hosts (issue 38): a host killed mid-step loses and duplicates nothing; an evaluation on the hosts
gives one verdict per task; a run goes on across a broker restart.

    .venv/bin/python benchmarks/host_faults.py [--json faults.json]

A fresh deployment with 2 simulated hosts (`deploy/start --hosts 2`, one core each), the demo's task world: `swe-forge
mine --submit --once --max-tasks 2` with host 2 killed while it runs a task's step and then started again (a replaced
machine), then the oracle's evaluation of the exported tasks on the hosts, then `deploy/hosts check 40` with the
broker restarted while its steps run (`tests/support/host_faults.py` says every check). Printed: deploy/start's
seconds, how long the killed step took to be run again and by whom, the workers that ran the mining and the
evaluation steps (Dagster's step records), the tasks and their verdicts, how often each step of the check started
across the broker restart, and the first check that failed (exit 1), if any. About 15 to 20 minutes on 2 cores: too
long for CI's test phase, so it lives here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from _support_process import run_support


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, help="also write the record here")
    args = parser.parse_args()
    record = run_support("tests.support.host_faults", what="the fault run")
    killed = record.get("killed_step") or {}
    print(f"deploy/start --hosts 2: {record.get('deploy_start_s')} s")
    print(
        f"killed step {killed.get('step')}: workers {killed.get('workers')}, "
        f"run again after {record.get('step_taken_again_s')} s"
    )
    print(f"mining: {record.get('mine_s')} s on {record.get('mining_workers')}, tasks {record.get('tasks')}")
    print(f"evaluation: {record.get('eval_s')} s on {record.get('eval_workers')}, verdicts {record.get('verdicts')}")
    restart = record.get("broker_restart") or {}
    print(
        f"broker down {restart.get('down_s')} s mid-run: exit {restart.get('exit')}, {restart.get('runs')} run(s), "
        f"starts per step over them {restart.get('starts')}"
    )
    print(
        f"  counted {restart.get('recounted_after_s')} s after the run; messages delivered again and answered from "
        f"the run's record: {restart.get('answered_again')}"
    )
    print(f"failed: {record['failed']}" if record["failed"] else "every check held")
    if args.json:
        args.json.write_text(json.dumps(record, indent=2))
    return 1 if record["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
