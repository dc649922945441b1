"""The steps of a run on worker hosts, through Dagster's own Celery executor (`dagster-celery-docker`).

With `SWE_FORGE_BROKER_URL` set (`deploy/hosts` sets it), every job runs with `celery_docker_executor`: the run
worker puts each step on the broker, a Celery worker on some host takes it and runs it in a container of the project
image on that host's own Docker engine, and the step's sandboxes (environment builds, test runs) are that engine's
too. Both sides read the same Celery settings from here (`CELERY_SETTINGS`), the worker through `celery_app`:

- **Nothing lost when a host dies:** a step is acknowledged only once it ended (`task_acks_late`), and a worker that
  dies mid-step gives it back (`task_reject_on_worker_lost`); the broker hands an unacknowledged step to another
  worker after `SWE_FORGE_STEP_REDELIVERY_SECONDS` (Redis's visibility timeout), and Dagster's step retries
  (`retries: enabled`) run it again.
- **One step at a time per slot:** a worker takes one message per process (`worker_prefetch_multiplier` 1), so a
  step is never held by a host that is busy.
- **The same step container as a run container:** the settings and secrets the run launcher forwards by name
  (`deploy.forwarded_names`), the host's CA certificates, the local folder at its own path, the host's engine socket,
  and the host's network (the deployment's services are on its loopback, `relay`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

BROKER_SETTING = "SWE_FORGE_BROKER_URL"
IMAGE_SETTING = "SWE_FORGE_IMAGE"
REDELIVERY_SETTING = "SWE_FORGE_STEP_REDELIVERY_SECONDS"
DEFAULT_REDELIVERY_SECONDS = 600
QUEUE = "dagster"
"""The one queue the steps go to today (dagster-celery's default); each host's worker takes `-c` at a time."""
STEP_LABEL = "swe-forge.role"
DOCKER_SOCKET = "/var/run/docker.sock"


def redelivery_seconds(environ: Mapping[str, str] = os.environ) -> int:
    """How long the broker waits before it gives an unacknowledged step (its host died) to another worker."""
    text = environ.get(REDELIVERY_SETTING, "") or str(DEFAULT_REDELIVERY_SECONDS)
    try:
        seconds = int(text)
    except ValueError:
        raise ValueError(f"{REDELIVERY_SETTING}={text!r} is not a number of seconds") from None
    if seconds < 5:
        raise ValueError(f"{REDELIVERY_SETTING}={seconds}: at least 5 seconds")
    return seconds


def celery_settings(environ: Mapping[str, str] = os.environ) -> dict[str, Any]:
    """Celery's settings, the same on the run worker (executor) and on every host's worker."""
    return {
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_default_queue": QUEUE,
        "task_default_priority": 5,
        "broker_connection_retry_on_startup": True,
        "broker_transport_options": {"visibility_timeout": redelivery_seconds(environ)},
        "result_backend_transport_options": {"visibility_timeout": redelivery_seconds(environ)},
        "result_expires": 7 * 24 * 3600,
    }


def broker_url(environ: Mapping[str, str] = os.environ) -> str:
    """The broker's URL (Redis: `redis://127.0.0.1:6379/0`); results go to the same server."""
    url = environ.get(BROKER_SETTING, "")
    if not url.startswith(("redis://", "rediss://")):
        raise ValueError(f"{BROKER_SETTING}={url!r}: a Redis URL (redis://host:port/db), as deploy/hosts starts")
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
    image: str, forwarded: list[str], local_root: str, environ: Mapping[str, str] = os.environ
) -> dict[str, Any]:
    """`celery_docker_executor`'s configuration: the broker, the shared settings, step retries, the step image and
    container (`forwarded`: the variable names each host's worker passes on to its step containers)."""
    url = broker_url(environ)
    return {
        "broker": url,
        "backend": url,
        "config_source": celery_settings(environ),
        "retries": {"enabled": {}},
        "docker": {
            "image": image,
            "env_vars": forwarded,
            "container_kwargs": {
                **step_container_kwargs(local_root),
                # the step loads the same definitions, which choose this executor by these two
                "environment": {BROKER_SETTING: url, IMAGE_SETTING: image},
            },
        },
    }


def uses_hosts(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether runs put their steps on worker hosts (a broker is set)."""
    return bool(environ.get(BROKER_SETTING))
