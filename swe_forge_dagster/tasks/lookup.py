"""Which classified PRs become tasks, and what a task stage knows about its PR, read from the lake.

The task stages have lineage-only dependencies on the hourly assets (an hourly → dynamic partition
mapping would be meaningless), so they find their PR by (repo, number) across every hour's Parquet
with a lazy polars scan: only the matching rows are read. The scan names the dataset's current
schema, so hours written before a column (or a struct field) existed read with it as null:
polars would otherwise take the first file's schema and fail on the first newer one.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import polars as pl
import pyarrow as pa

from swe_forge_dagster.candidates.datasets import ENRICHED_PRS, ENRICHED_PRS_SCHEMA
from swe_forge_dagster.common.store import StorePath, polars_storage_options
from swe_forge_dagster.tasks.build import PRContext
from swe_forge_dagster.tasks.hints import hints_text
from swe_forge_dagster.tasks.work import task_id_of
from swe_forge_dagster.triage.pipeline import CLASSIFIED_PRS, CLASSIFIED_PRS_SCHEMA

HOURLY_GLOB = "*/*/*.parquet"  # dt=/hour=/part-0.parquet


class PRNotFound(LookupError):
    """The PR of a task is not in the lake (deleted partitions, or a hand-added task key)."""


def _scan(lake_dir: StorePath, dataset: str, schema: pa.Schema) -> pl.LazyFrame | None:
    """Every hour of `dataset` as one lazy frame of `schema` (missing columns and struct fields: null)."""
    if not any((lake_dir / dataset).glob(HOURLY_GLOB)):
        return None
    target = pl.from_arrow(schema.empty_table())
    assert isinstance(target, pl.DataFrame)
    return pl.scan_parquet(
        str(lake_dir / dataset / HOURLY_GLOB),
        hive_partitioning=True,
        schema=target.schema,
        missing_columns="insert",
        extra_columns="ignore",
        cast_options=pl.ScanCastOptions(missing_struct_fields="insert", extra_struct_fields="ignore"),
        storage_options=polars_storage_options(lake_dir),
    )


def _latest(frame: pl.LazyFrame, repo: str, number: int) -> dict[str, Any] | None:
    rows = (
        frame.filter((pl.col("repo_name") == repo) & (pl.col("number") == number))
        .sort(["dt", "hour"])
        .collect()
        .to_dicts()
    )
    return rows[-1] if rows else None


def find_pr(lake_dir: StorePath, repo: str, number: int) -> tuple[PRContext, dict[str, Any]]:
    """The PR's context (from its latest accepted `enriched_prs` row) and its classification row."""
    enriched = _scan(lake_dir, ENRICHED_PRS, ENRICHED_PRS_SCHEMA)
    row = None if enriched is None else _latest(enriched.filter(pl.col("status") == "accepted"), repo, number)
    if row is None:
        raise PRNotFound(f"{repo}#{number} is not an accepted PR in enriched_prs under {lake_dir}")
    classified = _scan(lake_dir, CLASSIFIED_PRS, CLASSIFIED_PRS_SCHEMA)
    triage = (None if classified is None else _latest(classified, repo, number)) or {}
    issues = [
        {"number": i.get("number"), "title": i.get("title") or "", "body": i.get("body") or ""}
        for i in row.get("closing_issues") or []
    ]
    created = row.get("pr_created_at")
    hints = hints_text(row.get("closing_issues") or [], row.get("first_commit_at"))
    pr = PRContext(
        repo=repo,
        number=number,
        title=row.get("title") or "",
        body=row.get("body") or "",
        base_sha=row["base_sha"],
        head_sha=row["head_sha"],
        created_at=created.isoformat().replace("+00:00", "Z") if created is not None else None,
        closing_issues=tuple(issues),
        language=row.get("language"),
        license=row.get("license"),
        difficulty=triage.get("difficulty"),
        difficulty_score=triage.get("score"),
        hints_text=hints,
    )
    if not pr.base_sha or not pr.head_sha:
        raise PRNotFound(f"{repo}#{number} has no base/head sha in enriched_prs")
    return pr, triage


def eligible_task_ids(
    lake_dir: StorePath,
    difficulties: Collection[str],
    exclude: Collection[str],
    limit: int,
    hours: Collection[str] | None = None,
) -> tuple[list[str], int]:
    """(up to `limit` new task ids, how many more wait): classified PRs of the target difficulties.

    Oldest hours first, so a backlog drains in the order the PRs were merged. An empty
    `difficulties` means every tier (the seed's "no --difficulty"). Ids in `exclude` (existing
    partitions) are skipped, so a task is added once however often this runs. `hours` (partition
    keys) limits the search to those hours' PRs.
    """
    classified = _scan(lake_dir, CLASSIFIED_PRS, CLASSIFIED_PRS_SCHEMA)
    if classified is None:
        return [], 0
    frame = classified.filter(pl.col("status") == "classified")
    if difficulties:
        frame = frame.filter(pl.col("difficulty").is_in(list(difficulties)))
    rows = frame.select("repo_name", "number", "dt", "hour").sort(["dt", "hour", "repo_name", "number"]).collect()
    seen, new = set(exclude), []
    wanted = None if hours is None else set(hours)
    for repo, number, day, hour in rows.iter_rows():
        if wanted is not None and f"{str(day)[:10]}-{int(hour):02d}:00" not in wanted:
            continue
        try:
            task_id = task_id_of(repo, number)
        except ValueError:
            continue  # a repo name no task id can hold safely
        if task_id not in seen:
            seen.add(task_id)
            new.append(task_id)
    return new[:limit], max(0, len(new) - limit)
