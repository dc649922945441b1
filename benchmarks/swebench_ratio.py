"""Our harness against SWE-bench's own `swebench eval`, side by side in one run, on the same task repository and the
same predictions (the gold patches): wall seconds of each and their ratio.

Why: every defence the harness adds (canaries, twins run apart, resets, probes, the review of the applied tree) costs
containers and test runs; SWE-bench's evaluation runs each instance once with none of them. Issue 37 asks for no
slower than it. The instances (default: SWE-bench Lite dev's marshmallow-1359 and -1343, whose repository is bundled
in `../shared/fixtures/repos/`) are validated by `swe-forge validate`, exported as a SWE-bench 5 task repository, and
evaluated by both, each once to warm its images (not timed), then `--rounds` times in alternating order; the median
counts (the machine is shared: noise only adds). Both use 2 workers. Each round's verdicts are checked too: the gold
patches must resolve in both, so a faster run that drops a verdict does not count.

    .venv/bin/python benchmarks/swebench_ratio.py [--rounds 3] [--workers 2]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _real import FIXTURES, HOST_CA, clone_bundle

from swe_forge_dagster.export.swebench import read_instances, write_jsonl

ROOT = Path(__file__).resolve().parents[1]
LITE_DEV = FIXTURES / "swebench" / "lite-dev" / "princeton-nlp-SWE-bench_Lite-dev.json"
INSTANCES = ("marshmallow-code__marshmallow-1359", "marshmallow-code__marshmallow-1343")


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    """(wall seconds, stdout) of a command that must succeed."""
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=7200, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv[0]} {argv[1]} failed ({done.returncode}): {(done.stderr or done.stdout)[-2000:]}")
    return seconds, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if not LITE_DEV.is_file():
        raise SystemExit(f"fixtures missing: {LITE_DEV}")
    swe_forge, swebench = (
        str(Path(sys.executable).with_name("swe-forge")),
        str(Path(sys.executable).with_name("swebench")),
    )
    with tempfile.TemporaryDirectory(prefix="swebench-ratio-") as tmp:
        work = Path(tmp)
        clone_bundle(work, "marshmallow-code/marshmallow")
        env = {
            **os.environ,
            "SWE_FORGE_HOME": str(work / "home"),
            "SWE_FORGE_START_DATE": "2015-01-01",
            "SWE_FORGE_GIT_URL": f"file://{work}/remotes/{{repo}}.git",
            **({"SWE_FORGE_CA_BUNDLE": str(HOST_CA)} if HOST_CA.is_file() else {}),
        }
        instances = [inst for inst in read_instances(LITE_DEV) if inst.instance_id in INSTANCES]
        write_jsonl(instances, work / "instances.jsonl")
        predictions = work / "gold.jsonl"
        predictions.write_text(
            "".join(
                json.dumps({"instance_id": i.instance_id, "model_name_or_path": "gold", "model_patch": i.patch}) + "\n"
                for i in instances
            )
        )
        run([swe_forge, "validate", "-i", str(work / "instances.jsonl")], work, env)
        repo = work / "task-repo"
        run(
            [
                swe_forge,
                "export",
                "-i",
                str(work / "instances.jsonl"),
                "-o",
                str(repo),
                "--format",
                "swebench-task-repo",
            ],
            work,
            env,
        )

        def ours(_tag: str) -> float:
            seconds, out = run(
                [
                    swe_forge,
                    "harness",
                    "-i",
                    str(repo),
                    "--predictions",
                    str(predictions),
                    "--parallel",
                    str(args.workers),
                    "--json",
                ],
                work,
                env,
            )
            statuses = {row["task_id"]: row["status"] for row in json.loads(out)["results"]}
            assert set(statuses.values()) == {"resolved"}, statuses
            return seconds

        def theirs(tag: str) -> float:
            seconds, _ = run(
                [
                    swebench,
                    "eval",
                    "swe-forge/tasks",
                    "--predictions",
                    str(predictions),
                    "--task-repo",
                    str(repo),
                    "--run-id",
                    tag,
                    "-j",
                    str(args.workers),
                ],
                work,
                env,
            )
            report = json.loads((work / f"gold.{tag}.json").read_text())
            assert sorted(report["resolved_ids"]) == sorted(INSTANCES), report
            return seconds

        ours("warm"), theirs("warm")  # images built by each, not timed
        times: dict[str, list[float]] = {"ours": [], "swebench": []}
        for index in range(args.rounds):
            order = [("ours", ours), ("swebench", theirs)][:: 1 if index % 2 == 0 else -1]
            for name, measure in order:
                times[name].append(measure(f"r{index}"))
        ours_s, theirs_s = statistics.median(times["ours"]), statistics.median(times["swebench"])
        figures = {
            "instances": len(instances),
            "rounds": args.rounds,
            "ours_s": round(ours_s, 1),
            "swebench_eval_s": round(theirs_s, 1),
            "ratio": round(ours_s / theirs_s, 2),
            "all_rounds": {name: [round(t, 1) for t in values] for name, values in times.items()},
        }
        print(f"our harness {ours_s:.1f} s, swebench eval {theirs_s:.1f} s: {ours_s / theirs_s:.2f}x its wall time")
        print(json.dumps(figures))


if __name__ == "__main__":
    main()
