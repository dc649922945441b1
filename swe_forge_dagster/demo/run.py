"""`swe-forge demo`: the pipeline end to end on a generated world, with no keys and no network.

Two generated GH Archive hours (one classic payload, one trimmed 2025 payload) in a local
`file://` mirror, and the GitHub twin on 127.0.0.1 serving a world consistent with them. The
real assets run through Dagster, recorded in the demo's own instance: ingest, candidates,
GitHub enrichment and the local filter, and LLM difficulty triage against the OpenAI-compatible
twin. Later stages extend it.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from rich.console import Console

from swe_forge_dagster.demo.gharchive_world import TRIMMED_SINCE, write_hour
from swe_forge_dagster.gharchive.hours import partition_key
from swe_forge_dagster.gharchive.parse import parse_hour
from swe_forge_dagster.lake.render import render
from swe_forge_dagster.settings import Settings

DEMO_TOKEN_ENV = "SWE_FORGE_DEMO_GITHUB_TOKEN"  # never the user's GITHUB_TOKEN
DEMO_TOKEN = "demo-token-not-a-secret"
DEMO_LLM_KEY_ENV = "SWE_FORGE_DEMO_LLM_KEY"  # never the user's LLM key
DEMO_LLM_KEY = "demo-llm-key-not-a-secret"

SUMMARY_SQL = """
SELECT e.dt, e.hour, any_value(e.payload_format) AS payload, count(*) AS pr_events,
       count(*) FILTER (WHERE e.action = 'closed') AS closed,
       (SELECT count(*) FROM pr_candidates c WHERE c.dt = e.dt AND c.hour = e.hour AND c.status = 'candidate')
           AS candidates,
       (SELECT count(*) FROM enriched_prs p WHERE p.dt = e.dt AND p.hour = e.hour AND p.status = 'accepted')
           AS accepted,
       (SELECT count(*) FROM classified_prs t WHERE t.dt = e.dt AND t.hour = e.hour AND t.difficulty = 'easy')
           AS easy,
       (SELECT count(*) FROM classified_prs t WHERE t.dt = e.dt AND t.hour = e.hour AND t.difficulty = 'medium')
           AS medium,
       (SELECT count(*) FROM classified_prs t WHERE t.dt = e.dt AND t.hour = e.hour AND t.difficulty = 'hard')
           AS hard
FROM gharchive_pr_events e GROUP BY ALL ORDER BY e.dt, e.hour
"""
LLM_SQL = (
    "SELECT stage, count(*) AS calls, sum(prompt_tokens) AS tokens_in, sum(completion_tokens) AS tokens_out, "
    "round(sum(cost), 4) AS cost_usd FROM llm_calls GROUP BY 1"
)
REASONS_SQL = """
SELECT stage, reason, count(*) AS prs FROM enriched_prs WHERE status = 'rejected'
GROUP BY ALL ORDER BY prs DESC LIMIT 8
"""


def demo_hours(settings: Settings) -> list[dt.datetime]:
    """A classic-payload hour (when the start date allows) and a trimmed-payload hour."""
    start = dt.datetime.combine(settings.start_date, dt.time(), tzinfo=dt.UTC)
    trimmed = max(start, TRIMMED_SINCE) + dt.timedelta(hours=12)
    return sorted({start, trimmed})


def run_demo(settings: Settings, home: Path, out: Console, err: Console) -> int:
    from swe_forge_dagster.cli import _ingest
    from swe_forge_dagster.lake.catalog import query
    from swe_forge_dagster.testing.github_twin import GithubTwin
    from swe_forge_dagster.testing.github_world import world_from_pr_events
    from swe_forge_dagster.testing.openai_twin import OpenAITwin, triage_responder

    mirror = home / "gharchive-mirror"
    hours = demo_hours(settings)
    rows: list[dict] = []
    for index, hour in enumerate(hours):
        path, _ = write_hour(mirror, hour, events=20_000, seed=index)
        rows += parse_hour(path, home / "cache" / "work").table.to_pylist()
    world = world_from_pr_events(rows, seed=0)
    if "DAGSTER_HOME" not in os.environ:
        os.environ["DAGSTER_HOME"] = str(home / "dagster")
    os.environ[DEMO_TOKEN_ENV] = DEMO_TOKEN
    os.environ[DEMO_LLM_KEY_ENV] = DEMO_LLM_KEY
    with (
        GithubTwin(world, token=DEMO_TOKEN) as twin,
        OpenAITwin(triage_responder, api_key=DEMO_LLM_KEY, cost_per_mtok=(1.25, 10.0)) as llm,
    ):
        demo_settings = settings.model_copy(
            update={"home": home, "gharchive_url": f"file://{mirror}", "github_api_url": twin.url,
                    "llm_base_url": llm.url, "pr_file": home / "processed_prs.jsonl"}
        )  # fmt: skip
        err.print(f"demo world: {len(hours)} GH Archive hours in {mirror}; GitHub twin at {twin.url}; "
                  f"LLM twin at {llm.url}")  # fmt: skip
        keys = [partition_key(h) for h in hours]
        ok = _ingest(demo_settings, keys, job_name="hourly_pipeline_job", github_token_env=DEMO_TOKEN_ENV,
                     llm_key_envs=[DEMO_LLM_KEY_ENV])  # fmt: skip
        requests = len(twin.counted_requests())
    lake = demo_settings.lake_dir
    out.print("\n[bold]Funnel per hour[/] (swe-forge sql over the Parquet lake):")
    render(query(lake, SUMMARY_SQL), "table", out)
    out.print("[bold]Top rejection reasons[/]:")
    render(query(lake, REASONS_SQL), "table", out)
    candidates = query(lake, "SELECT count(*) AS n FROM enriched_prs").to_pylist()[0]["n"]
    out.print(f"GitHub requests spent: {requests} for {candidates} candidates (GraphQL, 30 PRs per request)")
    out.print("[bold]LLM calls[/] (the llm_calls view; the demo's twin bills like a priced model):")
    render(query(lake, LLM_SQL), "table", out)
    out.print(
        "\nNext:\n"
        f'  SWE_FORGE_HOME={home} swe-forge sql "SELECT reason, count(*) FROM enriched_prs GROUP BY 1"\n'
        f"  SWE_FORGE_HOME={home} swe-forge dev     # the Dagster UI on this demo's instance\n"
        f"  DuckDB clients: {home / 'catalog.duckdb'} (views over {home / 'lake'})"
    )
    return 0 if ok else 1
