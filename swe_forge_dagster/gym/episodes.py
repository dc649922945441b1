"""The `episodes` dataset: one row per gym episode, and each episode's transcript.

Row: `lake/episodes/episode=<id>/part-0.parquet` (task, agent, steps, tool counts, reward, seconds,
transcript path...), written when the environment is ready (status `open`) and replaced when the episode
ends (`resolved` and the harness's other statuses, with reward 1.0 or 0.0; closed or reaped without an
answer: `agent_error`, 0.0). A gym that stops (SIGTERM, Ctrl-C, `Gym.close`) marks its open episodes
`abandoned` with no reward; a server killed with `kill -9` leaves `open` rows behind, and the next gym
started on the home marks them `abandoned` the same way once their owner process is certainly gone
(`execution.ownership`, the rule that removes its containers). An open that failed (the task could not be
set up, or its sanity check failed) is a row too, with no reward.

Transcript: a JSON line per call (tool, arguments, observation, seconds), appended and flushed as the call
returns, in the gym's local state folder, so a crash loses at most the call in flight. Arguments and
observations are cut at 100,000 characters; text that is not valid UTF-8 (a lone surrogate) is escaped.

Each answered episode's harness result is also stored in `eval_results` under the agent `gym:<agent>`
(`harness.store.write_result`; episodes that ended without an answer are not, so they never replace a
verdict), so `eval_summary` and SQL show gym agents next to harness runs;
`reward_rows` gives the per (agent, task) rewards the `eval_summary` asset reports.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pyarrow as pa

from swe_forge_dagster.common.store import StorePath, read_parquet
from swe_forge_dagster.execution.ownership import Owner, current_owner, owner_state
from swe_forge_dagster.gym.tools import TOOL_NAMES
from swe_forge_dagster.harness.models import TaskResult
from swe_forge_dagster.harness.store import write_result
from swe_forge_dagster.lake.dataset import Dataset
from swe_forge_dagster.lake.writer import PART_FILE, write_partition

log = logging.getLogger(__name__)

EPISODES = "episodes"
GYM_AGENT_PREFIX = "gym:"
OPEN, ABANDONED = "open", "abandoned"
MAX_TRANSCRIPT_TEXT = 100_000
TOOL_COUNTS_TYPE = pa.struct([pa.field(name, pa.int32()) for name in TOOL_NAMES])
EPISODES_SCHEMA = pa.schema(
    [
        pa.field("episode_id", pa.string(), nullable=False),
        pa.field("task_id", pa.string(), nullable=False),
        pa.field("repo", pa.string()),
        pa.field("agent", pa.string()),
        pa.field("server_id", pa.string()),
        pa.field("status", pa.string(), nullable=False),
        pa.field("reward", pa.float64()),
        pa.field("steps", pa.int32()),
        pa.field("tool_counts", TOOL_COUNTS_TYPE),
        pa.field("errors", pa.int32()),
        pa.field("seconds", pa.float64()),
        pa.field("setup_seconds", pa.float64()),
        pa.field("reason", pa.string()),
        pa.field("transcript_path", pa.string()),
        pa.field("owner", pa.string()),
        pa.field("started_at", pa.timestamp("us", tz="UTC")),
        pa.field("ended_at", pa.timestamp("us", tz="UTC")),
    ]
)
"""No `episode` column: the hive folder is `episode=<id>` (a file column of that name would clash in DuckDB)."""
EPISODES_DATASET = Dataset(name=EPISODES, schema=EPISODES_SCHEMA, hive_types={"episode": "VARCHAR"})
"""One file per gym episode: written when it opens, replaced when it ends."""


def gym_agent(agent: str) -> str:
    """The agent's label in `eval_results`."""
    return f"{GYM_AGENT_PREFIX}{agent}"


def episode_path(lake_dir: StorePath, episode_id: str) -> StorePath:
    return EPISODES_DATASET.partition_dir(lake_dir, episode=episode_id) / PART_FILE


def write_episode(lake_dir: StorePath, row: dict[str, Any]) -> StorePath:
    table = pa.Table.from_pylist([row], schema=EPISODES_SCHEMA)
    return write_partition(table, episode_path(lake_dir, row["episode_id"]).parent, EPISODES_SCHEMA)


def read_episodes(lake_dir: StorePath) -> list[dict[str, Any]]:
    """Every episode row, in the order they ended (open ones by their start, after those that ended before)."""
    rows: list[dict[str, Any]] = []
    for path in EPISODES_DATASET.root(lake_dir).glob(f"episode=*/{PART_FILE}"):
        try:
            rows += read_parquet(path).cast(EPISODES_SCHEMA).to_pylist()
        except (OSError, pa.ArrowException) as exc:  # a file being replaced on a store: skip it this time
            log.warning("cannot read %s: %s", path, exc)
    return sorted(rows, key=lambda row: row["ended_at"] or row["started_at"] or dt.datetime.min.replace(tzinfo=dt.UTC))


def reward_rows(lake_dir: StorePath) -> list[dict[str, Any]]:
    """Per (agent, task): episodes with a reward, their mean, the latest reward; agent then task order."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in read_episodes(lake_dir):
        if row["reward"] is not None:
            groups.setdefault((row["agent"] or "", row["task_id"]), []).append(row)
    return [
        {
            "agent": agent,
            "task_id": task,
            "episodes": len(rows),
            "mean_reward": round(sum(r["reward"] for r in rows) / len(rows), 4),
            "last_reward": rows[-1]["reward"],
        }
        for (agent, task), rows in sorted(groups.items())
    ]


def reward_table(rows: list[dict[str, Any]]) -> str:
    """`reward_rows` as a Markdown table (the `eval_summary` asset's `gym_rewards` metadata)."""
    lines = ["| agent | task | episodes | mean reward | last reward |", "|---|---|---|---|---|"]
    for row in rows:
        name = row["agent"].replace("|", "/")
        lines.append(f"| {name} | {row['task_id']} | {row['episodes']} | {row['mean_reward']} | {row['last_reward']} |")
    return "\n".join(lines) if len(lines) > 2 else "no gym episode has a reward yet"


def owner_text(owner: Owner) -> str:
    return json.dumps(asdict(owner), sort_keys=True)


def abandon_orphans(lake_dir: StorePath) -> list[str]:
    """Mark `open` episodes whose server process is certainly gone as `abandoned`; their ids."""
    now, me, done = dt.datetime.now(dt.UTC), current_owner(), []
    for row in read_episodes(lake_dir):
        if row["status"] != OPEN:
            continue
        try:
            owner = Owner(**json.loads(row["owner"] or "{}"))
        except (TypeError, ValueError):
            continue
        if owner_state(owner, me) is False:
            row.update(status=ABANDONED, ended_at=now, reason="the gym server stopped during the episode")
            write_episode(lake_dir, row)
            done.append(row["episode_id"])
    return done


class Transcript:
    """An episode's calls, one JSON line each, appended and flushed as they return."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def append(self, entry: dict[str, Any]) -> None:
        """One line; `arguments` and `observation` cut at MAX_TRANSCRIPT_TEXT characters (as JSON text, for
        arguments); never fails on text UTF-8 cannot hold (a lone surrogate is written as its escape)."""
        entry = {key: _capped(value) if key in ("arguments", "observation") else value for key, value in entry.items()}
        line = json.dumps({"at": dt.datetime.now(dt.UTC).isoformat(), **entry}, ensure_ascii=False, default=str)
        with self._lock, self.path.open("a", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(line + "\n")
            handle.flush()


def _capped(value: Any) -> Any:
    """`value` itself when short; else its text (JSON for an object) cut at MAX_TRANSCRIPT_TEXT with `[...]`."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if len(text) <= MAX_TRANSCRIPT_TEXT:
        return value
    return text[:MAX_TRANSCRIPT_TEXT] + "[...]"


class Recorder:
    """Writes a gym's episode rows (and their `eval_results` rows); a write that fails is logged, never raised:
    an episode's verdict must not be lost to its bookkeeping."""

    def __init__(self, lake_dir: StorePath | None, server_id: str) -> None:
        self.lake_dir = lake_dir
        self.server_id = server_id
        self.owner = owner_text(current_owner())

    def row(self, **values: Any) -> dict[str, Any]:
        row: dict[str, Any] = dict.fromkeys(EPISODES_SCHEMA.names)
        row.update(server_id=self.server_id, owner=self.owner, **values)
        return row

    def episode(self, row: dict[str, Any]) -> None:
        if self.lake_dir is None:
            return
        try:
            write_episode(self.lake_dir, row)
        except OSError as exc:  # LakeWriteError is an OSError
            log.warning("episode %s was not recorded in %s: %s", row["episode_id"], self.lake_dir, exc)

    def result(self, result: TaskResult, agent: str, episode_id: str) -> None:
        if self.lake_dir is None:
            return
        try:
            write_result(self.lake_dir, result, agent=gym_agent(agent), run_id=episode_id)
        except OSError as exc:
            log.warning("the result of episode %s was not recorded: %s", episode_id, exc)
