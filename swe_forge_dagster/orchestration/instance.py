"""The persistent Dagster instance: `DAGSTER_HOME` under `SWE_FORGE_HOME`, and the pool limits.

Without `DAGSTER_HOME`, `dagster dev` uses a temporary home and deletes run history, partition
status and sensor cursors on exit. Every `swe-forge` command calls `ensure_dagster_home` first,
so the CLI, the demo and `swe-forge dev` share one instance.

Its storage is SQLite in `DAGSTER_HOME` (one machine), or Postgres when `SWE_FORGE_POSTGRES_URL`
is set (`instance_yaml(postgres=True)`): then runs, events, partitions and pool limits are shared
by every machine and run container pointed at that database. The generated dagster.yaml names the
variable, never the URL (it holds the password); a dagster.yaml the user edited is left alone.

`open_instance` is where every command that runs jobs (and `setup`, `dev`) gets the instance, so
it is also where runs left behind by killed processes are failed and their pool slots freed
(`reaper.reap_dead_runs`): otherwise one `kill -9` blocks that pool for every later run. It also
makes slot claims atomic on the SQLite instance (`slot_claims`): processes claiming at the same
moment otherwise lose claims.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from swe_forge_dagster.common.dagster_names import (
    AGENT_PARTITIONS,
    DOCKER_HARNESS_POOL,
    DUCKDB_CATALOG_POOL,
    GHARCHIVE_DOWNLOAD_POOL,
    GITHUB_API_POOL,
    LLM_API_POOL,
    TASK_BUILD_POOL,
)
from swe_forge_dagster.common.postgres_url import POSTGRES_URL_SETTING, postgres_url
from swe_forge_dagster.settings import Settings

if TYPE_CHECKING:
    from dagster import DagsterInstance

TEMPLATE = Path(__file__).with_name("dagster_instance.yaml")

# Pool limits across all runs (docs/deployment.md's pool table); stored in the instance database.
POOL_LIMITS: dict[str, int] = {
    GHARCHIVE_DOWNLOAD_POOL: 8,
    GITHUB_API_POOL: 3,
    LLM_API_POOL: 10,
    TASK_BUILD_POOL: 3,
    DOCKER_HARNESS_POOL: 2,
    DUCKDB_CATALOG_POOL: 1,
}


POSTGRES_STORAGE = f"""
# Postgres storage (because {POSTGRES_URL_SETTING} is set): runs, event logs, partitions, schedules and
# pool limits shared by every machine and run container. The URL is read from the environment when the
# instance loads, in any Postgres form (swe_forge_dagster/common/postgres_url.py); it is never written here.
storage:
  custom:
    module: swe_forge_dagster.orchestration.postgres_storage
    class: PostgresStorage
    config:
      postgres_url:
        env: {POSTGRES_URL_SETTING}
"""


def instance_yaml(postgres: bool) -> str:
    """The dagster.yaml `swe-forge` writes: the template, on Postgres or on SQLite in DAGSTER_HOME."""
    text = TEMPLATE.read_text()
    return text + POSTGRES_STORAGE if postgres else text


def ensure_dagster_home(settings: Settings) -> Path:
    """Point `DAGSTER_HOME` at a persistent folder (kept if already set) holding a dagster.yaml.

    The dagster.yaml follows `SWE_FORGE_POSTGRES_URL` while it is one that `swe-forge` wrote (Postgres
    when set, SQLite otherwise); one the user edited is kept as it is. A URL found only in `.env` is
    put in this process's environment: Dagster reads `env:` references from there.
    """
    url = postgres_url()
    if url and not os.environ.get(POSTGRES_URL_SETTING):
        os.environ[POSTGRES_URL_SETTING] = url
    home = settings.dagster_home
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    wanted = instance_yaml(postgres=url is not None)
    if not config.exists() or (
        config.read_text() in (instance_yaml(False), instance_yaml(True)) and config.read_text() != wanted
    ):
        tmp = config.with_suffix(".yaml.tmp")
        tmp.write_text(wanted)
        tmp.replace(config)
    os.environ["DAGSTER_HOME"] = str(home)
    return home


def set_pool_limits(instance: object, limits: dict[str, int] | None = None) -> dict[str, int]:
    """Write the pool limits into the instance (idempotent)."""
    limits = limits or POOL_LIMITS
    storage = instance.event_log_storage  # type: ignore[attr-defined]
    for pool, limit in limits.items():
        storage.set_concurrency_slots(pool, limit)
    return dict(limits)


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def open_instance(settings: Settings, notify: Callable[[str], None] = _to_stderr) -> DagsterInstance:
    """The persistent instance with its pool limits set and dead runs reaped (each one told to `notify`)."""
    import dagster as dg

    from swe_forge_dagster.orchestration.reaper import reap_dead_runs
    from swe_forge_dagster.orchestration.slot_claims import install

    install()  # before any slot is claimed or freed in this process
    ensure_dagster_home(settings)
    instance = dg.DagsterInstance.get()
    set_pool_limits(instance)
    for reaped in reap_dead_runs(instance):
        notify(reaped.describe())
    add_configured_agent(instance, settings)
    return instance


def add_configured_agent(instance: DagsterInstance, settings: Settings) -> None:
    """The configured agent's row of `eval_result` (partition `agents`), so the UI can launch its evaluations
    before any sensor or command has run it; nothing when no agent is configured."""
    from swe_forge_dagster.common.agent_kind import configured_kind
    from swe_forge_dagster.harness.models import HarnessConfig
    from swe_forge_dagster.harness.store import agent_key

    kind = configured_kind(settings.agent, bool(settings.agent_dir))
    if kind is None:
        return
    config = HarnessConfig(agent=kind, agent_dir=settings.agent_dir, agent_cmd=settings.agent_cmd)
    instance.add_dynamic_partitions(AGENT_PARTITIONS, [agent_key(config.agent_label)])
