"""The agents evaluated in a lake, by key: what lets any (agent, task) partition of `eval_result` run again.

`eval_result` is partitioned by (agent, task), and a run has one configured agent. Without a record of the
others, a run of another agent's partition (a UI backfill over the whole matrix, a re-materialization of one
cell) could only fail, and would paint that agent's verdict red. So each agent that `eval_result` runs is
recorded under its key (`store.agent_key` of its label) with what defines it: its kind, its folder and its
command. A later run of its partition runs that agent, provided its folder still holds the same content: the
label carries the folder's digest, so a changed folder is another agent, and its old partition says so
instead of being judged by new code. The run's other settings (image, timeouts, limits, forwarded variable
names) stay the configured ones: the record chooses which agent runs, never what it is given.

One JSON file per agent, `lake/agents/<key>.json`, written atomically (local folder or object store).
"""

from __future__ import annotations

import json

from swe_forge_dagster.common.agent_kind import AgentKind
from swe_forge_dagster.common.store import StorePath, write_bytes_atomic
from swe_forge_dagster.harness.models import HarnessConfig
from swe_forge_dagster.harness.store import agent_key

AGENTS = "agents"


class UnknownAgent(LookupError):
    """A partition's agent that this lake has no record of, or whose folder no longer holds it."""


def agent_file(lake_dir: StorePath, key: str) -> StorePath:
    return lake_dir / AGENTS / f"{key}.json"


def record_agent(lake_dir: StorePath, config: HarnessConfig) -> str:
    """Record the agent `config` runs under its key (idempotent); the key."""
    key = agent_key(config.agent_label)
    entry = {
        "label": config.agent_label,
        "agent": config.agent.value,
        "agent_dir": str(config.agent_dir) if config.agent_dir else None,
        "agent_cmd": config.agent_cmd,
    }
    path = agent_file(lake_dir, key)
    data = json.dumps(entry, indent=2).encode()
    if not path.is_file() or path.read_bytes() != data:
        write_bytes_atomic(path, data)
    return key


def config_for(lake_dir: StorePath, key: str, configured: HarnessConfig) -> HarnessConfig:
    """`configured` when it is agent `key`'s, else the recorded agent `key` with `configured`'s other settings.

    UnknownAgent when the lake has no such agent, or when its folder's content changed since (another agent now).
    """
    if agent_key(configured.agent_label) == key:
        return configured
    path = agent_file(lake_dir, key)
    if not path.is_file():
        raise UnknownAgent(
            f"no agent {key} was ever evaluated in this lake: configure it (SWE_FORGE_AGENT, or SWE_FORGE_AGENT_DIR "
            "and SWE_FORGE_AGENT_CMD, or the `harness` resource in the launchpad) to run its partitions"
        )
    entry = json.loads(path.read_text())
    kind = AgentKind.parse(entry["agent"], where=f"the agent recorded in {path}")
    chosen = configured.model_copy(
        update={"agent": kind, "agent_dir": entry["agent_dir"], "agent_cmd": entry["agent_cmd"]}
    )
    chosen = HarnessConfig.model_validate(chosen.model_dump())  # the recorded fields, validated as a config
    if agent_key(chosen.agent_label) != key:
        raise UnknownAgent(
            f"agent {entry['label']!r} ({key}) is no longer what {entry['agent_dir']} holds (its content changed, so "
            f"it is now {chosen.agent_label!r}): its partitions keep their verdicts; evaluate the new one as its own"
        )
    return chosen
