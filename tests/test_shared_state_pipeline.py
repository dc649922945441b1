"""Two machines, one Postgres: the second pays for nothing the first already paid for.

Each "machine" has its own SWE_FORGE_HOME (lake, Dagster instance, caches folder) and runs the hourly
pipeline (ingest → candidates → enrichment on the GitHub twin → triage on the OpenAI twin) for the same
hour, with `SWE_FORGE_POSTGRES_URL` naming one database on a real PostgreSQL. The first runs in the test
process; the others each in a process of their own, sharing nothing with it but the database. The twins
count every request they receive.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import psycopg2
import pytest

from swe_forge_dagster.common.dagster_names import HOURLY_PIPELINE_JOB
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.demo.twins.github_twin import GithubTwin
from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin, triage_responder
from swe_forge_dagster.demo.worlds.gharchive_world import write_hour
from swe_forge_dagster.demo.worlds.github_world_gen import world_from_pr_events
from swe_forge_dagster.gharchive.parse import parse_hour
from swe_forge_dagster.llm.ledger_postgres import llm_calls_table
from swe_forge_dagster.orchestration.launcher import materialize_hours
from swe_forge_dagster.settings import Settings
from swe_forge_dagster.wiring.catalog import query
from tests.support.common import hour

GH_TOKEN, LLM_KEY = "ghp_shared_state_token_1", "sk-shared-state-key-2"
HOUR = "2015-06-01-12:00"


@pytest.fixture
def twins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, GithubTwin, OpenAITwin]]:
    mirror = tmp_path / "mirror"
    path, _ = write_hour(mirror, hour(HOUR), events=8000, seed=7)
    world = world_from_pr_events(parse_hour(path, tmp_path / "w").table.to_pylist(), seed=7)
    monkeypatch.setenv("GITHUB_TOKEN", GH_TOKEN)
    monkeypatch.setenv("OPENROUTER_API_KEY", LLM_KEY)
    monkeypatch.delenv("SWE_FORGE_LLM_API_KEY", raising=False)
    with GithubTwin(world, token=GH_TOKEN) as github, OpenAITwin(triage_responder, api_key=LLM_KEY) as llm:
        yield mirror, github, llm


def settings_of(home: Path, mirror: Path, github_url: str, llm_url: str) -> Settings:
    return Settings(
        SWE_FORGE_HOME=str(home),
        SWE_FORGE_GHARCHIVE_URL=f"file://{mirror}",
        SWE_FORGE_GITHUB_API_URL=github_url,
        SWE_FORGE_LLM_BASE_URL=llm_url,
    )


def run_hour(settings: Settings) -> None:
    """The hour through the hourly job, in this process, with a Dagster instance of its own."""
    with dg.instance_for_test() as instance:
        (outcome,) = materialize_hours(build_definitions(settings), instance, [HOUR], job_name=HOURLY_PIPELINE_JOB)
        assert outcome.success, outcome.errors


ANOTHER_MACHINE = f"""
import sys
import dagster as dg
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.orchestration.launcher import materialize_hours
from swe_forge_dagster.settings import Settings

home, mirror, github_url, llm_url = sys.argv[1:5]
settings = Settings(SWE_FORGE_HOME=home, SWE_FORGE_GHARCHIVE_URL="file://" + mirror,
                    SWE_FORGE_GITHUB_API_URL=github_url, SWE_FORGE_LLM_BASE_URL=llm_url)
with dg.instance_for_test() as instance:
    (outcome,) = materialize_hours(build_definitions(settings), instance, ["{HOUR}"], job_name="hourly_pipeline_job")
    sys.exit(0 if outcome.success else outcome.errors)
"""


def run_on(home: Path, mirror: Path, github: GithubTwin, llm: OpenAITwin, *, own_process: bool) -> Settings:
    """The hour on a machine whose home is `home`: in this process, or in a process of its own (no pool,
    cache or connection shared with this one but the database)."""
    settings = settings_of(home, mirror, github.url, llm.url)
    if not own_process:
        run_hour(settings)
        return settings
    done = subprocess.run(
        [sys.executable, "-c", ANOTHER_MACHINE, str(home), str(mirror), github.url, llm.url],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return settings


def rows(settings: Settings, sql: str) -> list[dict]:
    return query(settings.lake_dir, sql).to_pylist()


def count(url: str, table: str) -> int:
    with contextlib.closing(psycopg2.connect(url)) as connection, connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM swe_forge.{table}")
        return cursor.fetchone()[0]


def test_a_second_machine_makes_no_github_or_llm_request(
    twins: tuple[Path, GithubTwin, OpenAITwin], postgres_db: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror, github, llm = twins
    monkeypatch.setenv("SWE_FORGE_POSTGRES_URL", postgres_db)

    first = run_on(tmp_path / "a", mirror, github, llm, own_process=False)
    paid_github, paid_llm = github.count(), llm.count()
    enriched = rows(first, "SELECT status FROM enriched_prs")
    classified = rows(first, "SELECT repo_name, number, difficulty, score FROM classified_prs ORDER BY 1, 2")
    assert paid_github > 0 and paid_llm == len(classified) > 5
    assert {r["status"] for r in enriched} <= {"accepted", "rejected"}
    assert count(postgres_db, "processed_prs") == len(enriched)  # every outcome, once
    calls = llm_calls_table()
    assert calls is not None and calls.num_rows == paid_llm and set(calls.column("outcome").to_pylist()) == {"ok"}
    local = first.layout
    for per_machine_file in (local.github_store, local.llm_answers, local.processed_prs, local.locks):
        assert not per_machine_file.exists(), per_machine_file  # all of it is in the database

    # Machine B, same hour: the shared ledger says every PR is done; nothing is asked, nothing recorded twice.
    github.reset_counters()
    llm.reset()
    second = run_on(tmp_path / "b", mirror, github, llm, own_process=True)
    assert github.count() == 0 and llm.count() == 0
    assert count(postgres_db, "processed_prs") == len(enriched)
    dropped = rows(second, "SELECT status, reason FROM pr_candidates WHERE reason LIKE 'already processed%'")
    assert len(dropped) == len(enriched) and rows(second, "SELECT * FROM classified_prs") == []

    # Machine C, with the ledger forgotten: every PR is enriched and classified again, from the shared caches.
    with contextlib.closing(psycopg2.connect(postgres_db)) as connection, connection.cursor() as cursor:
        cursor.execute("DELETE FROM swe_forge.processed_prs")
        connection.commit()
    third = run_on(tmp_path / "c", mirror, github, llm, own_process=True)
    assert github.count() == 0 and llm.count() == 0
    again = rows(third, "SELECT repo_name, number, difficulty, score FROM classified_prs ORDER BY 1, 2")
    assert again == classified
    assert count(postgres_db, "processed_prs") == len(enriched)
    calls = llm_calls_table()
    assert calls is not None and calls.num_rows == paid_llm + len(classified)
    assert sum(calls.column("cache_hit").to_pylist()) == len(classified)  # C's calls: all answered from the cache
