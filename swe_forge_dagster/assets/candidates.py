"""`pr_candidates` (pre-filter, no network) and `enriched_prs` (GitHub + local filter), hourly.

Each hour of a ranged run is processed and recorded on its own: if a later hour fails, the
hours already done keep their materializations and only the failed ones need a retry. Built per
hourly partitions definition (`build_candidate_assets`): the hours follow the settings.
"""

from collections.abc import Callable
from typing import Any

import dagster as dg

from swe_forge_dagster.assets.partitions import hourly_backfill_policy
from swe_forge_dagster.assets.steps import step_options
from swe_forge_dagster.candidates.pipeline import CandidatesReport, EnrichReport, build_candidates, enrich_hour
from swe_forge_dagster.common.dagster_names import CANDIDATES_STAGE, GITHUB_API_POOL, GITHUB_STAGE
from swe_forge_dagster.github.client import GitHubAuthError, GitHubRateLimitError
from swe_forge_dagster.resources import GitHubResource, LakeResource, MiningResource


def hourly(partitions: dg.TimeWindowPartitionsDefinition, group_name: str) -> dict[str, Any]:
    """What every hourly stage after ingest shares: the hours, the backfill policy, its group and Parquet."""
    return {
        "partitions_def": partitions,
        "backfill_policy": hourly_backfill_policy(),
        "group_name": group_name,
        "kinds": {"parquet"},
    }


def _table(counts: dict[str, int], header: str) -> dg.MetadataValue:
    lines = [f"| {header} | PRs |", "|---|---|"] + [f"| {k} | {v} |" for k, v in counts.items()]
    return dg.MetadataValue.md("\n".join(lines) if counts else "none")


def run_hours(
    context: dg.AssetExecutionContext, work: Callable[[str], dict[str, object]], no_retry: tuple[type, ...] = ()
) -> dg.MaterializeResult:
    """Run `work(hour)` per partition key; record finished hours even when a later one fails."""
    done: dict[str, dict[str, object]] = {}
    for key in context.partition_keys:
        try:
            done[key] = work(key)
        except Exception as exc:
            for finished, metadata in done.items():
                context.log_event(dg.AssetMaterialization(context.asset_key, partition=finished, metadata=metadata))
            raise dg.Failure(
                description=f"hour {key}: {exc}",
                metadata={"failed_hour": key, "hours_done": list(done)},
                allow_retries=not isinstance(exc, no_retry),
            ) from exc
    for key, metadata in done.items():
        context.add_asset_metadata(metadata, partition_key=key)
    return dg.MaterializeResult(metadata={"hours_in_run": len(done)})


def candidates_metadata(report: CandidatesReport) -> dict[str, object]:
    return {
        "dagster/row_count": report.closed_prs,
        "closed_prs": report.closed_prs,
        "candidates": report.candidates,
        "dropped_by_reason": _table(report.dropped_by_reason, "dropped because"),
        "path": dg.MetadataValue.path(str(report.path)),
    }


def enrich_metadata(report: EnrichReport) -> dict[str, object]:
    return {
        "dagster/row_count": report.candidates_in,
        "candidates_in": report.candidates_in,
        "accepted": report.accepted,
        "rejected": sum(report.rejected_by_reason.values()),
        "rejections_by_reason": _table(report.rejected_by_reason, "rejected because"),
        "errors": report.errors,
        "from_store": report.from_store,
        "requests_spent": report.requests,
        "not_modified_304": report.not_modified,
        "graphql_cost": report.graphql_cost,
        "rate_limit_remaining": dg.MetadataValue.json(report.rate_limit_remaining),
        "seconds": report.seconds,
        "path": dg.MetadataValue.path(str(report.path)),
    }


def build_candidate_assets(
    partitions: dg.TimeWindowPartitionsDefinition, events: dg.AssetsDefinition
) -> tuple[dg.AssetsDefinition, dg.AssetsDefinition]:
    """`pr_candidates` after `events` (`gharchive_pr_events`), then `enriched_prs`, both over `partitions`."""

    @dg.asset(deps=[events], **step_options(CANDIDATES_STAGE), code_version="1", **hourly(partitions, "candidates"))
    def pr_candidates(
        context: dg.AssetExecutionContext, lake: LakeResource, mining: MiningResource
    ) -> dg.MaterializeResult:
        """Closed PRs of the hour, one row each: `candidate`, or `dropped` with the reason (bot, not merged, …)."""
        ledger, rules = mining.ledger(), mining.rules()

        def work(hour: str) -> dict[str, object]:
            report = build_candidates(lake.lake_dir, hour, ledger, rules)
            context.log.info(f"{hour}: {report.closed_prs} closed PRs, {report.candidates} candidates")
            return candidates_metadata(report)

        return run_hours(context, work)

    @dg.asset(
        deps=[pr_candidates],
        **step_options(GITHUB_STAGE, GITHUB_API_POOL),
        code_version="1",
        **hourly(partitions, "candidates"),
    )
    def enriched_prs(
        context: dg.AssetExecutionContext, lake: LakeResource, github: GitHubResource, mining: MiningResource
    ) -> dg.MaterializeResult:
        """Candidates enriched through GitHub (GraphQL, 30 per request) and put through the local filter."""
        config, ledger = mining.filter_config(), mining.ledger()
        with github.client() as client:
            enricher = github.enricher(client, config.max_files)

            def work(hour: str) -> dict[str, object]:
                report = enrich_hour(lake.lake_dir, hour, enricher, config, ledger)
                context.log.info(
                    f"{hour}: {report.candidates_in} candidates -> {report.accepted} accepted, "
                    f"{report.errors} errors; {report.requests} requests ({report.from_store} from the store)"
                )
                for sample in report.error_samples:
                    context.log.warning(sample)
                return enrich_metadata(report)

            return run_hours(context, work, no_retry=(GitHubAuthError, GitHubRateLimitError))

    return pr_candidates, enriched_prs
