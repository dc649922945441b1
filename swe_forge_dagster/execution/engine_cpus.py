"""A container's CPU limit, no more than the engine's machine has.

A sandbox asks for `SandboxSpec.cpu` cores (2 by default). On a machine with fewer, the engine refuses the container
("range of CPUs is from 0.01 to 1.00, as there are only 1 CPUs available"), so on a small machine, or a worker host
of one CPU (`deploy/hosts`: each host is pinned to its own cores), no task could be built. The limit is the
smaller of the two: the engine's CPU count (`docker info`'s NCPU, the cores its processes may run on), asked once
per engine.
"""

from __future__ import annotations

import threading

import docker

_CPUS: dict[str, int] = {}
_LOCK = threading.Lock()


def engine_cpus(client: docker.DockerClient) -> int:
    """The cores the engine's containers may use (asked once per engine address)."""
    key = client.api.base_url
    with _LOCK:
        if key not in _CPUS:
            _CPUS[key] = max(1, int(client.info().get("NCPU") or 1))
        return _CPUS[key]


def nano_cpus(client: docker.DockerClient, wanted: float) -> int:
    """`wanted` cores as the engine's `nano_cpus`, capped at what it has."""
    return int(min(wanted, engine_cpus(client)) * 1e9)
