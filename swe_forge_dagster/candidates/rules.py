"""Which closed PR events of an hour are worth an API request: the pre-filter, no network.

Closed events only; with the classic payload they must say merged, with the trimmed 2025
payload `merged` is unknown, so every closed PR stays a candidate until enrichment says.
Deduplicated by (repo, number), bots dropped, org-owned repos only unless lifted, and PRs the
ledger already holds from another hour skipped. Dropped rows are kept with their reason.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from swe_forge_dagster.candidates.ledger import LedgerEntry
from swe_forge_dagster.github.models import is_bot_login

Key = tuple[str, int]
# Accounts that merge other people's PRs: a bot *actor* on a closed event is not a bot *author*.
MERGE_BOTS = frozenset({"bors[bot]", "mergify[bot]", "kodiakhq[bot]", "github-merge-queue[bot]", "bors"})

CANDIDATE_COLUMNS = [
    "repo_name",
    "number",
    "event_id",
    "created_at",
    "actor_login",
    "org_login",
    "author_login",
    "merged",
    "payload_format",
    "base_sha",
    "head_sha",
    "merge_commit_sha",
    "title",
]


@dataclass(frozen=True)
class CandidateRules:
    org_only: bool = True


def drop_reason(
    row: dict, ledger: dict[Key, LedgerEntry], hour: str, rules: CandidateRules, hour_in_lake: bool = True
) -> str | None:
    """Why this closed-PR event is not a candidate (None: it is one).

    A PR the ledger holds is skipped, except when it was recorded for this same hour and this lake
    already has the hour (a re-materialization recomputes its own partition instead of emptying it).
    A new home sharing the ledger (`--pr-file`) skips it: that is what sharing the ledger is for.
    """
    if not row.get("repo_name") or row.get("number") is None:
        return "invalid event (no repo or number)"
    if row.get("merged") is False:
        return "not merged"
    author, actor = row.get("author_login"), row.get("actor_login")
    if is_bot_login(author):
        return f"bot author ({author})"
    if author is None and is_bot_login(actor) and actor not in MERGE_BOTS:
        return f"bot actor ({actor})"
    if rules.org_only and not row.get("org_login"):
        return "not an org repo"
    seen = ledger.get((row["repo_name"], int(row["number"])))
    if seen is not None and (seen.hour != hour or not hour_in_lake):
        where = f" in hour {seen.hour}" if seen.hour else ""
        return f"already processed{where} ({seen.outcome or 'recorded'})"
    return None


def select_candidates(
    events: pl.DataFrame,
    ledger: dict[Key, LedgerEntry],
    hour: str,
    rules: CandidateRules = CandidateRules(),
    hour_in_lake: bool = True,
) -> pl.DataFrame:
    """One row per closed PR of the hour: `status` candidate|dropped and the drop `reason`."""
    closed = (
        events.filter(pl.col("action").is_in(["closed", "merged"]))
        .sort(["created_at", "event_id"])
        .unique(subset=["repo_name", "number"], keep="last", maintain_order=True)
        .select(CANDIDATE_COLUMNS)
    )
    reasons = [drop_reason(row, ledger, hour, rules, hour_in_lake) for row in closed.iter_rows(named=True)]
    return closed.with_columns(
        pl.Series("status", ["dropped" if r else "candidate" for r in reasons], dtype=pl.String),
        pl.Series("reason", reasons, dtype=pl.String),
    )
