"""The `eval_results` lake dataset: the latest evaluation of each task by each agent.

One Parquet file per (agent, task): `lake/eval_results/agent_key=<slug>/task=<id>/part-0.parquet`,
replaced atomically, so re-evaluating a task replaces its row and agents never overwrite each
other. The slug is the agent's label made path-safe plus a short hash of the label, so two agents
with similar names stay apart.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

import pyarrow as pa

from swe_forge_dagster.common.store import StorePath, read_parquet
from swe_forge_dagster.harness.models import Status, TaskResult
from swe_forge_dagster.harness.results import EVAL_RESULTS, EVAL_RESULTS_SCHEMA, result_row
from swe_forge_dagster.lake.writer import write_partition


def agent_key(label: str) -> str:
    """The agent's key: its partition of `eval_result`'s agent dimension (`common.dagster_names.AGENT_PARTITIONS`)
    and its folder in the lake, path- and partition-key-safe, distinct for labels that slug alike."""
    slug = re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")[:40] or "agent"
    return f"{slug}-{hashlib.sha256(label.encode()).hexdigest()[:8]}"


def task_key(task_id: str) -> str:
    """A path-safe folder name for any input's task id (SWE-bench and seed ids may hold `/`); our own
    ids (`owner__repo-123`) stay as they are. The row keeps the real id."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", task_id).strip(".") or "task"
    return safe if safe == task_id else f"{safe[:80]}-{hashlib.sha256(task_id.encode()).hexdigest()[:8]}"


def result_path(lake_dir: StorePath, agent: str, task_id: str) -> StorePath:
    return lake_dir / EVAL_RESULTS / f"agent_key={agent_key(agent)}" / f"task={task_key(task_id)}" / "part-0.parquet"


def write_result(lake_dir: StorePath, result: TaskResult, *, agent: str, run_id: str | None) -> StorePath:
    table = pa.Table.from_pylist([result_row(result, run_id=run_id, agent=agent)], schema=EVAL_RESULTS_SCHEMA)
    return write_partition(table, result_path(lake_dir, agent, result.task_id).parent, EVAL_RESULTS_SCHEMA)


def has_result(lake_dir: StorePath, agent: str, task_id: str) -> bool:
    return result_path(lake_dir, agent, task_id).is_file()


def read_results(lake_dir: StorePath, agent: str | None = None) -> list[dict]:
    """Every stored row (of one agent when given), task id order."""
    root = lake_dir / EVAL_RESULTS
    pattern = f"agent_key={agent_key(agent)}/*/part-0.parquet" if agent else "*/*/part-0.parquet"
    rows: list[dict] = []
    for path in sorted(root.glob(pattern)):
        rows += read_parquet(path).cast(EVAL_RESULTS_SCHEMA).to_pylist()
    return sorted(rows, key=lambda row: row["task_id"])


def summaries_by_agent(rows: Iterable[dict]) -> dict[str, dict]:
    """`summary_of` per agent label, agents in name order."""
    by_agent: dict[str, list[dict]] = {}
    for row in rows:
        by_agent.setdefault(row.get("agent") or "(unnamed)", []).append(row)
    return {agent: summary_of(by_agent[agent]) for agent in sorted(by_agent)}


def summary_of(rows: Iterable[dict]) -> dict:
    """The seed's summary counts over stored rows (per-command details stay in the rows)."""
    rows = list(rows)
    counts = {status.value: sum(row["status"] == status.value for row in rows) for status in Status}
    times = [row["agent_duration_secs"] for row in rows if row.get("agent_duration_secs") is not None]
    return {
        "total": len(rows),
        **counts,
        "avg_agent_time_secs": round(sum(times) / len(times), 2) if times else 0.0,
        "resolved_rate": round(counts["resolved"] / len(rows), 4) if rows else 0.0,
    }
