"""Benchmark GH Archive hour ingestion against `gzip -dc` and a plain-Python json loop.

Why: the ingest is only worth its complexity (ISA-L, byte scans, DuckDB) if it beats merely
inflating the hour and is several times faster than the obvious Python loop, within a memory
budget that fits a small worker. All three are timed in one run on the same realistic hour
(~150k real 2015 events, ~50 MB gzipped), interleaved so machine noise hits them alike, and the
ingest's PullRequestEvent count is checked against the json loop so a fast-but-wrong parser fails.

    .venv/bin/python benchmarks/ingest.py [--events 150000] [--repeat 3] [--json-only]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from swe_forge_dagster.gharchive.download import ArchiveFetcher
from swe_forge_dagster.gharchive.hours import archive_file_name
from swe_forge_dagster.gharchive.ingest import HourReport, IngestOptions, ingest_hour

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT.parent / "shared" / "fixtures" / "gharchive" / "full-hours-2015-01-01"
SOURCES = [FIXTURES / f"2015-01-01-{h}.json.gz" for h in (0, 1)]
OUT = ROOT / "benchmarks" / "out"
HOUR = dt.datetime(2015, 1, 1, 0, tzinfo=dt.UTC)
TARGETS = {"ratio_ingest_over_gzip": ("<=", 0.6), "speedup_vs_json_loop": (">=", 4.0), "ingest_peak_rss_mb": ("<", 600)}


def build_hour(events: int) -> tuple[Path, str]:
    """Write (or reuse) the benchmark hour in `benchmarks/out/mirror-<N>/`, GH Archive-named.

    Real events are replicated with unique ids rather than synthesised, because real payload
    sizes and the real event-type mix are what decide the parser's speed. A sidecar records
    the size and count so a half-written or stale file is rebuilt instead of measured.
    """
    mirror = OUT / f"mirror-{events}"
    path = mirror / archive_file_name(HOUR)
    meta_path = mirror / "meta.json"
    source = "real" if all(p.is_file() for p in SOURCES) else "generator"
    if path.is_file() and meta_path.is_file():
        meta = json.loads(meta_path.read_text())
        if meta == {"events": events, "bytes": path.stat().st_size, "source": source}:
            return path, source
    mirror.mkdir(parents=True, exist_ok=True)
    if source == "generator":
        from swe_forge_dagster.demo.worlds.gharchive_world import write_hour

        write_hour(mirror, HOUR, events=events)
    else:
        lines = (line for p in SOURCES for line in gzip.decompress(p.read_bytes()).splitlines())
        real = [json.loads(line) for line in lines if line.strip()]
        tmp = path.with_suffix(".part")
        with gzip.open(tmp, "wb", compresslevel=6) as out:
            for i in range(events):
                event, copy = real[i % len(real)], i // len(real)
                event = {**event, "id": str(int(event["id"]) * 1000 + copy)}  # unique across copies
                out.write(json.dumps(event, separators=(",", ":")).encode() + b"\n")
        tmp.replace(path)
    meta_path.write_text(json.dumps({"events": events, "bytes": path.stat().st_size, "source": source}))
    return path, source


def time_gzip_dc(path: Path) -> float:
    """The floor: just inflating the hour with the system gzip, output discarded."""
    started = time.perf_counter()
    subprocess.run(["gzip", "-dc", str(path)], stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def json_loop(path: Path) -> tuple[float, int, int]:
    """The obvious implementation: json-parse every line, keep PullRequestEvents. Returns (s, events, prs)."""
    started = time.perf_counter()
    events = prs = 0
    kept: list[dict] = []
    with gzip.open(path, "rb") as stream:
        for line in stream:
            event = json.loads(line)
            events += 1
            if event.get("type") == "PullRequestEvent":
                kept.append(event)
                prs += 1
    return time.perf_counter() - started, events, prs


def run_ingest(path: Path) -> tuple[float, HourReport]:
    """Our ingest end to end (file:// mirror -> parse -> Parquet) into a throwaway lake."""
    hour = _hour_of(path)
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        fetcher = ArchiveFetcher(path.resolve().parent.as_uri(), Path(tmp) / "cache")
        started = time.perf_counter()
        report = ingest_hour(hour, fetcher, Path(tmp) / "lake", IngestOptions())
        elapsed = time.perf_counter() - started
    return elapsed, report


def _hour_of(path: Path) -> dt.datetime:
    match = re.fullmatch(r"(\d{4}-\d{2}-\d{2})-(\d{1,2})\.json\.gz", path.name)
    if match is None:
        raise SystemExit(f"{path.name} is not a GH Archive hour file name (YYYY-MM-DD-H.json.gz)")
    return dt.datetime.fromisoformat(match[1]).replace(hour=int(match[2]), tzinfo=dt.UTC)


def _rss_mb() -> float:
    """This process's peak RSS. VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a
    child spawned by a 400 MB parent would report the parent's peak, not its own."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def child_ingest(path: Path) -> None:
    """Run one ingest in this (fresh) process and print its own peak RSS, unpolluted by baselines."""
    after_imports = _rss_mb()
    elapsed, report = run_ingest(path)
    out = {"seconds": elapsed, "pr_events": report.pr_events, "events_read": report.events_read}
    print(json.dumps({**out, "rss_after_imports_mb": after_imports, "peak_rss_mb": _rss_mb()}))


def measure_peak(path: Path) -> dict:
    """Spawn `--child-ingest` and return what it reports."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child-ingest", str(path)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"child ingest failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _r(values: list[float]) -> list[float]:
    return [round(v, 3) for v in values]


def _verdict(name: str, value: float) -> bool:
    op, limit = TARGETS[name]
    return {"<=": value <= limit, ">=": value >= limit, "<": value < limit}[op]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=150_000, help="events in the benchmark hour")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds; the median is reported")
    parser.add_argument("--json-only", action="store_true", help="print only the final JSON line")
    parser.add_argument("--child-ingest", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_ingest:
        child_ingest(args.child_ingest)
        return 0
    say = (lambda *_: None) if args.json_only else (lambda *a: print(*a, flush=True))

    path, source = build_hour(args.events)
    gz_mb = path.stat().st_size / 1e6
    if source == "generator":
        say(f"NOTE: fixtures not found at {FIXTURES}; using the synthetic generator (demo.gharchive_world)")
    say(f"hour: {path} ({gz_mb:.1f} MB gz, {args.events} events, source={source})")

    gz_t, loop_t, ing_t = [], [], []
    loop_counts: set[tuple[int, int]] = set()
    reports: list[HourReport] = []
    for round_no in range(1, args.repeat + 1):  # interleaved, so drift hits all three alike
        gz_t.append(time_gzip_dc(path))
        seconds, events, prs = json_loop(path)
        loop_t.append(seconds)
        loop_counts.add((events, prs))
        seconds, report = run_ingest(path)
        ing_t.append(seconds)
        reports.append(report)
        say(f"round {round_no}: gzip -dc {gz_t[-1]:.3f}s  json loop {loop_t[-1]:.3f}s  ingest {ing_t[-1]:.3f}s")
    child = measure_peak(path)

    (events, loop_prs), *others = loop_counts
    ingest_prs = {r.pr_events for r in reports} | {child["pr_events"]}
    ingest_events = {r.events_read for r in reports} | {child["events_read"]}
    if others or ingest_prs != {loop_prs} or ingest_events != {events}:
        print(
            f"CORRECTNESS FAILURE: json loop saw {sorted(loop_counts)} (events, PRs); "
            f"ingest saw PRs {sorted(ingest_prs)}, events {sorted(ingest_events)}",
            file=sys.stderr,
        )
        return 1

    gzip_dc_s, json_loop_s, ingest_s = (statistics.median(t) for t in (gz_t, loop_t, ing_t))
    figures = {
        "events": events,
        "pr_events": loop_prs,
        "source": source,
        "gz_mb": round(gz_mb, 1),
        "repeat": args.repeat,
        "gzip_dc_s": round(gzip_dc_s, 3),
        "json_loop_s": round(json_loop_s, 3),
        "ingest_s": round(ingest_s, 3),
        "ratio_ingest_over_gzip": round(ingest_s / gzip_dc_s, 3),
        "speedup_vs_json_loop": round(json_loop_s / ingest_s, 2),
        "ingest_peak_rss_mb": round(child["peak_rss_mb"], 1),
        "ingest_rss_after_imports_mb": round(child["rss_after_imports_mb"], 1),
        "child_ingest_s": round(child["seconds"], 3),
        "runs_s": {"gzip_dc": _r(gz_t), "json_loop": _r(loop_t), "ingest": _r(ing_t)},
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }
    passed = {name: _verdict(name, figures[name]) for name in TARGETS}
    figures["pass"] = passed
    say(f"correctness: ingest PR events {loop_prs} == json loop {loop_prs}; events {events} OK")
    say(f"median of {args.repeat}: gzip -dc {gzip_dc_s:.3f}s | json loop {json_loop_s:.3f}s | ingest {ingest_s:.3f}s")
    for name, (op, limit) in TARGETS.items():
        say(f"  {name:24} {figures[name]:>8}  target {op} {limit:<5} {'ok' if passed[name] else 'MISSED'}")
    rss_note = f"(after imports {figures['ingest_rss_after_imports_mb']} MB; child ingest {figures['child_ingest_s']}s)"
    say(f"  ingest peak RSS {rss_note}")
    say(f"  1-min load average {figures['loadavg_1m']} on {os.cpu_count()} CPUs (ingest uses 2 threads: load skews it)")
    if not all(passed.values()):
        say("MISSED: " + ", ".join(name for name, ok in passed.items() if not ok))
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
