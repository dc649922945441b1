"""Harness container labels, and removal of the containers a killed run left behind.

Every harness container carries the sandbox's ownership labels (session; the owner's boot id, pid
namespace, pid and start time; host, for people) plus the run, the task and its role, so
`docker ps --filter label=swe-forge.harness.run=<id>` shows one run's containers. A harness killed
with SIGKILL cannot remove its containers, so every harness start removes the labelled containers
whose owner process is certainly gone (`execution.ownership`: owners it cannot see, on another
machine or in a sibling container, are never judged), except the ones a `--keep-containers` run
kept on purpose: those stay until removed by hand (`docker rm -f $(docker ps -aq --filter label=swe-forge.keep=1)`).
"""

from __future__ import annotations

import logging

import docker

from swe_forge_dagster.execution.ownership import cleanup_stale
from swe_forge_dagster.execution.sandbox import Sandbox

log = logging.getLogger(__name__)

RUN_LABEL = "swe-forge.harness.run"
TASK_LABEL = "swe-forge.harness.task"
ROLE_LABEL = "swe-forge.harness.role"


def harness_labels(run_id: str, task: str, role: str) -> dict[str, str]:
    return {RUN_LABEL: run_id, TASK_LABEL: task[:200], ROLE_LABEL: role}


def keep(box: Sandbox) -> None:
    """Leave the container running after this process ends (`--keep-containers`).

    The sandbox removes its container when closed, garbage collected or at interpreter exit
    (a `weakref.finalize`); detaching that finalizer is the only way to opt out of all three.
    """
    box._finalizer.detach()


def remove_stale(client: docker.DockerClient) -> list[str]:
    """Remove swe-forge containers whose owner is gone, except kept ones; returns their ids."""
    return cleanup_stale(client)
