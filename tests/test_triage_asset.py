"""`classified_prs` through Dagster: GitHub twin + OpenAI twin, re-runs free, failures explicit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from swe_forge_dagster.common.dagster_names import HOURLY_PIPELINE_JOB
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.demo.twins.github_twin import GithubTwin
from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin, Text, triage_responder
from swe_forge_dagster.demo.worlds.gharchive_world import write_hour
from swe_forge_dagster.demo.worlds.github_world_gen import world_from_pr_events
from swe_forge_dagster.gharchive.parse import parse_hour
from swe_forge_dagster.orchestration.launcher import materialize_hours
from swe_forge_dagster.settings import Settings
from swe_forge_dagster.wiring.catalog import query
from tests.support.common import hour

GH_TOKEN, LLM_KEY = "ghp_triage_test_token_123", "sk-or-triage-test-key-456"
HOUR = "2015-06-01-12:00"


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Settings, OpenAITwin]]:
    mirror = tmp_path / "mirror"
    path, _ = write_hour(mirror, hour(HOUR), events=8000, seed=5)
    world = world_from_pr_events(parse_hour(path, tmp_path / "w").table.to_pylist(), seed=5)
    monkeypatch.setenv("GITHUB_TOKEN", GH_TOKEN)
    monkeypatch.setenv("OPENROUTER_API_KEY", LLM_KEY)
    monkeypatch.delenv("SWE_FORGE_LLM_API_KEY", raising=False)
    with GithubTwin(world, token=GH_TOKEN) as github, OpenAITwin(triage_responder, api_key=LLM_KEY) as llm:
        yield (
            Settings(
                SWE_FORGE_HOME=str(tmp_path / "home"),
                SWE_FORGE_GHARCHIVE_URL=f"file://{mirror}",
                SWE_FORGE_GITHUB_API_URL=github.url,
                SWE_FORGE_LLM_BASE_URL=llm.url,
                SWE_FORGE_LLM_PRICE_INPUT=1.0,
                SWE_FORGE_LLM_PRICE_OUTPUT=4.0,
            ),
            llm,
        )


def run(settings: Settings, instance: dg.DagsterInstance) -> list:
    return materialize_hours(build_definitions(settings), instance, [HOUR], job_name=HOURLY_PIPELINE_JOB)


def metadata(instance: dg.DagsterInstance) -> dict:
    records = instance.fetch_materializations(dg.AssetKey("classified_prs"), limit=10).records
    return {k: v.value for k, v in records[0].asset_materialization.metadata.items()}


def test_every_accepted_pr_is_classified_once(setup: tuple[Settings, OpenAITwin], instance: dg.DagsterInstance) -> None:
    settings, llm = setup
    (outcome,) = run(settings, instance)
    assert outcome.success, outcome.errors
    lake = settings.lake_dir
    accepted = query(lake, "SELECT count(*) AS n FROM enriched_prs WHERE status = 'accepted'").to_pylist()[0]["n"]
    rows = query(lake, "SELECT difficulty, score FROM classified_prs WHERE status = 'classified'").to_pylist()
    assert accepted > 5 and len(rows) == accepted == llm.count()
    tiers = {"easy": (0.1, 0.35), "medium": (0.4, 0.65), "hard": (0.7, 1.0)}
    assert all(tiers[r["difficulty"]][0] <= r["score"] <= tiers[r["difficulty"]][1] for r in rows)
    meta = metadata(instance)
    assert meta["llm_calls"] == accepted and meta["classified"] == accepted and meta["cost_usd"] > 0
    assert meta["prompt_tokens"] > 0 and "| easy |" in meta["difficulty"]
    # the acceptance query, through the CLI
    env = {**os.environ, "SWE_FORGE_HOME": str(settings.home_abs)}
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "swe_forge_dagster.cli",
            "sql",
            "SELECT stage, count(*) AS calls, sum(cost) AS cost FROM llm_calls GROUP BY stage",
            "--format",
            "json",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert cli.returncode == 0, cli.stderr
    (row,) = json.loads(cli.stdout)
    assert row["stage"] == "triage" and row["calls"] == accepted and row["cost"] > 0


def test_rerun_makes_no_llm_calls(setup: tuple[Settings, OpenAITwin], instance: dg.DagsterInstance) -> None:
    settings, llm = setup
    assert run(settings, instance)[0].success
    llm.reset()
    assert run(settings, instance)[0].success
    assert llm.count() == 0
    meta = metadata(instance)
    assert meta["llm_calls"] == 0 and meta["llm_cache_hits"] == meta["prs_in"]


def stubborn(request: dict) -> object:
    """Never calls the tool for about one item in four (keyed on the item's first user message)."""
    first = request["messages"][1]["content"]
    return Text("medium, probably") if zlib.crc32(first.encode()) % 4 == 0 else triage_responder(request)


def test_an_item_that_never_validates_is_an_error_row_not_a_default(
    setup: tuple[Settings, OpenAITwin], instance: dg.DagsterInstance
) -> None:
    settings, llm = setup
    llm.responder = stubborn  # type: ignore[assignment]
    (outcome,) = run(settings, instance)
    assert outcome.success
    lake = settings.lake_dir
    errors = query(lake, "SELECT difficulty, error FROM classified_prs WHERE status = 'error'").to_pylist()
    stubborn_items = {
        r.json["messages"][1]["content"]
        for r in llm.requests
        if zlib.crc32(r.json["messages"][1]["content"].encode()) % 4 == 0
    }
    assert len(errors) == len(stubborn_items) > 0
    assert all(
        e["difficulty"] is None and "no valid classify_difficulty call after 3 attempts" in e["error"] for e in errors
    )
    counts = query(lake, "SELECT count(*) AS n FROM classified_prs").to_pylist()[0]["n"]
    accepted = query(lake, "SELECT count(*) AS n FROM enriched_prs WHERE status = 'accepted'").to_pylist()[0]["n"]
    assert counts == accepted


def test_a_rejected_key_fails_the_partition_naming_the_variable(
    setup: tuple[Settings, OpenAITwin], instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, _ = setup
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-wrong")
    (outcome,) = run(settings, instance)
    assert not outcome.success
    assert any("OPENROUTER_API_KEY" in e and "sk-wrong" not in e for e in outcome.errors)
