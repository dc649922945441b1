"""One input item evaluated and recorded: the per-task function of `swe-forge harness` AND `eval_result`.

The CLI runs it for every item through the pool (`pool.run_harness`), the Dagster asset runs it
for its one partition; both record the result in the `eval_results` dataset (one Parquet file per
agent and task, `harness.store`), so CLI evaluations show up in `eval_summary` and in SQL next to
the ones the UI launched.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from swe_forge_dagster.harness.models import HarnessTask, TaskLoadError, TaskResult
from swe_forge_dagster.harness.run import Harness
from swe_forge_dagster.harness.store import write_result


def evaluate_and_record(
    harness: Harness,
    item: HarnessTask | TaskLoadError,
    *,
    lake_dir: Path | None,
    run_id: str | None,
    on_stage: Callable[[str], None] | None = None,
) -> TaskResult:
    """Evaluate `item` (an unreadable input is its `setup_error` result) and store its row under the agent's
    label when `lake_dir` is given; never raises for a task problem."""
    result = item.as_result() if isinstance(item, TaskLoadError) else harness.evaluate(item, on_stage)
    if lake_dir is not None:
        write_result(lake_dir, result, agent=harness.config.agent_label, run_id=run_id)
    return result
