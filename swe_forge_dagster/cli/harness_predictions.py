"""`swe-forge harness --predictions FILE`: SWE-bench's predictions as the agent, SWE-bench's report beside ours.

Only the tasks of `--input` that have a prediction are evaluated (SWE-bench's `incomplete_ids` are the others).
A record that cannot be used (bad JSON, a missing key, an instance that is not among the tasks) becomes a
`setup_error` result naming its line and reason; every other record is still evaluated.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from swe_forge_dagster.cli.common import say

if TYPE_CHECKING:
    from swe_forge_dagster.harness.models import HarnessConfig, HarnessTask, TaskLoadError, TaskResult
    from swe_forge_dagster.harness.predictions import BadPrediction, Prediction


def predicted_items(
    items: list[HarnessTask | TaskLoadError],
    config: HarnessConfig,
    loaded: tuple[list[Prediction], list[BadPrediction]],
) -> list[HarnessTask | TaskLoadError]:
    """The tasks that have a prediction, then a `setup_error` input per prediction that cannot be evaluated."""
    from swe_forge_dagster.harness.models import TaskLoadError

    good, bad = loaded
    known = {item.task_id for item in items}
    chosen: list[HarnessTask | TaskLoadError] = [item for item in items if item.task_id in config.predictions]
    chosen += [
        TaskLoadError(task_id=p.instance_id, source="predictions", reason="bad prediction: not among the --input tasks")
        for p in good
        if p.instance_id not in known
    ]
    chosen += [
        TaskLoadError(
            task_id=b.instance_id or b.where, source=b.where, reason=f"bad prediction ({b.where}): {b.problem}"
        )
        for b in bad
    ]
    return chosen


def report_writer(
    items: list[HarnessTask | TaskLoadError],
    config: HarnessConfig,
    good: list[Prediction],
    *,
    output: Path | None,
    json_output: bool,
    reports_dir: Path,
) -> Callable[[list[TaskResult], dict[str, Any]], None]:
    """What writes SWE-bench's report once the results are in (beside --output, else in `reports_dir`: the home's
    `reports/`, never the current folder), and names it in ours."""
    from swe_forge_dagster.harness.predictions import report_name, swebench_report

    task_ids = [item.task_id for item in items]
    directory = output.parent if output is not None else reports_dir

    def add_report(results: list[TaskResult], summary: dict[str, Any]) -> None:
        report = swebench_report(good, task_ids, results)
        path = directory / report_name(config.model_name, config.run_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        summary["swebench_report"] = str(path)
        if not json_output:
            say("SWE-bench report:", "green", str(path))

    return add_report
