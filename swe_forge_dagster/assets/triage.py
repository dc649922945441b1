"""`classified_prs`: difficulty triage of each hour's accepted PRs (pool `llm_api`).

Built per hourly partitions definition (`build_classified_prs`): the hours follow the settings.
"""

import dagster as dg

from swe_forge_dagster.assets.candidates import hourly, run_hours
from swe_forge_dagster.assets.steps import step_options
from swe_forge_dagster.common.dagster_names import LLM_API_POOL, LLM_STAGE
from swe_forge_dagster.llm.client import LLMAuthError
from swe_forge_dagster.resources import LakeResource, LLMResource
from swe_forge_dagster.triage.pipeline import ClassifyReport, classify_hour


def classify_metadata(report: ClassifyReport) -> dict[str, object]:
    bars = "\n".join(
        f"| {d} | {report.by_difficulty.get(d, 0)} | {'█' * report.by_difficulty.get(d, 0)} |"
        for d in ("easy", "medium", "hard")
    )
    return {
        "dagster/row_count": report.prs_in,
        "prs_in": report.prs_in,
        "classified": report.classified,
        "errors": report.errors,
        "difficulty": dg.MetadataValue.md(f"| difficulty | PRs | |\n|---|---|---|\n{bars}"),
        "llm_calls": report.calls,
        "llm_cache_hits": report.cache_hits,
        "prompt_tokens": report.prompt_tokens,
        "completion_tokens": report.completion_tokens,
        "cost_usd": report.cost,
        "seconds": report.seconds,
        "path": dg.MetadataValue.path(str(report.path)),
    }


def build_classified_prs(
    partitions: dg.TimeWindowPartitionsDefinition, enriched: dg.AssetsDefinition
) -> dg.AssetsDefinition:
    """`classified_prs` after `enriched` (`enriched_prs`), over `partitions`."""

    @dg.asset(
        deps=[enriched],
        **step_options(LLM_STAGE, LLM_API_POOL),
        code_version="1",
        **hourly(partitions, "triage"),
    )
    def classified_prs(context: dg.AssetExecutionContext, lake: LakeResource, llm: LLMResource) -> dg.MaterializeResult:
        """Each accepted PR classified once: easy|medium|hard with a score in the tier's range and reasoning."""
        with llm.client() as client:

            def work(hour: str) -> dict[str, object]:
                report = classify_hour(lake.lake_dir, hour, client, workers=llm.max_in_flight)
                context.log.info(
                    f"{hour}: {report.classified}/{report.prs_in} classified {report.by_difficulty}, "
                    f"{report.calls} calls ({report.cache_hits} cached), ${report.cost:.4f}"
                )
                for sample in report.error_samples:
                    context.log.warning(sample)
                return classify_metadata(report)

            return run_hours(context, work, no_retry=(LLMAuthError,))

    return classified_prs
