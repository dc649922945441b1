"""The jobs: named selections of the assets, what the sensors, the launcher and the UI run.

Sensors target them by name (`job_name=`), so these definitions and the sensors never import
each other; `definitions.py` holds both.
"""

from __future__ import annotations

import dagster as dg

from swe_forge_dagster.assets.candidates import enriched_prs, pr_candidates
from swe_forge_dagster.assets.catalog import catalog
from swe_forge_dagster.assets.gharchive import gharchive_pr_events
from swe_forge_dagster.assets.harness import eval_result, eval_summary
from swe_forge_dagster.assets.tasks import TASK_STAGE_ASSETS, swe_dataset
from swe_forge_dagster.assets.triage import classified_prs

# The hourly ingest as a job: what `swe-forge ingest` runs in-process.
gharchive_job = dg.define_asset_job("gharchive_job", selection=[gharchive_pr_events])
# Ingest through GitHub enrichment (needs a GitHub token, no LLM key).
candidates_job = dg.define_asset_job("candidates_job", selection=[gharchive_pr_events, pr_candidates, enriched_prs])
# The hourly mining stages end to end: ingest, pre-filter, enrich + filter, triage (the mining sensor's target).
hourly_pipeline_job = dg.define_asset_job(
    "hourly_pipeline_job", selection=[gharchive_pr_events, pr_candidates, enriched_prs, classified_prs]
)
# One task partition through every stage: what the task sensor requests, and a UI "materialize" of one task.
task_job = dg.define_asset_job("task_job", selection=TASK_STAGE_ASSETS)
# The configured agent on one exported task (what the harness sensor requests per new task).
eval_job = dg.define_asset_job("eval_job", selection=[eval_result])

# The unpartitioned assets, each as a job, so that every run in the UI's list says what it ran.
catalog_job = dg.define_asset_job("catalog_job", selection=[catalog])
dataset_job = dg.define_asset_job("dataset_job", selection=[swe_dataset])
eval_summary_job = dg.define_asset_job("eval_summary_job", selection=[eval_summary])

JOBS = [
    gharchive_job,
    candidates_job,
    hourly_pipeline_job,
    task_job,
    eval_job,
    catalog_job,
    dataset_job,
    eval_summary_job,
]
