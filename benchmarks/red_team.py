"""Every cheating agent of the red-team corpora, replayed: per class, how many were tried and how many won.

Why: the corpora grow with every red team, and each member is a sandboxed run of a real toolchain, so CI replays only
the members its tests assert on by name and the first member of each class (`tests/support/red_team.py`, whose
classes are mechanisms, each met by one defence). This replays them all, so that a member the CI share leaves out
still shows if it wins:

- `jest`: `JEST_HACKS` of `tests/support/toolchain_hacks.py` on the jest task, with a gold and an empty agent, in one
  `swe-forge harness` batch (`--parallel 2`), as `tests/test_toolchain_red_team.py` runs its share (with them);
- `cargo`: `CARGO_HACKS` on the cargo task, likewise;
- `gym`: `HACKS` and `SNEAKY` of `tests/support/hacks.py` typed into the gym's `bash` tool on tinycalc#12 (4
  environments at once), as `tests/test_gym_docker.py` runs its share;
- `axios`, `gtest`, `django`, `sympy`: the forgers of real SWE-bench rows (`tests/support/real_red_team.py`: mocha on
  axios-5085, GoogleTest on fmt-2457, the console-log forgers on django-15789 and sympy-21614), with a gold and an
  empty agent (the tests run their shares without them: `tests/test_real_multilingual.py`, with a gold agent for
  fmt, and `tests/test_real_own_runners.py`); a corpus whose fixture `../shared/fixtures` lacks is skipped and says
  so. `--json` is written after each corpus.

The corpora, their classes and the runs are the tests' own: each corpus runs as `python -m tests.support.red_team`
in its own process (benchmarks import no test code), which prints its verdicts as JSON. Needs Docker, the base,
node, rust and cpp images, and the npm registry (jest, axios) through the host CA bundle.

    .venv/bin/python benchmarks/red_team.py [jest] [cargo] [gym] [axios] [gtest] [django] [sympy] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from _support_process import run_support

CORPORA = ("jest", "cargo", "gym", "axios", "gtest", "django", "sympy")


def replay(corpus: str) -> dict[str, Any]:
    """One corpus through `python -m tests.support.red_team`: its classes, its verdicts and its wall time."""
    return run_support("tests.support.red_team", corpus, what=f"{corpus}: the replay")


def verdict(result: dict[str, Any]) -> str:
    """A member's verdict in a few words: its status, the start of the harness's reason, the paths it lost, and the
    seconds its run took."""
    notes = [(result.get("error") or "").splitlines()[0][:90]] if result.get("error") else []
    if result.get("dropped_paths"):
        notes.append("dropped " + ", ".join(result["dropped_paths"]))
    if result.get("total_duration_secs"):
        notes.append(f"{result['total_duration_secs']:.0f} s")
    return result["status"] + (f" ({'; '.join(notes)})" if notes else "")


def report(run: dict[str, Any]) -> list[str]:
    """The corpus's table: one row per class (tried, won, each member's verdict), then the gold and empty agents."""
    if "skipped" in run:  # a corpus on a real row whose fixture is absent here
        return [f"## {run['corpus']}: skipped ({run['skipped']})", ""]
    results, classes = run["results"], run["classes"]
    lines = [f"## {run['corpus']}: {len(results)} runs in {run['seconds']} s", "", "| class | tried | won | verdicts |"]
    lines.append("|---|---|---|---|")
    for name, members in classes.items():
        tried = [m for m in members if m in results]
        won = [m for m in tried if results[m]["status"] == "resolved"]
        verdicts = "; ".join(f"`{m}`: {verdict(results[m])}" for m in tried)
        lines.append(
            f"| {name} | {len(tried)} | {len(won)}{' **' + ', '.join(won) + '**' if won else ''} | {verdicts} |"
        )
    placed = {m for members in classes.values() for m in members}
    for name in sorted(set(results) - placed):  # gold and empty (toolchains), and any member no class holds
        lines.append(f"| ({name}) | 1 | - | {verdict(results[name])} |")
    hacks = [m for m in results if m in placed]
    won = [m for m in hacks if results[m]["status"] == "resolved"]
    other = [m for m in hacks if results[m]["status"] not in ("resolved", "unresolved")]
    lines += ["", f"tried {len(hacks)}, won {len(won)}; not `unresolved` (an error, not a loss): {other or 'none'}", ""]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpora", nargs="*", metavar="CORPUS", help=f"of {', '.join(CORPORA)} (default: all)")
    parser.add_argument("--json", type=Path, default=None, help="every run's verdicts written here")
    args = parser.parse_args()
    if unknown := set(args.corpora) - set(CORPORA):
        parser.error(f"unknown corpus {', '.join(sorted(unknown))}: choose from {', '.join(CORPORA)}")
    runs = []
    for corpus in args.corpora or CORPORA:
        runs.append(replay(corpus))
        print("\n".join(report(runs[-1])), flush=True)
        if args.json:  # after each corpus: an hour of replays is not lost to a later one's failure
            args.json.write_text(json.dumps(runs, indent=2))
    hacks_won = [
        (run["corpus"], name)
        for run in runs
        for name, result in run.get("results", {}).items()
        if name not in ("gold", "empty") and result["status"] == "resolved"
    ]
    gold_lost = [
        run["corpus"]
        for run in runs
        if run.get("results", {}).get("gold", {"status": "resolved"})["status"] != "resolved"
    ]
    if hacks_won or gold_lost:
        raise SystemExit(f"won: {hacks_won}; gold not resolved: {gold_lost}")


if __name__ == "__main__":
    main()
