"""Hours through the hourly jobs, reported as they end: what `swe-forge ingest` and the demo run.

In-process (the default), the runs go through `launcher.materialize_hours` (recorded in the
instance, the same asset code as the UI); afterwards the DuckDB catalog's views are refreshed,
which only warns when another process holds the catalog file. With `submit`, the same runs are
handed to the instance's run coordinator (`orchestration.submit`): their ids are printed with
where to follow them, and with `wait` they are followed to their end and reported the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from swe_forge_dagster.common.dagster_names import GHARCHIVE_JOB
from swe_forge_dagster.settings import Settings

if TYPE_CHECKING:
    import dagster as dg

    from swe_forge_dagster.gharchive.download import ArchiveFetcher
    from swe_forge_dagster.orchestration.launcher import RunOutcome


class IngestUsageError(ValueError):
    """The hours asked for are not hours of this deployment (a usage error, exit code 2)."""


@dataclass(frozen=True)
class Submit:
    """Launch through the instance's run coordinator (`--submit`) instead of in-process."""

    workspace: Path | None = None  # else SWE_FORGE_WORKSPACE
    wait: bool = False
    timeout: float | None = None  # with wait: stop waiting (exit 1, naming the runs) after this many seconds


def ingest_hours(
    settings: Settings,
    defs: dg.Definitions,
    keys: list[str],
    err: Console,
    *,
    job_name: str = GHARCHIVE_JOB,
    submit: Submit | None = None,
    out: Console | None = None,
    as_json: bool = False,
) -> bool:
    """Run `job_name` of `defs` for the hour `keys`, print a line per run; whether every hour succeeded (or was
    submitted). The caller builds `defs` (`definitions.build_definitions`): orchestration launches what it is
    given and never imports the code location that imports it.

    Raises `DownloadError` when GH Archive cannot even be asked whether an hour is published,
    `IngestUsageError` for keys outside the partitions, `SubmitError` when runs cannot be submitted,
    and KeyboardInterrupt when interrupted. `as_json`: the runs as one JSON object on `out` (`outcomes_json`), the
    lines on `err` as ever.
    """
    from swe_forge_dagster.gharchive.download import ArchiveFetcher
    from swe_forge_dagster.orchestration.instance import open_instance
    from swe_forge_dagster.orchestration.launcher import materialize_hours

    def notify(message: str) -> None:  # waits for pool slots, runs found dead
        err.print(message, style="yellow", markup=False, highlight=False)

    instance = open_instance(settings, notify)
    fetcher = ArchiveFetcher(settings.gharchive_url, settings.cache_dir)
    if submit is not None:
        return _submit_hours(settings, defs, instance, keys, job_name, fetcher, submit, err, out or Console(), as_json)
    with err.status(f"running {job_name} for {len(keys)} hour(s) from {settings.gharchive_url}"):
        try:
            outcomes = materialize_hours(
                defs, instance, keys, job_name=job_name, is_published=fetcher.is_published, notify=notify
            )
        except ValueError as exc:
            raise IngestUsageError(str(exc)) from exc
    return _report(settings, outcomes, err, (out or Console()) if as_json else None, job_name)


def _submit_hours(
    settings: Settings,
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    keys: list[str],
    job_name: str,
    fetcher: ArchiveFetcher,
    submit: Submit,
    err: Console,
    out: Console,
    as_json: bool = False,
) -> bool:
    """Submit the runs (ids on stdout, one per line, or one JSON object at the end), then follow them when asked
    to."""
    from swe_forge_dagster.orchestration.launcher import check_hours, published_hours
    from swe_forge_dagster.orchestration.submit import SubmittedRun, submitter, wait

    try:
        check_hours(defs.resolve_job_def(job_name), instance, keys)
    except ValueError as exc:
        raise IngestUsageError(str(exc)) from exc
    skipped, keys = published_hours(keys, fetcher.is_published)

    def submitted_one(run: SubmittedRun) -> None:  # as each run is submitted: an error later still leaves the ids
        if not as_json:
            out.print(run.run_id, markup=False, highlight=False)
        err.print(
            f"submitted run {run.run_id[:8]} {run.span} ({job_name}): {settings.ui_url}/runs/{run.run_id}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )

    with submitter(instance, submit.workspace) as runs:
        submitted = runs.submit_hours(job_name, keys, on_submit=submitted_one)
    for outcome in skipped:
        err.print(f"{outcome.keys[0]}: [yellow]skipped[/] ({outcome.errors[0]})")
    if not submit.wait:
        if as_json:
            found = {"job": job_name, "submitted": [r.run_id for r in submitted], "skipped": _json_runs(skipped)}
            out.print_json(data=found)
        if submitted:
            err.print(
                f"follow them in the Dagster UI ({settings.ui_url}/runs), with `dagster run list`, or submit "
                "with --wait to block until they end",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        return not skipped
    with err.status(f"waiting for {len(submitted)} run(s) (Ctrl-C stops waiting, not the runs)"):
        outcomes = wait(
            instance, submitted, lambda m: err.print(m, style="yellow", markup=False), timeout=submit.timeout
        )
    return _report(settings, [*skipped, *outcomes], err, out if as_json else None, job_name)


def _json_runs(outcomes: list[RunOutcome]) -> list[dict[str, object]]:
    return [
        {
            "run_id": o.run_id or None,
            "hours": o.keys,
            "status": "skipped" if not o.run_id else "ok" if o.success else "failed",
            "materialized": {asset: len(hours) for asset, hours in o.by_asset.items()},
            "errors": o.errors,
        }
        for o in outcomes
    ]


def _report(
    settings: Settings, outcomes: list[RunOutcome], err: Console, json_out: Console | None = None, job: str = ""
) -> bool:
    """A line per run (and its errors), then the catalog's views refreshed; whether all succeeded. With `json_out`,
    the runs also as one JSON object there: `{job, ok, runs: [{run_id, hours, status, materialized, errors}]}`."""
    from swe_forge_dagster.wiring.catalog import refresh_catalog_or_warning

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
    if json_out is not None:
        json_out.print_json(data={"job": job, "ok": ok, "runs": _json_runs(outcomes)})
    return ok
