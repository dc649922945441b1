"""The columns read from each event, and the PR-event rows written to the lake.

Two payload vintages exist. Before 2025-10-07 a PullRequestEvent carries the full
`pull_request` (title, body, merged, merge_commit_sha, user, line counts). Since then GitHub
ships a trimmed object (number, id, head/base ref+sha only). Missing keys read as NULL, so one
schema reads both; `payload_format` says which one a row came from, and `merged` stays NULL
for trimmed rows (enrichment decides). A trimmed event whose action is `merged` (reported by
one third-party ingester, unverified) is read as merged.
"""

from __future__ import annotations

import pyarrow as pa

from swe_forge_dagster.lake.dataset import HOURLY_HIVE, Dataset

_PR = (
    "STRUCT(id BIGINT, number BIGINT, title VARCHAR, body VARCHAR, merged BOOLEAN, "
    'merged_at TIMESTAMPTZ, merge_commit_sha VARCHAR, "user" STRUCT(login VARCHAR, type VARCHAR), '
    "base STRUCT(ref VARCHAR, sha VARCHAR), head STRUCT(ref VARCHAR, sha VARCHAR), "
    "additions BIGINT, deletions BIGINT, changed_files BIGINT)"
)

# DuckDB `columns=` argument of read_json: only what downstream needs, never inferred.
PR_EVENT_COLUMNS = (
    "{'id': 'VARCHAR', 'type': 'VARCHAR', 'created_at': 'TIMESTAMPTZ', "
    "'actor': 'STRUCT(id BIGINT, login VARCHAR)', 'repo': 'STRUCT(id BIGINT, name VARCHAR)', "
    "'org': 'STRUCT(id BIGINT, login VARCHAR)', "
    f"'payload': 'STRUCT(action VARCHAR, number BIGINT, pull_request {_PR})'}}"
)

PR_EVENTS_SELECT = """
SELECT
    TRY_CAST(id AS BIGINT)                                  AS event_id,
    created_at                                              AS created_at,
    actor.login                                             AS actor_login,
    actor.id                                                AS actor_id,
    org.login                                               AS org_login,
    repo.name                                               AS repo_name,
    repo.id                                                 AS repo_id,
    payload.action                                          AS action,
    coalesce(payload.number, payload.pull_request.number)   AS number,
    payload.pull_request.id                                 AS pr_id,
    CASE WHEN payload.action = 'merged' THEN true
         ELSE payload.pull_request.merged END               AS merged,
    payload.pull_request.merged_at                          AS merged_at,
    payload.pull_request.merge_commit_sha                   AS merge_commit_sha,
    payload.pull_request.base.ref                           AS base_ref,
    payload.pull_request.base.sha                           AS base_sha,
    payload.pull_request.head.ref                           AS head_ref,
    payload.pull_request.head.sha                           AS head_sha,
    payload.pull_request.title                              AS title,
    payload.pull_request.body                               AS body,
    payload.pull_request."user".login                       AS author_login,
    payload.pull_request."user".type                        AS author_type,
    payload.pull_request.additions                          AS additions,
    payload.pull_request.deletions                          AS deletions,
    payload.pull_request.changed_files                      AS changed_files,
    CASE WHEN payload.pull_request.title IS NULL
          AND payload.pull_request.merged IS NULL
          AND payload.pull_request."user" IS NULL
         THEN 'trimmed' ELSE 'classic' END                  AS payload_format
FROM raw
WHERE type = 'PullRequestEvent'
ORDER BY created_at, event_id
"""

# The Parquet schema of `gharchive_pr_events` (DuckDB TIMESTAMPTZ -> timestamp[us, UTC]).
PR_EVENTS_SCHEMA = pa.schema(
    [
        ("event_id", pa.int64()),
        ("created_at", pa.timestamp("us", tz="UTC")),
        ("actor_login", pa.string()),
        ("actor_id", pa.int64()),
        ("org_login", pa.string()),
        ("repo_name", pa.string()),
        ("repo_id", pa.int64()),
        ("action", pa.string()),
        ("number", pa.int64()),
        ("pr_id", pa.int64()),
        ("merged", pa.bool_()),
        ("merged_at", pa.timestamp("us", tz="UTC")),
        ("merge_commit_sha", pa.string()),
        ("base_ref", pa.string()),
        ("base_sha", pa.string()),
        ("head_ref", pa.string()),
        ("head_sha", pa.string()),
        ("title", pa.string()),
        ("body", pa.string()),
        ("author_login", pa.string()),
        ("author_type", pa.string()),
        ("additions", pa.int64()),
        ("deletions", pa.int64()),
        ("changed_files", pa.int64()),
        ("payload_format", pa.string()),
    ]
)

PR_EVENTS = Dataset(name="gharchive_pr_events", schema=PR_EVENTS_SCHEMA, hive_types=HOURLY_HIVE)
"""One Parquet file per GH Archive hour (`dt=YYYY-MM-DD/hour=HH`)."""
