"""Schemas and lake paths of `pr_candidates` and `enriched_prs`, and row building for the latter."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from swe_forge_dagster.candidates.rules import CANDIDATE_COLUMNS
from swe_forge_dagster.common.store import StorePath, read_parquet
from swe_forge_dagster.gharchive.hours import hive_dir, parse_partition_key
from swe_forge_dagster.gharchive.schema import PR_EVENTS_SCHEMA
from swe_forge_dagster.github.models import EnrichedPR
from swe_forge_dagster.lake.dataset import HOURLY_HIVE, Dataset

PR_CANDIDATES = "pr_candidates"
ENRICHED_PRS = "enriched_prs"

PR_CANDIDATES_SCHEMA = pa.schema(
    [PR_EVENTS_SCHEMA.field(name) for name in CANDIDATE_COLUMNS]
    + [pa.field("status", pa.string()), pa.field("reason", pa.string())]
)

_TS = pa.timestamp("us", tz="UTC")
# `comments` and `first_commit_at` (SWE-bench's hints) came later: hours written before lack them,
# so readers across hours name the schema (`tasks/lookup.py`; DuckDB's views use union_by_name).
_COMMENT = pa.struct([("body", pa.string()), ("created_at", _TS), ("updated_at", _TS)])
_ISSUE = pa.struct(
    [
        ("number", pa.int64()),
        ("title", pa.string()),
        ("body", pa.string()),
        ("repo", pa.string()),
        ("comments", pa.list_(_COMMENT)),
    ]
)
ENRICHED_PRS_SCHEMA = pa.schema(
    [
        ("repo_name", pa.string()),
        ("number", pa.int64()),
        ("status", pa.string()),
        ("reason", pa.string()),
        ("reasons", pa.list_(pa.string())),
        ("stage", pa.string()),
        ("payload_format", pa.string()),
        ("event_id", pa.int64()),
        ("merged", pa.bool_()),
        ("merged_at", _TS),
        ("merge_commit_sha", pa.string()),
        ("base_ref", pa.string()),
        ("base_sha", pa.string()),
        ("head_ref", pa.string()),
        ("head_sha", pa.string()),
        ("title", pa.string()),
        ("body", pa.string()),
        ("author_login", pa.string()),
        ("author_is_bot", pa.bool_()),
        ("pr_created_at", _TS),
        ("first_commit_at", _TS),
        ("additions", pa.int64()),
        ("deletions", pa.int64()),
        ("changed_files", pa.int64()),
        ("file_paths", pa.list_(pa.string())),
        ("files_complete", pa.bool_()),
        ("closing_issues", pa.list_(_ISSUE)),
        ("labels", pa.list_(pa.string())),
        ("stars", pa.int64()),
        ("language", pa.string()),
        ("is_fork", pa.bool_()),
        ("is_archived", pa.bool_()),
        ("license", pa.string()),
        ("owner_type", pa.string()),
        ("source", pa.string()),
        ("from_store", pa.bool_()),
    ]
)

# One Parquet file per GH Archive hour each, like `gharchive_pr_events` (`dt=YYYY-MM-DD/hour=HH`).
PR_CANDIDATES_DATASET = Dataset(name=PR_CANDIDATES, schema=PR_CANDIDATES_SCHEMA, hive_types=HOURLY_HIVE)
ENRICHED_PRS_DATASET = Dataset(name=ENRICHED_PRS, schema=ENRICHED_PRS_SCHEMA, hive_types=HOURLY_HIVE)


def partition_file(lake_dir: StorePath, dataset: str, hour_key: str) -> StorePath:
    return hive_dir(lake_dir / dataset, parse_partition_key(hour_key)) / "part-0.parquet"


def read_partition(lake_dir: StorePath, dataset: str, hour_key: str, upstream_asset: str) -> pa.Table:
    path = partition_file(lake_dir, dataset, hour_key)
    if not path.is_file():
        raise FileNotFoundError(
            f"{dataset} has no data for hour {hour_key} ({path} missing): materialize {upstream_asset} for it first"
        )
    return read_parquet(path)


def enriched_row(
    candidate: dict,
    status: str,
    rejections: list[tuple[str, str]],
    stage: str,
    pr: EnrichedPR | None,
    from_store: bool,
) -> dict:
    """One `enriched_prs` row: identity, outcome (`reason` = first category, `reasons` = details), GitHub's data."""
    row: dict = {name: None for name in ENRICHED_PRS_SCHEMA.names}
    row.update(
        repo_name=candidate["repo_name"],
        number=int(candidate["number"]),
        status=status,
        reason=rejections[0][0] if rejections else None,
        reasons=[detail for _, detail in rejections],
        stage=stage,
        payload_format=candidate.get("payload_format"),
        event_id=candidate.get("event_id"),
        from_store=from_store,
    )
    if pr is not None:
        repo = pr.repository
        row.update(
            merged=pr.merged,
            merged_at=pr.merged_at,
            merge_commit_sha=pr.merge_commit_sha,
            base_ref=pr.base_ref,
            base_sha=pr.base_sha,
            head_ref=pr.head_ref,
            head_sha=pr.head_sha,
            title=pr.title,
            body=pr.body,
            author_login=pr.author_login,
            author_is_bot=pr.author_is_bot,
            pr_created_at=pr.created_at,
            first_commit_at=pr.first_commit_at,
            additions=pr.additions,
            deletions=pr.deletions,
            changed_files=pr.changed_files,
            file_paths=pr.file_paths,
            files_complete=pr.files_complete,
            closing_issues=[i.model_dump() for i in pr.closing_issues],
            labels=list(pr.labels),
            stars=repo.stars,
            language=repo.language,
            is_fork=repo.is_fork,
            is_archived=repo.is_archived,
            license=repo.license,
            owner_type=repo.owner_type,
            source=pr.source,
        )
    return row


def utc(value: dt.datetime | None) -> dt.datetime | None:
    return value.astimezone(dt.UTC) if value else None
