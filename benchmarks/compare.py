"""Run benchmarks on an earlier revision and on the working tree, back to back, and print the ratios.

Why: a refactoring must not make task building or evaluation slower, and figures from different
days (or machines, or loads) cannot show that. This checks the earlier revision out into a
temporary git worktree and runs each benchmark there and here alternately, `--rounds` times
(the order flips each round, so a warming machine favours neither side), each with its own
code (`PYTHONPATH` points at the tree being measured), and reports the median of every figure
named in `FIGURES` and the ratio now / before (below 1 is faster).

    .venv/bin/python benchmarks/compare.py --base 38ed071 [--rounds 1] [tasks harness]
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
FIGURES = {
    "tasks": ["cold_s", "warm_s", "cold_llm_calls", "warm_llm_calls", "warm_images_built"],
    "harness": [
        "per_task_total_s",
        "per_task_tests_s",
        "overhead_s_per_task",
        "wall_parallel_1_s",
        "wall_parallel_2_s",
        "speedup_parallel_2",
        "resolved",
    ],
}


def run(tree: Path, bench: str) -> dict:
    """One benchmark run on `tree`'s code; its final JSON line."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, str(tree / "benchmarks" / f"{bench}.py"), "--json-only"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError(f"{bench} on {tree} printed no figures (exit {done.returncode}): {done.stderr[-2000:]}")
    return json.loads(lines[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the earlier revision (a commit, tag or branch)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("benchmarks", nargs="*", default=list(FIGURES), choices=list(FIGURES))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-base-") as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(base), args.base], check=True)
        try:
            results: dict[str, dict[str, list[dict]]] = {b: {"before": [], "now": []} for b in args.benchmarks}
            for round_index in range(args.rounds):
                sides = [("before", base), ("now", ROOT)]
                for bench in args.benchmarks:
                    for side, tree in sides if round_index % 2 == 0 else sides[::-1]:
                        print(f"round {round_index + 1}: {bench} {side}", file=sys.stderr, flush=True)
                        results[bench][side].append(run(tree, bench))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], check=False)
    report: dict[str, dict[str, dict[str, float | None]]] = {}
    for bench, sides in results.items():
        report[bench] = {}
        print(f"\n{bench} (median of {args.rounds}; before = {args.base}, now = working tree)")
        print(f"  {'figure':24} {'before':>10} {'now':>10} {'now/before':>11}")
        for name in FIGURES[bench]:
            before = statistics.median(r[name] for r in sides["before"])
            now = statistics.median(r[name] for r in sides["now"])
            ratio = round(now / before, 3) if before else None
            report[bench][name] = {"before": before, "now": now, "ratio": ratio}
            print(f"  {name:24} {before:>10} {now:>10} {ratio if ratio is not None else '-':>11}")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
