"""A container's CPU limit, no more than the engine's machine has, nor more than the engine's own cgroup allows.

A sandbox asks for `SandboxSpec.cpu` cores (2 by default). On a machine with fewer, the engine refuses the container
("range of CPUs is from 0.01 to 1.00, as there are only 1 CPUs available"), so on a small machine, or a worker host
of one CPU (`deploy/hosts`: each host is pinned to its own cores), no task could be built. The first cap is the
engine's CPU count (`docker info`'s NCPU, the cores its processes may run on), asked once per engine.

An engine that itself runs under a CPU quota (a worker host given half a core, `SWE_FORGE_HOST_CPUS=0.5`; a Docker
daemon in a pod with a CPU limit) has every core in NCPU, but under cgroup v1 the kernel refuses a child's quota over
its parent's: the container's start fails with "cpu.cfs_quota_us: invalid argument", and every task of the host
errored so (`benchmarks/hosts.py --cpus 0.5`, 2026-11-30). No API tells a client its engine's quota, so the refusal
does: `start_within_engine` halves the engine's cap and starts the container again, and the cap is kept for that
engine's later containers.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import docker
from docker.models.containers import Container

LOG = logging.getLogger(__name__)
_CPUS: dict[str, float] = {}
_LOCK = threading.Lock()
FLOOR = 0.01
"""The least the engine takes (its own error says "from 0.01")."""


def engine_cpus(client: docker.DockerClient) -> float:
    """The cores the engine's containers may use (asked once per engine address, lowered by refusals)."""
    key = client.api.base_url
    with _LOCK:
        if key not in _CPUS:
            _CPUS[key] = float(max(1, int(client.info().get("NCPU") or 1)))
        return _CPUS[key]


def nano_cpus(client: docker.DockerClient, wanted: float) -> int:
    """`wanted` cores as the engine's `nano_cpus`, capped at what it allows."""
    return int(min(wanted, engine_cpus(client)) * 1e9)


def quota_refused(error: docker.errors.APIError) -> bool:
    """The kernel refused the container's CPU quota: its engine's own cgroup allows less (cgroup v1)."""
    text = str(getattr(error, "explanation", "") or error)
    return "cfs_quota_us" in text and "invalid argument" in text


def start_within_engine(client: docker.DockerClient, create: Callable[[int], Container], wanted: float) -> Container:
    """A container made by `create(nano_cpus)` and started; a quota the kernel refuses halves the engine's cap and the
    container is made again. A container that fails to start is removed before the error is raised."""
    while True:
        nano = nano_cpus(client, wanted)
        container = create(nano)
        try:
            container.start()
            return container
        except docker.errors.APIError as error:
            container.remove(force=True)
            if not quota_refused(error) or nano <= FLOOR * 1e9:
                raise
            with _LOCK:
                _CPUS[client.api.base_url] = max(FLOOR, round(nano / 2e9, 2))
            LOG.warning(
                "the engine refused %.2f CPUs (its own cgroup allows less): its containers get %.2f from now on",
                nano / 1e9,
                _CPUS[client.api.base_url],
            )
