"""Where the state that machines should share lives: files under the home, or the shared Postgres.

The one place that chooses, by `SWE_FORGE_POSTGRES_URL` (read by name when a run starts, like every
secret; never resource config). Unset, everything stays as it was on one machine: the GitHub store and
the LLM answer cache in SQLite under `cache/`, the processed-PR ledger in its JSONL file, the LLM calls
as JSONL in the lake, request slots as `flock` files under `locks/`. Set, all five are tables and
advisory locks in that database (schema `swe_forge`), so N machines pay once for each GitHub answer and
LLM answer, record each PR and each call once, and share one set of request slots.

What stays per machine either way: bare clones, environment recipes, downloads, the DuckDB catalog.
"""

from __future__ import annotations

from pathlib import Path

from swe_forge_dagster.candidates.ledger import Ledger, PRLedger
from swe_forge_dagster.candidates.ledger_postgres import PostgresLedger
from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.common.postgres import shared_database
from swe_forge_dagster.common.slots import RequestSlots, Slots
from swe_forge_dagster.common.slots_postgres import PostgresSlots
from swe_forge_dagster.github.store import GithubStore, ResponseStore
from swe_forge_dagster.github.store_postgres import PostgresGithubStore
from swe_forge_dagster.llm.cache import AnswerCache, AnswerStore
from swe_forge_dagster.llm.cache_postgres import PostgresAnswerCache
from swe_forge_dagster.llm.ledger import LLM_CALLS, CallLedger, CallSink, StoreCallLedger
from swe_forge_dagster.llm.ledger_postgres import PostgresCallLedger


def github_store(layout: HomeLayout) -> ResponseStore:
    """REST responses, enriched and missing PRs."""
    db = shared_database()
    return PostgresGithubStore(db) if db is not None else GithubStore(layout.github_store)


def answer_cache(layout: HomeLayout) -> AnswerStore:
    """LLM answers by request hash."""
    db = shared_database()
    return PostgresAnswerCache(db) if db is not None else AnswerCache(layout.llm_answers)


def call_ledger(layout: HomeLayout) -> CallSink:
    """Every LLM call (the `llm_calls` view)."""
    db = shared_database()
    if db is not None:
        return PostgresCallLedger(db)
    return StoreCallLedger(layout.lake / LLM_CALLS) if layout.remote else CallLedger(layout.lake / LLM_CALLS)


def processed_ledger(pr_file: Path) -> PRLedger:
    """The processed-PR ledger; with the shared database, `pr_file` is still read (`candidates.ledger_postgres`)."""
    db = shared_database()
    return PostgresLedger(db, pr_file) if db is not None else Ledger(pr_file)


def request_slots(layout: HomeLayout, name: str, limit: int) -> RequestSlots:
    """`limit` concurrent requests named `name`: on this machine, or on every machine sharing the database."""
    db = shared_database()
    return PostgresSlots(db, name, limit) if db is not None else Slots(layout.locks, name, limit)
