"""The steps of a run on worker hosts, through Dagster's own Celery executor (`dagster-celery-docker`).

With `SWE_FORGE_BROKER_URL` set (`deploy/start --hosts N` sets it), every job runs with `celery_docker_executor`: the
run worker puts each step on the broker (RabbitMQ, Debian's `rabbitmq-server`), a Celery worker on some host takes
it and runs it in a container of the project image on that host's own Docker engine, and the step's sandboxes
(environment builds, test runs) are that engine's too. Both sides read the same Celery settings from here
(`celery_settings`), the worker through `celery_app`:

- **Nothing lost when a host dies, nothing run twice while it lives:** a step is acknowledged only once it ended
  (`task_acks_late`), and a worker that dies mid-step gives it back (`task_reject_on_worker_lost`). RabbitMQ hands an
  unacknowledged step to another worker as soon as the connection of the worker that held it is gone, which its
  heartbeats tell within `HEARTBEAT_SECONDS` x 2 (a killed host closes no connection), and never while that
  connection lives (deploy/hosts raises RabbitMQ's `consumer_timeout` to a day, over any step). Redis was tried first
  and left out: its visibility timeout redelivers a step that runs longer than it, to a second host, while the
  first still runs it.
- **One step at a time per slot:** a worker takes one message per process (`worker_prefetch_multiplier` 1), so a
  step is never held by a host that is busy.
- **The same step container as a run container:** the settings and secrets the run launcher forwards by name
  (`deploy.step_env_names`), the host's CA certificates, the local folder at its own path, the host's engine socket,
  and the host's network (the deployment's services are on its loopback, `relay`).
- **A queue per kind of work, derived from the pool:** a step's pool (the limit across runs) names its kind (`KINDS`:
  sandboxes on the host's engine, calls to remote services, the rest), the assets tag it with that kind's queue
  (`queue_tags`, dagster-celery's `dagster-celery/queue` op tag), and each host runs one worker per kind with its own
  concurrency (`worker_commands`): a host busy with builds still takes LLM calls, and a burst of LLM calls never
  holds the cores a build needs.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from swe_forge_dagster.common import dagster_names as names

BROKER_SETTING = "SWE_FORGE_BROKER_URL"
IMAGE_SETTING = "SWE_FORGE_IMAGE"
HEARTBEAT_SECONDS = 10
PUBLISH_PATIENCE_S = 120
"""How long a step waits to be sent while the broker is down (a restart takes seconds, longer on a loaded host)."""
QUEUE = "dagster"
"""dagster-celery's default queue: the steps of no pool, and of the pools of no remote service nor sandbox."""
DOCKER_QUEUE = "docker"
API_QUEUE = "api"
QUEUE_TAG = "dagster-celery/queue"
"""The op tag dagster-celery's executor reads a step's queue from (`dagster_celery.tags.DAGSTER_CELERY_QUEUE_TAG`),
written here so that the definitions load without importing Celery when no broker is set."""
APP = "swe_forge_dagster.orchestration.celery_app"
STEP_LABEL = "swe-forge.role"
DOCKER_SOCKET = "/var/run/docker.sock"
RESULTS_SETTING = "SWE_FORGE_RESULTS_URL"
RESULTS_SCHEME = "db+postgresql+psycopg2:"
"""Where each step's events come back to the run worker that sent it: a table of the deployment's Postgres (Celery's
database backend, `db+postgresql://…`; deploy/start sets it from `SWE_FORGE_POSTGRES_URL`). Not dagster-celery's
default, `rpc://`: its replies travel through the broker, so a run worker polling them died with the broker's
restart (`ConnectionResetError` in `result.ready()`, the host fault run of 2026-11-30), a run retried then failed at
its first send (the reply queue is declared on a connection of its own, outside the publish retry policy), and a
reply sent while the run worker was cut off was lost with its reply queue. Postgres is shared by every host already
(the run storage, `step_lease`), and a result written there outlives any broker restart."""


@dataclass(frozen=True)
class Kind:
    """A kind of work: its queue, the pools whose steps go there, and how many of its steps a host runs at once
    (`concurrency`, None: one per core of the host), which the setting `SWE_FORGE_HOST_<QUEUE>_CONCURRENCY` changes
    (0: this host takes none)."""

    queue: str
    pools: frozenset[str]
    concurrency: int | None
    why: str

    @property
    def setting(self) -> str:
        """Named after the queue, so deploy/hosts passes every kind's setting on by one pattern."""
        return f"SWE_FORGE_HOST_{self.queue.upper()}_CONCURRENCY"


KINDS: tuple[Kind, ...] = (
    Kind(
        DOCKER_QUEUE,
        frozenset({names.TASK_BUILD_POOL, names.DOCKER_HARNESS_POOL}),
        None,
        "sandboxes on the host's engine (environment builds, test runs, agent runs): bound by its cores",
    ),
    Kind(
        API_QUEUE,
        frozenset({names.GHARCHIVE_DOWNLOAD_POOL, names.GITHUB_API_POOL, names.LLM_API_POOL}),
        4,
        "calls to remote services (GH Archive downloads, GitHub, LLM calls): mostly waiting, several at a time",
    ),
    Kind(
        QUEUE,
        frozenset({names.DUCKDB_CATALOG_POOL}),
        1,
        "the rest (candidates, the catalog, exports, datasets): short local work",
    ),
)
"""Every pool has a kind (`queue_of` refuses one that has none): a queue no host took would hold its steps forever."""


def queue_of(pool: str | None) -> str:
    """The queue of the steps in `pool` (None: no pool, dagster-celery's default queue)."""
    if pool is None:
        return QUEUE
    for kind in KINDS:
        if pool in kind.pools:
            return kind.queue
    raise ValueError(f"pool {pool!r} is of no kind of work (celery_hosts.KINDS): no host would take its steps")


def queue_tags(pool: str | None) -> dict[str, str]:
    """The op tags that send a step of `pool` to its kind's queue on worker hosts; mere tags without a broker."""
    return {QUEUE_TAG: queue_of(pool)} if pool is not None else {}


def host_of(worker: str) -> str:
    """The host of a Celery worker's name (`docker@host1` -> `host1`): each host runs one worker per kind of work."""
    return worker.rpartition("@")[2]


def worker_commands(host: str, environ: Mapping[str, str] = os.environ, cores: int | None = None) -> list[list[str]]:
    """The Celery workers host `host` runs (deploy/host/entrypoint): one per kind of work, named `<queue>@<host>`,
    taking its queue only, with the kind's concurrency (its setting, else its default; `cores`: the host's, which
    the default of the sandboxes' kind is). ValueError for a bad name or setting, or a host that would take nothing."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", host):
        raise ValueError(f"host name {host!r}: letters, digits, '.', '_' and '-' only")
    cores = cores or len(os.sched_getaffinity(0))
    commands = []
    for kind in KINDS:
        value = environ.get(kind.setting, "").strip()
        if value and not value.isdigit():
            raise ValueError(f"{kind.setting}={value!r}: a number of steps at once (0: none of {kind.queue!r})")
        concurrency = int(value) if value else (kind.concurrency or cores)
        if concurrency:
            worker = ["celery", "-A", APP, "worker", "-n", f"{kind.queue}@{host}", "-Q", kind.queue]
            commands.append([*worker, "-c", str(concurrency), "--loglevel", "INFO"])
    if not commands:
        raise ValueError(f"host {host}: every SWE_FORGE_HOST_<QUEUE>_CONCURRENCY is 0, it would take no step")
    return commands


def celery_settings() -> dict[str, Any]:
    """Celery's settings, the same on the run worker (executor) and on every host's worker."""
    return {
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_default_queue": QUEUE,
        "task_default_priority": 5,
        "broker_heartbeat": HEARTBEAT_SECONDS,
        "broker_connection_retry_on_startup": True,
        "result_persistent": True,
        # A step sent while the broker is down (restarted, a network blip) waits for it, up to PUBLISH_PATIENCE_S,
        # rather than failing the run: Celery's own policy gives up after 3 tries in 0.6 s, and a run retried while
        # the broker restarted failed so in the fault run (benchmarks/host_faults.py, 2026-11-30).
        "task_publish_retry": True,
        "task_publish_retry_policy": {
            "max_retries": PUBLISH_PATIENCE_S // 2,
            "interval_start": 0,
            "interval_step": 1,
            "interval_max": 2,
        },
    }


def broker_url(environ: Mapping[str, str] = os.environ) -> str:
    """The broker's URL (`amqp://user:password@127.0.0.1:5672//`); ValueError for anything else."""
    url = environ.get(BROKER_SETTING, "")
    if not url.startswith(("amqp://", "pyamqp://", "amqps://")):
        raise ValueError(f"{BROKER_SETTING}: an AMQP URL (amqp://user:password@host:port//), as deploy/hosts starts")
    return url


def results_url(environ: Mapping[str, str] = os.environ) -> str:
    """The result backend's URL (`db+postgresql://user:password@127.0.0.1:5433/dagster`); ValueError for anything
    else, the broker's own `rpc://` above all (see `RESULTS_SETTING`)."""
    url = environ.get(RESULTS_SETTING, "")
    if not url.startswith(RESULTS_SCHEME):
        raise ValueError(
            f"{RESULTS_SETTING}: a Postgres URL for Celery's results ({RESULTS_SCHEME}//user:password@host:port/db, "
            "as deploy/start sets from SWE_FORGE_POSTGRES_URL), not one that goes through the broker"
        )
    return url


def results_url_for(postgres_url: str) -> str:
    """The result backend on this Postgres database: Celery's `db+` prefix, and psycopg2 named, the driver the
    project has (SQLAlchemy 2.1 takes a bare `postgresql://` for psycopg 3)."""
    scheme, separator, rest = postgres_url.partition("://")
    if not separator or scheme not in ("postgresql", "postgres", "postgresql+psycopg2"):
        raise ValueError(f"SWE_FORGE_POSTGRES_URL: a postgresql:// URL, not {scheme or postgres_url[:20]!r}")
    return f"{RESULTS_SCHEME}//{rest}"


def step_container_kwargs(local_root: str, labels: Mapping[str, str] = {}) -> dict[str, Any]:
    """What a step container gets on its host, as a run container gets it from the run launcher."""
    return {
        "volumes": [
            f"{DOCKER_SOCKET}:{DOCKER_SOCKET}",
            "/etc/ssl/certs:/etc/ssl/certs:ro",
            f"{local_root}:{local_root}",
        ],
        "network_mode": "host",
        "labels": {STEP_LABEL: "step-worker", **labels},
    }


def executor_config(
    image: str | None, forwarded: list[str], local_root: str, environ: Mapping[str, str] = os.environ
) -> dict[str, Any]:
    """`celery_docker_executor`'s configuration: the broker, the shared settings, step retries, the step container
    (`forwarded`: the variable names each host's worker passes on to its step containers) and its image; without
    one, the image the code location says it runs in (the code server's `DAGSTER_CURRENT_IMAGE`, which deploy/start
    sets to the registry's digest of the project image)."""
    broker_url(environ)  # checked here; the config names them, so no password ever enters a job's snapshot
    results_url(environ)
    docker: dict[str, Any] = {
        "env_vars": forwarded,
        # the step loads the same definitions, which choose this executor by the broker's setting: it is among
        # `forwarded` (a run secret), so its value comes from the host's worker, never from the step's message
        "container_kwargs": step_container_kwargs(local_root),
    }
    if image:
        docker["image"] = image
    return {
        "broker": {"env": BROKER_SETTING},
        "backend": {"env": RESULTS_SETTING},
        "config_source": celery_settings(),
        "retries": {"enabled": {}},
        "docker": docker,
    }


def uses_hosts(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether runs put their steps on worker hosts (a broker is set)."""
    return bool(environ.get(BROKER_SETTING))


def main(argv: list[str]) -> int:
    """`python -m swe_forge_dagster.orchestration.celery_hosts workers HOST`: the host's worker command lines, one a
    line (plain words, no quoting: the entrypoint splits them on spaces); `... results-url`: the result backend's URL
    on `SWE_FORGE_POSTGRES_URL`'s database (deploy/start and deploy/hosts set `SWE_FORGE_RESULTS_URL` to it)."""
    usage = "usage: python -m swe_forge_dagster.orchestration.celery_hosts workers HOST | results-url"
    if argv not in (["results-url"],) and (len(argv) != 2 or argv[0] != "workers"):
        print(usage, file=sys.stderr)
        return 2
    try:
        if argv == ["results-url"]:
            lines = [results_url_for(os.environ.get("SWE_FORGE_POSTGRES_URL", ""))]
        else:
            lines = [" ".join(command) for command in worker_commands(argv[1])]
    except ValueError as error:
        print(f"celery_hosts: {error}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
