"""mini-swe-agent with a real model on our tasks, graded by both harnesses (issue 40): one table per grader.

    ./swe-forge llm start --threads 2 --context 16384
    .venv/bin/python benchmarks/agents.py --tasks DEMO_HOME/tasks --home DEMO_HOME --out /tmp/bench-msa \\
        --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-1.5b --actions text --steps 10 [--via gym]
    .venv/bin/python benchmarks/agents.py ... --from-run /tmp/bench-msa/run   # grade a finished run again

Runs `swe-forge agents run mini-swe-agent` as a user does (its own process, `--home`'s settings), then grades its
predictions file with SWE-bench's `swebench eval --task-repo` and with `swe-forge harness --predictions`, and prints
per task: how the agent's run ended, SWE-bench's verdict, ours, and whether the two agree on every test they both
report. Writes `<out>/agents-benchmark.json`. The agent's run is bounded by `--steps`, `--reply-tokens` and
`--wall-seconds`; a 1.5B model is not expected to resolve anything, only to end every task with a reason.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def cli(home: Path, *args: str) -> dict[str, Any]:
    """`swe-forge <args> --json` in `home`, its parsed output (the run fails loudly with its stderr)."""
    env = {**os.environ, "SWE_FORGE_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-m", "swe_forge_dagster.cli", *args, "--json"], env=env, text=True, capture_output=True
    )
    if not done.stdout.strip():
        raise SystemExit(f"swe-forge {args[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def swebench_verdicts(out: Path, predictions: str, repo: str, label: str) -> tuple[dict[str, str], dict[str, dict]]:
    """SWE-bench's verdict per task (resolved, unresolved, empty, error) and its per-test statuses."""
    command = [
        str(Path(sys.executable).with_name("swebench")),
        "eval",
        "swe-forge/tasks",
        "-p",
        predictions,
        "--task-repo",
        repo,
        "--run-id",
        "bench",
        "-j",
        "1",
    ]
    subprocess.run(command, cwd=out, check=True, capture_output=True, text=True)
    model = label.replace("/", "__")
    report = json.loads((out / f"{model}.bench.json").read_text())
    verdicts = {}
    for kind, key in (
        ("resolved", "resolved_ids"),
        ("unresolved", "unresolved_ids"),
        ("empty", "empty_patch_ids"),
        ("error", "error_ids"),
    ):
        verdicts.update({i: kind for i in report.get(key, [])})
    tests = {}
    for instance_report in (out / "logs" / "run_evaluation" / "bench" / model).glob("*/report.json"):
        for instance_id, body in json.loads(instance_report.read_text()).items():
            status = body.get("tests_status", {})
            tests[instance_id] = {
                t: kind == "success" for group in status.values() for kind, ids in group.items() for t in ids
            }
    return verdicts, tests


def run_agent(args: argparse.Namespace) -> dict[str, Any]:
    """`swe-forge agents run mini-swe-agent` as a user runs it: its summary."""
    return cli(
        args.home,
        "agents",
        "run",
        "mini-swe-agent",
        "-i",
        str(args.tasks.resolve()),
        "-o",
        str(args.out / "run"),
        "--base-url",
        args.base_url,
        "--model",
        args.model,
        "--actions",
        args.actions,
        "--via",
        args.via,
        "--steps",
        args.steps,
        "--reply-tokens",
        args.reply_tokens,
        "--wall-seconds",
        args.wall_seconds,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, required=True, help="task directories or a task repository")
    parser.add_argument("--home", type=Path, required=True, help="the home the tasks were made in")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--actions", default="tool-calls", choices=("tool-calls", "text"))
    parser.add_argument("--via", default="swebench", choices=("swebench", "gym"))
    parser.add_argument("--steps", default="10")
    parser.add_argument("--reply-tokens", default="512")
    parser.add_argument("--wall-seconds", default="3600")
    parser.add_argument("--from-run", type=Path, help="grade this finished run (its folder, with run.json) instead")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    run = json.loads((args.from_run / "run.json").read_text()) if args.from_run else run_agent(args)
    agent_s = run["seconds"] if args.from_run else time.monotonic() - started
    repo, predictions = run["task_repo"], run["predictions"]
    theirs, their_tests = swebench_verdicts(args.out, predictions, repo, run["label"])
    ours_summary = cli(args.home, "harness", "-i", repo, "--predictions", predictions)
    ours = {r["task_id"]: r for r in ours_summary["results"]}
    rows = []
    for instance_id, status in run["exit_statuses"].items():
        mine = ours.get(instance_id, {})
        my_tests = {c["test_id"]: c["passed"] for c in mine.get("fail_to_pass", []) + mine.get("pass_to_pass", [])}
        shared = set(my_tests) & set(their_tests.get(instance_id, {}))
        rows.append(
            {
                "task": instance_id,
                "agent": status,
                "submitted": instance_id in run["submitted"],
                "swebench": theirs.get(instance_id, "missing"),
                "ours": mine.get("status", "missing"),
                "tests_compared": len(shared),
                "tests_agree": all(my_tests[t] == their_tests[instance_id][t] for t in shared),
            }
        )
    print(f"{'task':32} {'agent ended':22} {'swebench eval':14} {'swe-forge harness':18} tests agree")
    for row in rows:
        agree = f"{row['tests_agree']} ({row['tests_compared']})" if row["tests_compared"] else "-"
        print(f"{row['task']:32} {row['agent']:22} {row['swebench']:14} {row['ours']:18} {agree}")
    print(f"label {run['label']}; agent {agent_s:.0f} s; {len(run['submitted'])} of {len(rows)} submitted a patch")
    result = {"label": run["label"], "agent_seconds": round(agent_s, 1), "rows": rows, "run": run}
    (args.out / "agents-benchmark.json").write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
