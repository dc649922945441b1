"""The corpus's gold patches sent through the harness as a SWE-bench predictions file: how many resolve, and how many
an honest fix loses to a defence (a false `tampered test results`, a dropped path, a review flag), and how many rows
hold a twin the gold patch passes (not read, so it costs the fix nothing, but it is a twin that tells nothing).

Why: every defence that judges a run (canaries, twins run apart, resets, the system files' record) must cost an
honest fix nothing. The corpus is `benchmarks/env_corpus.py`'s SWE-bench rows (with `--fixtures`, re-based rows of
other fixture roots too), one `swe-forge harness --predictions` run per repository, as a user would send them.

    .venv/bin/python benchmarks/gold_corpus.py [--only 'psf__requests-*'] [--fixtures /tmp/fx4] [--json gold.json]
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from env_corpus import cli, corpus, remote

from swe_forge_dagster.export.swebench import write_jsonl

NOT_READ = "not read: "
"""How a review note of `harness.verify` opens when a twin passed with the gold patch too (it tells nothing, so it is
not read): for the gold predictions themselves, each such note is a twin an honest fix would have lost to."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", default=[], help="instance name glob (repeatable)")
    parser.add_argument("--fixtures", type=Path, action="append", default=[], help="another fixture root")
    parser.add_argument("--work", type=Path, default=Path("/tmp/swe-forge-gold"), help="remotes, home, inputs")
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None, help="every row's verdict written here")
    args = parser.parse_args()
    items = [i for i in corpus(tuple(args.fixtures)) if i.record is not None]
    if args.only:
        items = [i for i in items if any(fnmatch.fnmatch(i.name, pattern) for pattern in args.only)]
    by_repo: dict[str, list[Any]] = defaultdict(list)
    for item in items:
        by_repo[item.repo].append(item)
    rows: list[dict[str, Any]] = []
    args.work.mkdir(parents=True, exist_ok=True)
    for repo, group in by_repo.items():
        remote(args.work, group[0])
        stem = repo.replace("/", "__")
        instances, predictions = args.work / f"{stem}.jsonl", args.work / f"{stem}.predictions.jsonl"
        write_jsonl([item.record for item in group], instances)
        predictions.write_text(
            "".join(
                json.dumps({"instance_id": i.name, "model_name_or_path": "gold", "model_patch": i.record.patch}) + "\n"
                for i in group
            )
        )
        started = time.perf_counter()
        summary = cli(
            args.work,
            "harness",
            "-i",
            str(instances),
            "--predictions",
            str(predictions),
            "--parallel",
            str(args.parallel),
            "--no-record",
        )
        seconds = time.perf_counter() - started
        for result in summary.get("results", []):
            row = {
                "instance_id": result["task_id"],
                "status": result["status"],
                "reason": (result.get("reason") or result.get("error") or "")[:300],
                "dropped_paths": result.get("dropped_paths") or [],
                "review": len(result.get("review") or []),
                "twins_not_read": [n for n in result.get("review") or [] if n.startswith(NOT_READ)],
            }
            rows.append(row)
            print(f"{row['instance_id']:45} {row['status']:13} {row['reason'][:120]}", flush=True)
        print(f"{repo}: {len(group)} rows in {seconds:.0f} s", flush=True)
    tampered = [r for r in rows if "tampered" in r["reason"]]
    figures = {
        "rows": len(rows),
        "resolved": sum(r["status"] == "resolved" for r in rows),
        "called_tampering": len(tampered),
        "with_dropped_paths": sum(bool(r["dropped_paths"]) for r in rows),
        "flagged_for_review": sum(bool(r["review"]) for r in rows),
        "with_a_twin_the_gold_passes": sum(bool(r["twins_not_read"]) for r in rows),
        "not_resolved": {r["instance_id"]: f"{r['status']}: {r['reason']}" for r in rows if r["status"] != "resolved"},
    }
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"figures": figures, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
