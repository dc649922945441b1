"""The evaluation harness: run coding agents on tasks in Docker and say honestly whether they solved them.

No Dagster here: the `swe-forge harness` command, the per-task assets and the tests all call
these functions. Entry points:

- `load_inputs(path, default_image=..., env_specs=...)` / `load_task_dir(dir, default_image=...)`
- `evaluate_and_record(harness, item, lake_dir=..., run_id=...)`: the per-task function of both
  `swe-forge harness` and the `eval_result` asset; `evaluate_task(task, config)` /
  `evaluate_task_dir(dir, config)` for one task,
  `Harness(config).evaluate(task)` to share one engine connection across tasks,
  `run_harness(items, config)` for a pool of them
- `summarize(results)` (the seed's JSON), `exit_code(results)`
- `EVAL_RESULTS_SCHEMA`, `result_row(result, ...)`, `results_table(results, ...)`
"""

from swe_forge_dagster.harness.inputs import EnvSpec, InputError, load_env_spec, load_inputs, load_task_dir
from swe_forge_dagster.harness.models import (
    CheckResult,
    HarnessConfig,
    HarnessTask,
    Status,
    TaskLoadError,
    TaskResult,
)
from swe_forge_dagster.harness.pool import run_harness, run_pool
from swe_forge_dagster.harness.results import EVAL_RESULTS_SCHEMA, result_row, results_table
from swe_forge_dagster.harness.run import Harness
from swe_forge_dagster.harness.session import evaluate_and_record, evaluate_task, evaluate_task_dir
from swe_forge_dagster.harness.summary import exit_code, summarize

__all__ = [
    "EVAL_RESULTS_SCHEMA",
    "CheckResult",
    "EnvSpec",
    "Harness",
    "HarnessConfig",
    "HarnessTask",
    "InputError",
    "Status",
    "TaskLoadError",
    "TaskResult",
    "evaluate_and_record",
    "evaluate_task",
    "evaluate_task_dir",
    "exit_code",
    "load_env_spec",
    "load_inputs",
    "load_task_dir",
    "result_row",
    "results_table",
    "run_harness",
    "run_pool",
    "summarize",
]
