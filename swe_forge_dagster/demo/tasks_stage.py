"""The demo's task stage: the task world's PRs become tasks through the real task jobs, in Docker.

The demo's mining hours are generated noise with invented PRs whose repositories exist nowhere;
the task world adds hours whose PRs live in local git remotes (`demo.worlds.task_world`), so those are
the PRs the demo builds tasks from: the same `task_job` runs the UI and `swe-forge mine` launch,
with the agents answered by the OpenAI twin as a good model would, and every command in Docker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from swe_forge_dagster.assets.partitions import eval_key
from swe_forge_dagster.common.agent_kind import AgentKind
from swe_forge_dagster.common.dagster_names import EVAL_JOB, TASK_PARTITIONS
from swe_forge_dagster.common.examples import examples_dir
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.export.dataset import DATASET_NAME
from swe_forge_dagster.orchestration.launcher import materialize_assets, run_partitions
from swe_forge_dagster.orchestration.mine import run_tasks
from swe_forge_dagster.settings import Settings
from swe_forge_dagster.tasks.lookup import eligible_task_ids


@dataclass
class TaskStageResult:
    rows: list[dict[str, Any]] = field(default_factory=list)
    dataset: Path | None = None

    @property
    def accepted(self) -> list[dict[str, Any]]:
        return [row for row in self.rows if row["status"] == "accepted"]


def build_demo_tasks(
    defs: dg.Definitions, instance: dg.DagsterInstance, settings: Settings, hours: list[str]
) -> TaskStageResult:
    existing = set(instance.get_dynamic_partitions(TASK_PARTITIONS))
    new, _ = eligible_task_ids(settings.lake_dir, [], existing, 100, hours=hours)
    result = TaskStageResult(rows=run_tasks(defs, instance, new, settings.lake_dir) if new else [])
    if materialize_assets(defs, instance, ["swe_dataset"]):
        result.dataset = settings.layout.datasets / f"{DATASET_NAME}.jsonl"
    return result


def demo_agents() -> dict[str, dict[str, Any]]:
    """The two reference agents that bracket a harness: the gold patch must resolve every task, no change none."""
    empty = examples_dir() / "emptyagent"
    return {
        "oracle": {"agent": AgentKind.ORACLE.value},
        "empty agent": {"agent": AgentKind.COMMAND.value, "agent_dir": empty, "agent_cmd": "python -m emptyagent"},
    }


def evaluate_demo_tasks(
    settings: Settings, instance: dg.DagsterInstance, task_ids: list[str], llm_key_envs: list[str]
) -> bool:
    """Each reference agent on each exported task through `eval_job`, then its `eval_summary`."""
    ok = True
    for update in demo_agents().values():
        agent_settings = settings.model_copy(update=update)
        defs = build_definitions(agent_settings, llm_key_envs=llm_key_envs)
        label = defs.resources["harness"].label
        ok &= all(run_partitions(defs, instance, EVAL_JOB, [eval_key(label, t) for t in task_ids]).values())
        ok &= materialize_assets(defs, instance, ["eval_summary"])
    return ok
