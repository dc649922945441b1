"""The names Dagster knows us by, written once: pools, the stage tag, jobs and dynamic partition sets.

These strings are stored outside the code, so a typo or a rename breaks things no import checks: a
pool's limit lives in the instance database (`orchestration.instance.POOL_LIMITS` sets it), and its
slots in the lock files and tables of `common.slots` under the same name; a job is targeted by name by
the sensors and the launcher, and recorded in every run; a partition set's keys live in the instance.
So every module and test names them through this module.

Plain Python, no Dagster import and nothing else from the package, so domain code (the task stage
declaration, the resources' slot helpers, the CLI) can name a pool or a job without depending on
Dagster or on the assets.
"""

from __future__ import annotations

from typing import Final

# Pools: cap steps across all runs (limits stored in the instance, `orchestration.instance.POOL_LIMITS`), and
# name the cross-process request slots of the clients behind them (`common.slots`).
GHARCHIVE_DOWNLOAD_POOL: Final = "gharchive_download"
GITHUB_API_POOL: Final = "github_api"
LLM_API_POOL: Final = "llm_api"
TASK_BUILD_POOL: Final = "task_build"
DOCKER_HARNESS_POOL: Final = "docker_harness"
DUCKDB_CATALOG_POOL: Final = "duckdb_catalog"

# The op tag the multiprocess executor caps steps by within one run (`definitions.STAGE_LIMITS`), and its values.
STAGE_TAG: Final = "swe_forge/stage"
GHARCHIVE_STAGE: Final = "gharchive"
CANDIDATES_STAGE: Final = "candidates"
GITHUB_STAGE: Final = "github"
LLM_STAGE: Final = "llm"
CATALOG_STAGE: Final = "catalog"
TASKS_STAGE: Final = "tasks"
HARNESS_STAGE: Final = "harness"

# Jobs: sensors, the launcher and the CLI target them by name (`assets.jobs` defines them).
GHARCHIVE_JOB: Final = "gharchive_job"
CANDIDATES_JOB: Final = "candidates_job"
HOURLY_PIPELINE_JOB: Final = "hourly_pipeline_job"
TASK_JOB: Final = "task_job"
EVAL_JOB: Final = "eval_job"
CATALOG_JOB: Final = "catalog_job"
DATASET_JOB: Final = "dataset_job"
EVAL_SUMMARY_JOB: Final = "eval_summary_job"

# Dynamic partition sets: one partition per task (keyed `owner__repo-123`), one per agent (`harness.store.agent_key`).
TASK_PARTITIONS: Final = "tasks"
AGENT_PARTITIONS: Final = "agents"
# The dimensions of `eval_result`'s (agent, task) partitions: multi-partition keys and stored runs name them.
AGENT_DIMENSION: Final = "agent"
TASK_DIMENSION: Final = "task"
