"""The harness's own overhead per task, this checkout against a baseline commit, in one run (a ratio).

Why: every defence the verification adds (protected paths reset, install outputs, import roots, canaries and
twins, the runner's configuration probe) costs Docker round trips per task; a change to it states what it costs
against the code before it, measured on the same machine at the same time. The baseline is checked out in a git
worktree and imported first (`PYTHONPATH`); each round runs `benchmarks/harness.py --json-only` from both trees,
alternating which goes first, and the median over rounds counts (the machine is shared: noise only adds).

    .venv/bin/python benchmarks/harness_ratio.py --baseline 710d0bc [--rounds 3] [--tasks 4] [--agent-sleep 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_RATIO = 1.3


def overhead(tree: Path, tasks: int, sleep: float) -> dict:
    """One `benchmarks/harness.py` run with `tree`'s package first on the import path: its figures."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    script = str(tree / "benchmarks" / "harness.py")
    done = subprocess.run(
        [sys.executable, script, "--json-only", "--tasks", str(tasks), "--agent-sleep", str(sleep)],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    try:  # it exits 1 when its own targets are missed: its figures count all the same
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise SystemExit(f"benchmark in {tree} failed: {(done.stderr or done.stdout)[-1500:]}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="git ref of the code to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=4)
    parser.add_argument("--agent-sleep", type=float, default=1.0)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(base), args.baseline], check=True
        )
        try:
            figures: dict[str, list[float]] = {"baseline": [], "current": []}
            for index in range(args.rounds):
                order = [("baseline", base), ("current", ROOT)]
                for name, tree in order if index % 2 == 0 else reversed(order):
                    figures[name].append(overhead(tree, args.tasks, args.agent_sleep)["overhead_s_per_task"])
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    before, after = statistics.median(figures["baseline"]), statistics.median(figures["current"])
    ratio = round(after / before, 2) if before else float("inf")
    print(
        json.dumps(
            {
                "baseline": args.baseline,
                "overhead_s_per_task": {"baseline": before, "current": after},
                "rounds": figures,
                "ratio": ratio,
                "target_ratio_max": TARGET_RATIO,
                "target_met": ratio <= TARGET_RATIO,
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
