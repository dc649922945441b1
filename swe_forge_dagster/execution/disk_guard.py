"""A disk limit per sandbox: what a container may write to the host's disk (the lake's disk).

Where the Docker engine supports a real quota (overlay2 on xfs mounted with `pquota`: `--storage-opt
size=`), the container is created with it and the kernel refuses writes past the limit. Elsewhere
(overlay2 on ext4, the common case, and this project's CI machine) no per-container quota exists, so
two enforced bounds stand in for it:

- `RLIMIT_FSIZE` (`--ulimit fsize`): no process in the container can grow one file past the limit
  (the kernel stops the write with EFBIG / SIGXFSZ);
- a watchdog that, from the sandbox's first command until it is closed, reads the container's
  writable-layer size every `POLL_S` seconds (`docker inspect --size`), and kills the container (every
  process in it, background writers too) once it has grown past the limit, so many smaller files are
  stopped too. The overshoot is bounded by what can be written in one poll interval.

The running command then fails with `disk_exceeded` set, which the harness reports as the agent's
error (or the checks' error) with the limit in the reason; the container is removed as always,
which gives the space back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import docker
from docker.utils import parse_bytes

POLL_S = 1.0
_QUOTA: dict[str, bool] = {}
_QUOTA_LOCK = threading.Lock()


def limit_bytes(limit: str) -> int:
    """`limit` ("2g", "500m", a byte count) in bytes."""
    return int(parse_bytes(limit))


def engine_has_quota(client: docker.DockerClient, image: str) -> bool:
    """Whether the engine enforces `--storage-opt size=`: tried once per engine with a container that is never
    started (overlay2 on xfs also needs the `pquota` mount option, which only the attempt tells)."""
    key = client.api.base_url
    with _QUOTA_LOCK:
        if key not in _QUOTA:
            info = client.info()
            status = dict(info.get("DriverStatus") or [])
            supported = info.get("Driver") == "overlay2" and status.get("Backing Filesystem") == "xfs"
            if supported:
                try:
                    client.containers.create(image, ["true"], storage_opt={"size": "64m"}).remove(force=True)
                except docker.errors.APIError:
                    supported = False
            _QUOTA[key] = supported
        return _QUOTA[key]


def create_options(client: docker.DockerClient, limit: str | None, image: str) -> dict[str, Any]:
    """Extra `containers.create` arguments for a disk limit: a quota when the engine has one, else the file limit."""
    if limit is None:
        return {}
    if engine_has_quota(client, image):
        return {"storage_opt": {"size": limit}}
    size = limit_bytes(limit)
    return {"ulimits": [docker.types.Ulimit(name="fsize", soft=size, hard=size)]}


def written_bytes(client: docker.DockerClient, container_id: str) -> int:
    """What the container has written to its writable layer so far."""
    api = client.api  # docker-py's inspect_container has no `size`: the engine's endpoint takes it as a query flag
    found = api._result(api._get(api._url("/containers/{0}/json", container_id), params={"size": 1}), json=True)
    return int(found.get("SizeRw") or 0)


class DiskWatch:
    """Polls a container for the rest of its life; once it has written more than `limit` beyond what it held when
    the watch started (the harness's own tree and git objects are not the agent's), `exceeded` is set and
    `on_exceed` runs (the sandbox kills the container: every process in it, background ones too)."""

    def __init__(
        self, client: docker.DockerClient, container_id: str, limit: str, on_exceed: Callable[[], None]
    ) -> None:
        self.client, self.container_id, self.limit = client, container_id, limit_bytes(limit)
        self.on_exceed = on_exceed
        self.exceeded = False
        self._baseline = written_bytes(client, container_id)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"disk-watch-{container_id[:12]}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        while not self._stop.wait(POLL_S):
            try:
                if written_bytes(self.client, self.container_id) - self._baseline > self.limit:
                    self.exceeded = True
                    self.on_exceed()
                    return
            except docker.errors.DockerException:
                return  # the container is gone: nothing left to watch
