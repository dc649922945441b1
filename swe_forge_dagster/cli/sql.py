"""`swe-forge sql`: SQL over the Parquet lake's views. Exit codes: 0 ok, 1 SQL error, 2 bad usage."""

from __future__ import annotations

from typing import Annotated

import typer

from swe_forge_dagster.cli.common import out, say, usage_error
from swe_forge_dagster.settings import get_settings


def sql(
    query: Annotated[str, typer.Argument(help="SQL over the views, e.g. SELECT count(*) FROM gharchive_pr_events")],
    fmt: Annotated[str | None, typer.Option("--format", "-f", help="table (the default) | csv | json")] = None,
    refresh: Annotated[bool, typer.Option(help="also refresh the catalog file's views")] = True,
    as_json: Annotated[bool, typer.Option("--json", "-j", help="JSON output (as --format json)")] = False,
) -> None:
    """Run SQL over the lake (views refreshed on demand; works while an ingest is writing)."""
    from swe_forge_dagster.lake.render import render
    from swe_forge_dagster.wiring.catalog import CatalogBusyError, QueryError, refresh_catalog
    from swe_forge_dagster.wiring.catalog import query as run_query

    if as_json and fmt not in (None, "json"):  # two options that disagree: neither silently wins
        raise usage_error(f"--json asks for JSON and --format for {fmt}: give one of them")
    fmt = fmt or ("json" if as_json else "table")
    if fmt not in ("table", "csv", "json"):
        raise usage_error(f"--format must be table, csv or json, not {fmt!r}")
    settings = get_settings()
    said: set[str] = set()

    def warn(message: str) -> None:  # e.g. the shared database down: llm_calls without its rows
        if message not in said:
            said.add(message)
            say("warning:", "yellow", message)

    if refresh:
        try:
            refresh_catalog(settings.catalog_path, settings.lake_dir, lock_timeout=5, warn=warn)
        except CatalogBusyError as exc:
            say("warning:", "yellow", f"catalog file not refreshed ({exc}); querying the lake directly")
    try:
        table = run_query(settings.lake_dir, query, warn=warn)
    except QueryError as exc:
        say("SQL error:", "red", exc)
        raise typer.Exit(1) from None
    render(table, fmt, out)
