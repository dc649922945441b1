"""The lake's datasets, declared once: the public views of the catalog (README, SQL), in this order.

Each dataset is declared by the package that writes it (its name, schema and hive layout, next to its
rows); this list is the one place that gathers them, so `lake.catalog` reads a registry rather than
importing every package that writes to the lake (those packages import `lake.writer`).
"""

from __future__ import annotations

from swe_forge_dagster.candidates.datasets import ENRICHED_PRS_DATASET, PR_CANDIDATES_DATASET
from swe_forge_dagster.gharchive.schema import PR_EVENTS
from swe_forge_dagster.gym.episodes import EPISODES_DATASET
from swe_forge_dagster.harness.results import EVAL_RESULTS_DATASET
from swe_forge_dagster.lake.dataset import Dataset, datasets_by_name
from swe_forge_dagster.llm.ledger_dataset import LLM_CALLS_DATASET
from swe_forge_dagster.tasks.status import TASKS, TASKS_SCHEMA
from swe_forge_dagster.triage.pipeline import CLASSIFIED_PRS_DATASET

TASKS_DATASET = Dataset(name=TASKS, schema=TASKS_SCHEMA, hive_types={"task": "VARCHAR"})
"""One file per task partition, replaced after every stage: the latest state of each task (`tasks.status`)."""

DATASETS: dict[str, Dataset] = datasets_by_name(
    [
        PR_EVENTS,
        PR_CANDIDATES_DATASET,
        ENRICHED_PRS_DATASET,
        CLASSIFIED_PRS_DATASET,
        TASKS_DATASET,
        EVAL_RESULTS_DATASET,
        LLM_CALLS_DATASET,
        EPISODES_DATASET,
    ]
)
"""Every dataset of the lake, one view each."""
