"""The jobs: named selections of the assets, what the sensors, the launcher and the UI run.

Sensors target them by name (`job_name=`, from `common.dagster_names`), so these definitions and the
sensors never import each other; `definitions.py` holds both. Built from the assets of one settings'
graph (`assets.graph`): the hourly ones are built per settings.
"""

from __future__ import annotations

from collections.abc import Sequence

import dagster as dg

from swe_forge_dagster.assets.harness import eval_result, eval_summary
from swe_forge_dagster.assets.hourly import HourlyAssets
from swe_forge_dagster.assets.tasks import swe_dataset
from swe_forge_dagster.common.dagster_names import (
    CANDIDATES_JOB,
    CATALOG_JOB,
    DATASET_JOB,
    EVAL_JOB,
    EVAL_SUMMARY_JOB,
    GHARCHIVE_JOB,
    HOURLY_PIPELINE_JOB,
    TASK_JOB,
)


def build_jobs(
    hourly: HourlyAssets, catalog: dg.AssetsDefinition, task_stages: Sequence[dg.AssetsDefinition]
) -> list[dg.UnresolvedAssetJobDefinition]:
    """Every job over these assets."""
    return [
        # The hourly ingest as a job: what `swe-forge ingest` runs in-process.
        dg.define_asset_job(GHARCHIVE_JOB, selection=[hourly.events]),
        # Ingest through GitHub enrichment (needs a GitHub token, no LLM key).
        dg.define_asset_job(CANDIDATES_JOB, selection=[hourly.events, hourly.candidates, hourly.enriched]),
        # The hourly mining stages end to end: ingest, pre-filter, enrich + filter, triage (the mining sensor's target).
        dg.define_asset_job(HOURLY_PIPELINE_JOB, selection=hourly.assets),
        # One task partition through every stage: what the task sensor requests, and a UI "materialize" of one task.
        dg.define_asset_job(TASK_JOB, selection=list(task_stages)),
        # The configured agent on one exported task (what the harness sensor requests per new task).
        dg.define_asset_job(EVAL_JOB, selection=[eval_result]),
        # The unpartitioned assets, each as a job, so that every run in the UI's list says what it ran.
        dg.define_asset_job(CATALOG_JOB, selection=[catalog]),
        dg.define_asset_job(DATASET_JOB, selection=[swe_dataset]),
        dg.define_asset_job(EVAL_SUMMARY_JOB, selection=[eval_summary]),
    ]
