"""Benchmark PR enrichment against the GitHub twin: rate-limited requests per candidate, cold and warm.

Why: the rate limit, not CPU, is what bounds how many hours a token can mine, and the seed spent
~2+ REST calls per candidate (pull, files, linked issues). Batched GraphQL must bring that to
≤ 0.1 counted requests per candidate, and a re-run over the same hours must spend nothing,
because the store already holds every answer. Candidates come from generated GH Archive hours
run through the real parser and pre-filter, the twin serves a world built from the same events,
and the seed-style REST path runs in the same process against the same twin as the baseline.

    .venv/bin/python benchmarks/enrich.py [--candidates 300] [--latency-ms 20] [--json-only]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl

from swe_forge_dagster.candidates.rules import select_candidates
from swe_forge_dagster.demo.twins.github_twin import GithubTwin
from swe_forge_dagster.demo.worlds.gharchive_world import write_hour
from swe_forge_dagster.demo.worlds.github_world_gen import world_from_pr_events
from swe_forge_dagster.gharchive.hours import partition_key
from swe_forge_dagster.gharchive.parse import parse_hour
from swe_forge_dagster.github.client import GitHubClient, GitHubError
from swe_forge_dagster.github.enrich import Enricher, rest_enrich
from swe_forge_dagster.github.models import EnrichedPR
from swe_forge_dagster.github.store import GithubStore

Key = tuple[str, int]
TOKEN = "bench-token"
FIRST_HOUR = dt.datetime(2024, 5, 1, 0, tzinfo=dt.UTC)  # before 2025-10-07: the classic, full PR payload
EVENTS_PER_HOUR = 10_000  # ~80 candidates per generated hour
SEED = 7
TARGETS = {"ours_requests_per_candidate": ("<=", 0.1), "ours_warm_counted_requests": ("<=", 0)}


def make_candidates(work: Path, wanted: int) -> tuple[list[Key], list[dict[str, Any]], int]:
    """Generate and parse hours until the pre-filter has yielded `wanted` distinct candidate keys.

    The real parser and `select_candidates` are used (not invented keys) so the mix of repos,
    merged/unmerged PRs and linked issues is what enrichment meets in a run. Returns the keys,
    every parsed PR event row (the twin's world is built from all of them, as GitHub knows more
    PRs than we ask about) and the number of hours generated.
    """
    keys: dict[Key, None] = {}
    rows: list[dict[str, Any]] = []
    hours = 0
    while len(keys) < wanted:
        hour = FIRST_HOUR + dt.timedelta(hours=hours)
        hours += 1
        path, _ = write_hour(work / "mirror", hour, events=EVENTS_PER_HOUR, seed=SEED)
        parsed = parse_hour(path, work / "parse")
        frame = pl.from_arrow(parsed.table)
        assert isinstance(frame, pl.DataFrame)
        rows.extend(frame.to_dicts())
        selected = select_candidates(frame, {}, partition_key(hour))
        for row in selected.filter(pl.col("status") == "candidate").iter_rows(named=True):
            keys.setdefault((row["repo_name"], int(row["number"])), None)
    return list(keys)[:wanted], rows, hours


def run_ours(twin: GithubTwin, store_path: Path, keys: list[Key]) -> dict[str, Any]:
    """One enrichment pass with a new client and store handle, as a fresh run process would have."""
    twin.reset_counters()
    store = GithubStore(store_path)
    started = time.perf_counter()
    with GitHubClient(twin.url, TOKEN, store=store) as client:
        results = list(Enricher(client, store).enrich(keys))
        stats = client.stats
    seconds = time.perf_counter() - started
    return {
        "counted": len(twin.counted_requests()),
        "sent": stats.sent,
        "graphql_cost": stats.graphql_cost,
        "max_in_flight": twin.max_in_flight,
        "seconds": seconds,
        "statuses": dict(Counter(r.status for r in results)),
        "cached": sum(r.cached for r in results),
        "prs": {r.key: r.pr for r in results if r.pr is not None},
    }


def run_baseline(twin: GithubTwin, store_path: Path, keys: list[Key]) -> dict[str, Any]:
    """The seed's path: REST, one PR at a time, on its own fresh store so no ETag can help it."""
    twin.reset_counters()
    prs: dict[Key, EnrichedPR] = {}
    errors = 0
    started = time.perf_counter()
    with GitHubClient(twin.url, TOKEN, store=GithubStore(store_path)) as client:
        for key in keys:
            try:
                prs[key] = rest_enrich(client, key, hints=False)  # the seed fetched no comments or commits
            except GitHubError:
                errors += 1
    seconds = time.perf_counter() - started
    return {"counted": len(twin.counted_requests()), "seconds": seconds, "errors": errors, "prs": prs}


def disagreements(ours: dict[Key, EnrichedPR], baseline: dict[Key, EnrichedPR]) -> list[str]:
    """Keys where GraphQL and REST describe the PR differently: a cheap-but-wrong enricher must fail."""
    bad = []
    for key in sorted(set(ours) | set(baseline)):
        a, b = ours.get(key), baseline.get(key)
        facts = [(p.merged, p.title, p.head_sha, p.base_sha, p.changed_files) if p else None for p in (a, b)]
        if facts[0] != facts[1]:
            bad.append(f"{key[0]}#{key[1]}")
    return bad


def _verdict(name: str, value: float) -> bool:
    op, limit = TARGETS[name]
    return value <= limit if op == "<=" else value >= limit


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=300, help="distinct candidate PRs to enrich")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="simulated latency the twin adds per request")
    parser.add_argument("--json-only", action="store_true", help="print only the final JSON line")
    args = parser.parse_args(argv)
    say = (lambda *_: None) if args.json_only else (lambda *a: print(*a, flush=True))

    with tempfile.TemporaryDirectory(prefix="bench-enrich-") as tmp:
        work = Path(tmp)
        keys, rows, hours = make_candidates(work, args.candidates)
        world = world_from_pr_events(rows, seed=SEED)
        say(f"candidates: {len(keys)} from {hours} generated hours ({len(rows)} PR events, {len(world.pulls)} PRs)")
        with GithubTwin(world, token=TOKEN) as twin:
            twin.delay(args.latency_ms / 1000)
            cold = run_ours(twin, work / "ours" / "github.sqlite", keys)
            warm = run_ours(twin, work / "ours" / "github.sqlite", keys)
            base = run_baseline(twin, work / "baseline" / "github.sqlite", keys)

    n = len(keys)
    wrong = disagreements(cold["prs"], base["prs"])
    if len(keys) < args.candidates or cold["statuses"] != {"enriched": n} or warm["cached"] != n or wrong:
        print(
            f"CORRECTNESS FAILURE: {len(keys)}/{args.candidates} candidates; cold {cold['statuses']}; "
            f"warm cached {warm['cached']}/{n}; ours vs REST disagree on {len(wrong)}: {wrong[:5]}",
            file=sys.stderr,
        )
        return 1

    figures: dict[str, Any] = {
        "candidates": n,
        "hours": hours,
        "latency_ms": args.latency_ms,
        "ours_requests": cold["counted"],
        "ours_requests_per_candidate": round(cold["counted"] / n, 4),
        "ours_s": round(cold["seconds"], 3),
        "ours_graphql_cost": cold["graphql_cost"],
        "ours_max_in_flight": cold["max_in_flight"],
        "ours_statuses": cold["statuses"],
        "ours_warm_counted_requests": warm["counted"],
        "ours_warm_sent": warm["sent"],
        "ours_warm_s": round(warm["seconds"], 3),
        "baseline_requests": base["counted"],
        "baseline_requests_per_candidate": round(base["counted"] / n, 3),
        "baseline_s": round(base["seconds"], 3),
        "baseline_errors": base["errors"],
        "ratio_baseline_over_ours_requests": round(base["counted"] / cold["counted"], 1) if cold["counted"] else None,
        "speedup_vs_baseline": round(base["seconds"] / cold["seconds"], 1),
    }
    passed = {name: _verdict(name, figures[name]) for name in TARGETS}
    figures["pass"] = passed

    say(f"correctness: all {n} enriched; GraphQL and REST agree on merged/title/shas/changed_files for every PR")
    say(f"twin latency {args.latency_ms:g} ms per request")
    say(
        f"ours cold:  {cold['counted']} counted requests ({figures['ours_requests_per_candidate']}/candidate) "
        f"in {cold['seconds']:.2f}s; GraphQL cost {cold['graphql_cost']} points; max in flight {cold['max_in_flight']}"
    )
    say(f"ours warm:  {warm['counted']} counted requests ({warm['sent']} sent) in {warm['seconds']:.2f}s")
    say(
        f"baseline:   {base['counted']} counted requests ({figures['baseline_requests_per_candidate']}/candidate) "
        f"in {base['seconds']:.2f}s (REST, one PR at a time; {base['errors']} errors)"
    )
    say(
        f"ratio baseline/ours requests: {figures['ratio_baseline_over_ours_requests']}x; "
        f"wall time {figures['speedup_vs_baseline']}x faster"
    )
    for name, (op, limit) in TARGETS.items():
        say(f"  {name:28} {figures[name]:>8}  target {op} {limit:<5} {'ok' if passed[name] else 'MISSED'}")
    if not all(passed.values()):
        say("MISSED: " + ", ".join(name for name, ok in passed.items() if not ok))
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
