"""One hour through the candidate stages: pre-filter, then enrich + local filter + ledger.

Plain functions over the lake: the Dagster assets call them per partition, and so do tests.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa

from swe_forge_dagster.candidates.datasets import (
    ENRICHED_PRS,
    ENRICHED_PRS_SCHEMA,
    PR_CANDIDATES,
    PR_CANDIDATES_SCHEMA,
    enriched_row,
    partition_file,
    read_partition,
)
from swe_forge_dagster.candidates.filters import FilterConfig, filter_rejections
from swe_forge_dagster.candidates.ledger import LedgerEntry, PRLedger
from swe_forge_dagster.candidates.rules import CandidateRules, select_candidates
from swe_forge_dagster.common.store import StorePath
from swe_forge_dagster.github.enrich import Enricher
from swe_forge_dagster.lake.writer import write_partition

EVENTS = "gharchive_pr_events"


@dataclass
class CandidatesReport:
    hour: str
    closed_prs: int
    candidates: int
    dropped_by_reason: dict[str, int]
    path: Path


@dataclass
class EnrichReport:
    hour: str
    candidates_in: int
    accepted: int
    rejected_by_reason: dict[str, int]
    errors: int
    from_store: int
    requests: int
    not_modified: int
    graphql_cost: int
    rate_limit_remaining: dict[str, int]
    seconds: float
    path: Path
    error_samples: list[str] = field(default_factory=list)


def _reason_family(reason: str) -> str:
    """Group reasons for counting: drop the per-PR numbers ("stars 3 below minimum 20" -> "stars below minimum")."""
    words = [w for w in reason.replace("(", " ").replace(")", " ").split() if not any(c.isdigit() for c in w)]
    return " ".join(words[:6])


def build_candidates(lake_dir: StorePath, hour: str, ledger: PRLedger, rules: CandidateRules) -> CandidatesReport:
    events = pl.from_arrow(read_partition(lake_dir, EVENTS, hour, EVENTS))
    assert isinstance(events, pl.DataFrame)
    hour_in_lake = partition_file(lake_dir, ENRICHED_PRS, hour).is_file()  # a re-run of this hour here
    table = select_candidates(events, ledger.load(), hour, rules, hour_in_lake)
    path = write_partition(table.to_arrow(), partition_file(lake_dir, PR_CANDIDATES, hour).parent, PR_CANDIDATES_SCHEMA)
    dropped = Counter(_reason_family(r) for r in table["reason"].drop_nulls().to_list())
    return CandidatesReport(hour, table.height, int((table["status"] == "candidate").sum()), dict(dropped), path)


def enrich_hour(
    lake_dir: StorePath, hour: str, enricher: Enricher, config: FilterConfig, ledger: PRLedger
) -> EnrichReport:
    """Enrich the hour's candidates, filter them, write `enriched_prs`, record outcomes in the ledger."""
    started = time.perf_counter()
    candidates = pl.from_arrow(read_partition(lake_dir, PR_CANDIDATES, hour, PR_CANDIDATES))
    assert isinstance(candidates, pl.DataFrame)
    rows = candidates.filter(pl.col("status") == "candidate").to_dicts()
    # Candidates of several hours are computed before any of them is enriched (one run, many
    # hours), so a PR closed in two of them must be caught here, against the ledger as it is now.
    known_before = ledger.load()
    seen_elsewhere = {
        (r["repo_name"], int(r["number"])): entry
        for r in rows
        if (entry := known_before.get((r["repo_name"], int(r["number"])))) is not None and entry.hour != hour
    }
    stats = enricher.client.stats
    before = (stats.counted, stats.not_modified, stats.graphql_cost)
    todo = [(r["repo_name"], int(r["number"])) for r in rows]
    results = {e.key: e for e in enricher.enrich(k for k in todo if k not in seen_elsewhere)}
    out, entries, errors = [], [], []
    for row in rows:
        key = (row["repo_name"], int(row["number"]))
        if key in seen_elsewhere:
            detail = f"already processed in hour {seen_elsewhere[key].hour} ({seen_elsewhere[key].outcome})"
            out.append(enriched_row(row, "rejected", [("already processed", detail)], "candidates", None, True))
            continue
        result = results[key]
        if result.status == "error":
            detail = result.reason or "error"
            out.append(enriched_row(row, "error", [("enrichment error", detail)], "enrich", None, result.cached))
            errors.append(f"{row['repo_name']}#{row['number']}: {detail}")
            continue
        if result.status == "missing":
            status, stage = "rejected", "enrich"
            rejections = [("not found on GitHub", result.reason or "not found on GitHub")]
        else:
            rejections = filter_rejections(result.pr, config) if result.pr else [("no data", "no data")]
            status, stage = ("rejected" if rejections else "accepted"), "filter"
        out.append(enriched_row(row, status, rejections, stage, result.pr, result.cached))
        reason = rejections[0][1] if rejections else None
        entries.append(LedgerEntry(row["repo_name"], int(row["number"]), status, reason, stage, hour))
    table = pa.Table.from_pylist(out, schema=ENRICHED_PRS_SCHEMA)
    path = write_partition(table, partition_file(lake_dir, ENRICHED_PRS, hour).parent, ENRICHED_PRS_SCHEMA)
    # Only new or changed outcomes are appended (a re-run of the hour writes nothing twice); the
    # ledger read at the start of the hour serves, as this hour's own keys are not written in between.
    ledger.append(
        e for e in entries if (k := known_before.get(e.key)) is None or (k.outcome, k.reason) != (e.outcome, e.reason)
    )
    rejected = Counter(r["reason"] for r in out if r["status"] == "rejected")
    return EnrichReport(
        hour=hour,
        candidates_in=len(rows),
        accepted=sum(r["status"] == "accepted" for r in out),
        rejected_by_reason=dict(rejected.most_common()),
        errors=len(errors),
        from_store=sum(1 for r in results.values() if r.cached),
        requests=stats.counted - before[0],
        not_modified=stats.not_modified - before[1],
        graphql_cost=stats.graphql_cost - before[2],
        rate_limit_remaining=dict(stats.remaining),
        seconds=round(time.perf_counter() - started, 3),
        path=path,
        error_samples=errors[:5],
    )
