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
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

BROKER_SETTING = "SWE_FORGE_BROKER_URL"
IMAGE_SETTING = "SWE_FORGE_IMAGE"
HEARTBEAT_SECONDS = 10
QUEUE = "dagster"
"""The one queue the steps go to today (dagster-celery's default); each host's worker takes `-c` at a time."""
STEP_LABEL = "swe-forge.role"
DOCKER_SOCKET = "/var/run/docker.sock"
RESULTS = "rpc://"
"""Each step's events come back to the run worker that sent it, on its own reply queue (dagster-celery's default)."""


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
    }


def broker_url(environ: Mapping[str, str] = os.environ) -> str:
    """The broker's URL (`amqp://user:password@127.0.0.1:5672//`); ValueError for anything else."""
    url = environ.get(BROKER_SETTING, "")
    if not url.startswith(("amqp://", "pyamqp://", "amqps://")):
        raise ValueError(f"{BROKER_SETTING}: an AMQP URL (amqp://user:password@host:port//), as deploy/hosts starts")
    return url


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
    broker_url(environ)  # checked here; the config names it, so its password never enters a job's snapshot
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
        "backend": RESULTS,
        "config_source": celery_settings(),
        "retries": {"enabled": {}},
        "docker": docker,
    }


def uses_hosts(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether runs put their steps on worker hosts (a broker is set)."""
    return bool(environ.get(BROKER_SETTING))
