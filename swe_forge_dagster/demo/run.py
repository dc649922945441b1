"""`swe-forge demo`: the pipeline end to end on a generated world, with no keys and no network.

Today it ingests two generated GH Archive hours (one classic payload, one trimmed 2025 payload)
from a local `file://` mirror through the real Dagster asset, recorded in the demo's own
instance, and prints what SQL over the lake shows. Later stages extend it.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from rich.console import Console

from swe_forge_dagster.demo.gharchive_world import TRIMMED_SINCE, write_hour
from swe_forge_dagster.gharchive.hours import partition_key
from swe_forge_dagster.lake.render import render
from swe_forge_dagster.settings import Settings

SUMMARY_SQL = """
SELECT dt, hour, payload_format, count(*) AS pr_events,
       count(*) FILTER (WHERE action = 'opened') AS opened,
       count(*) FILTER (WHERE action = 'closed') AS closed,
       count(*) FILTER (WHERE merged) AS merged,
       count(DISTINCT repo_name) AS repos
FROM gharchive_pr_events GROUP BY ALL ORDER BY dt, hour
"""


def demo_hours(settings: Settings) -> list[dt.datetime]:
    """A classic-payload hour (when the start date allows) and a trimmed-payload hour."""
    start = dt.datetime.combine(settings.start_date, dt.time(), tzinfo=dt.UTC)
    trimmed = max(start, TRIMMED_SINCE) + dt.timedelta(hours=12)
    return sorted({start, trimmed})


def run_demo(settings: Settings, home: Path, out: Console, err: Console) -> int:
    from swe_forge_dagster.cli import _ingest
    from swe_forge_dagster.lake.catalog import query

    mirror = home / "gharchive-mirror"
    hours = demo_hours(settings)
    for index, hour in enumerate(hours):
        write_hour(mirror, hour, events=20_000, seed=index)
    demo_settings = settings.model_copy(update={"home": home, "gharchive_url": f"file://{mirror}"})
    if "DAGSTER_HOME" not in os.environ:
        os.environ["DAGSTER_HOME"] = str(home / "dagster")
    err.print(f"demo world: {len(hours)} GH Archive hours in {mirror}")
    ok = _ingest(demo_settings, [partition_key(h) for h in hours])
    out.print("\n[bold]PR events per hour[/] (swe-forge sql over the Parquet lake):")
    render(query(demo_settings.lake_dir, SUMMARY_SQL), "table", out)
    out.print(
        "\nNext:\n"
        f'  SWE_FORGE_HOME={home} swe-forge sql "SELECT action, count(*) FROM gharchive_pr_events GROUP BY 1"\n'
        f"  SWE_FORGE_HOME={home} swe-forge dev     # the Dagster UI on this demo's instance\n"
        f"  DuckDB clients: {home / 'catalog.duckdb'} (views over {home / 'lake'})"
    )
    return 0 if ok else 1
