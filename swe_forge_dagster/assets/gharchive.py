"""`gharchive_pr_events`: one GH Archive hour -> its PullRequestEvents as Parquet in the lake.

A backfill runs a few hours per run (`BackfillPolicy.multi_run`), each hour still its own
materialization with its own metadata. Hours in one run download concurrently (up to the
resource's cap, which also holds across runs); pool `gharchive_download` caps steps across runs.
Built per hourly partitions definition (`build_gharchive_pr_events`): the hours follow the settings.
"""

import dagster as dg

from swe_forge_dagster.assets.partitions import hourly_backfill_policy
from swe_forge_dagster.assets.steps import step_options
from swe_forge_dagster.common.dagster_names import GHARCHIVE_DOWNLOAD_POOL, GHARCHIVE_STAGE
from swe_forge_dagster.gharchive.download import HourNotPublishedError
from swe_forge_dagster.gharchive.hours import parse_partition_key
from swe_forge_dagster.gharchive.ingest import HourFailure, HourReport, ingest_hours
from swe_forge_dagster.resources import GharchiveResource, LakeResource


def hour_metadata(report: HourReport) -> dict[str, object]:
    """The per-hour numbers shown on each partition's materialization."""
    return {
        "dagster/row_count": report.pr_events,
        "events_read": report.events_read,
        "pr_events": report.pr_events,
        "pr_events_by_action": dg.MetadataValue.json(report.by_action),
        "merged": report.merged,
        "payload_formats": dg.MetadataValue.json(report.payload_formats),
        "bad_lines": report.bad_lines,
        "bytes_downloaded": report.bytes_downloaded,
        "uncompressed_bytes": report.uncompressed_bytes,
        "download_attempts": report.download_attempts,
        "download_seconds": report.download_seconds,
        "parse_seconds": report.parse_seconds,
        "seconds": report.seconds,
        "empty_hour": report.empty,
        "path": dg.MetadataValue.path(str(report.path)),
    }


def build_gharchive_pr_events(partitions: dg.TimeWindowPartitionsDefinition) -> dg.AssetsDefinition:
    """The asset over `partitions` (`partitions.build_hourly_partitions` of the settings)."""

    @dg.asset(
        partitions_def=partitions,
        backfill_policy=hourly_backfill_policy(),
        **step_options(GHARCHIVE_STAGE, GHARCHIVE_DOWNLOAD_POOL),
        kinds={"parquet", "duckdb"},
        group_name="gharchive",
        code_version="1",
    )
    def gharchive_pr_events(
        context: dg.AssetExecutionContext, gharchive: GharchiveResource, lake: LakeResource
    ) -> dg.MaterializeResult:
        """PullRequestEvents of each GH Archive hour (classic and trimmed payloads), one Parquet file per hour."""
        hours = [parse_partition_key(key) for key in context.partition_keys]
        reports: list[HourReport] = []
        failures: list[HourFailure] = []
        results = ingest_hours(hours, gharchive.fetcher(), lake.lake_dir, gharchive.options())
        for done, result in enumerate(results, start=1):
            if isinstance(result, HourFailure):
                failures.append(result)
                context.log.error(f"[{done}/{len(hours)}] {result.partition_key}: {result.error}")
                continue
            reports.append(result)
            warn = " (empty hour: no events in the file)" if result.empty else ""
            context.log.info(
                f"[{done}/{len(hours)}] {result.partition_key}: {result.events_read} events, "
                f"{result.pr_events} PR events, {result.bytes_downloaded / 1e6:.1f} MB in {result.seconds}s{warn}"
            )
        if failures:
            # Record the hours that did land, so only the failed ones need a retry.
            for report in reports:
                context.log_event(
                    dg.AssetMaterialization(
                        asset_key=context.asset_key, partition=report.partition_key, metadata=hour_metadata(report)
                    )
                )
            not_published = all(isinstance(f.error, HourNotPublishedError) for f in failures)
            raise dg.Failure(
                description=(
                    f"{len(failures)} of {len(hours)} hours failed: "
                    + "; ".join(f"{f.partition_key}: {f.error}" for f in failures[:5])
                ),
                metadata={"failed_hours": [f.partition_key for f in failures], "not_published": not_published},
                allow_retries=not not_published,
            )
        for report in reports:
            context.add_asset_metadata(hour_metadata(report), partition_key=report.partition_key)
        return dg.MaterializeResult(metadata={"hours_in_run": len(reports)})

    return gharchive_pr_events
