"""Hours through the hourly jobs, reported as they end: what `swe-forge ingest` and the demo run.

The runs go through `launcher.materialize_hours` (recorded in the instance, the same asset code
as the UI); afterwards the DuckDB catalog's views are refreshed, which only warns when another
process holds the catalog file.
"""

from __future__ import annotations

from rich.console import Console

from swe_forge_dagster.settings import Settings


class IngestUsageError(ValueError):
    """The hours asked for are not hours of this deployment (a usage error, exit code 2)."""


def ingest_hours(
    settings: Settings,
    keys: list[str],
    err: Console,
    *,
    job_name: str = "gharchive_job",
    github_token_env: str = "GITHUB_TOKEN",
    llm_key_envs: list[str] | None = None,
) -> bool:
    """Run `job_name` for the hour `keys`, print a line per run; whether every hour succeeded.

    Raises `DownloadError` when GH Archive cannot even be asked whether an hour is published,
    `IngestUsageError` for keys outside the partitions, and KeyboardInterrupt when interrupted.
    """
    from swe_forge_dagster.definitions import build_definitions
    from swe_forge_dagster.gharchive.download import ArchiveFetcher
    from swe_forge_dagster.lake.catalog import refresh_catalog_or_warning
    from swe_forge_dagster.orchestration.instance import open_instance
    from swe_forge_dagster.orchestration.launcher import materialize_hours

    def notify(message: str) -> None:  # waits for pool slots, runs found dead
        err.print(message, style="yellow", markup=False, highlight=False)

    instance = open_instance(settings, notify)
    defs = build_definitions(settings, github_token_env, llm_key_envs)
    with err.status(f"running {job_name} for {len(keys)} hour(s) from {settings.gharchive_url}"):
        fetcher = ArchiveFetcher(settings.gharchive_url, settings.cache_dir)
        try:
            outcomes = materialize_hours(defs, instance, keys, job_name=job_name, is_published=fetcher.is_published,
                                         notify=notify)  # fmt: skip
        except ValueError as exc:
            raise IngestUsageError(str(exc)) from exc
    ok = True
    for outcome in outcomes:
        state = "[green]ok[/]" if outcome.success else "[red]failed[/]"
        span = f"{outcome.keys[0]}..{outcome.keys[-1]}"
        if not outcome.run_id:
            err.print(f"{span}: [yellow]skipped[/]")
        else:
            per_asset = ", ".join(f"{a} {len(h)}/{len(outcome.keys)}" for a, h in outcome.by_asset.items())
            err.print(f"run {outcome.run_id[:8]} {span}: {state}; hours materialized: {per_asset or 'none'}")
        for message in outcome.errors:
            err.print(f"  {message}", style="red", markup=False)
        ok &= outcome.success
    if warning := refresh_catalog_or_warning(settings.catalog_path, settings.lake_dir):
        err.print("[yellow]warning:[/] ", end="")
        err.print(warning, markup=False, highlight=False)
    return ok
