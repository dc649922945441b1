"""One input item evaluated and recorded: the per-task function of `swe-forge harness` AND `eval_result`.

The CLI runs it for every item through the pool (`pool.run_harness`), the Dagster asset runs it
for its one partition; both record the result in the `eval_results` dataset (one Parquet file per
agent and task, `harness.store`), so CLI evaluations show up in `eval_summary` and in SQL next to
the ones the UI launched.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import docker

from swe_forge_dagster.harness.inputs import load_task_dir
from swe_forge_dagster.harness.models import HarnessConfig, HarnessTask, TaskLoadError, TaskResult
from swe_forge_dagster.harness.run import Harness
from swe_forge_dagster.harness.store import write_result

log = logging.getLogger(__name__)


def evaluate_and_record(
    harness: Harness,
    item: HarnessTask | TaskLoadError,
    *,
    lake_dir: Path | None,
    run_id: str | None,
    on_stage: Callable[[str], None] | None = None,
) -> TaskResult:
    """Evaluate `item` (an unreadable input is its `setup_error` result) and store its row under the agent's
    label when `lake_dir` is given; never raises for a task problem. A row that cannot be stored (a full
    disk, an unwritable home) is logged and the verdict still returned: the run's summary must not be lost
    to its bookkeeping."""
    result = item.as_result() if isinstance(item, TaskLoadError) else harness.evaluate(item, on_stage)
    if lake_dir is not None:
        try:
            write_result(lake_dir, result, agent=harness.config.agent_label, run_id=run_id)
        except OSError as exc:  # LakeWriteError is an OSError
            log.warning("the result of %s was not recorded in %s: %s", result.task_id, lake_dir, exc)
    return result


def evaluate_task(
    task: HarnessTask | TaskLoadError,
    config: HarnessConfig,
    *,
    client: docker.DockerClient | None = None,
    lake_dir: Path | None = None,
) -> TaskResult:
    """Evaluate ONE task with its own harness (recorded when `lake_dir` is given); never raises for task problems."""
    with Harness(config, client=client) as harness:
        return evaluate_and_record(harness, task, lake_dir=lake_dir, run_id=config.run_id)


def evaluate_task_dir(
    directory: str | Path,
    config: HarnessConfig,
    *,
    client: docker.DockerClient | None = None,
    lake_dir: Path | None = None,
) -> TaskResult:
    """Evaluate the task in `directory` (ours or the seed's); an unreadable one is a `setup_error` result."""
    loaded = load_task_dir(directory, default_image=config.docker_image)
    return evaluate_task(loaded, config, client=client, lake_dir=lake_dir)
