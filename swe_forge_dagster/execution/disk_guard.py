"""A disk limit per sandbox: what a container may write to the host's disk (the lake's disk).

Where the Docker engine supports a real quota (overlay2 on xfs mounted with `pquota`: `--storage-opt
size=`), the container is created with it and the kernel refuses writes past the limit. Elsewhere
(overlay2 on ext4, the common case, and this project's CI machine) no per-container quota exists, so
two enforced bounds stand in for it:

- `RLIMIT_FSIZE` (`--ulimit fsize`): no process in the container can grow one file past the limit
  (the kernel stops the write with EFBIG / SIGXFSZ);
- a watchdog that, while a command runs, reads the container's writable-layer size every
  `POLL_S` seconds (`docker inspect --size`) and kills the command's processes once it is over the
  limit, so many smaller files are stopped too. The overshoot is bounded by what can be written in
  one poll interval.

The command then fails with `disk_exceeded` set, which the harness reports as the agent's error
(or the checks' error) with the limit in the reason; the container is removed as always, which
gives the space back.
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


def engine_has_quota(client: docker.DockerClient) -> bool:
    """Whether the engine can enforce `--storage-opt size=` (overlay2 on xfs with project quotas), asked once."""
    key = client.api.base_url
    with _QUOTA_LOCK:
        if key not in _QUOTA:
            info = client.info()
            status = dict(info.get("DriverStatus") or [])
            _QUOTA[key] = info.get("Driver") == "overlay2" and status.get("Backing Filesystem") == "xfs"
        return _QUOTA[key]


def create_options(client: docker.DockerClient, limit: str | None) -> dict[str, Any]:
    """Extra `containers.create` arguments for a disk limit: a quota when the engine has one, else the file limit."""
    if limit is None:
        return {}
    if engine_has_quota(client):
        return {"storage_opt": {"size": limit}}
    size = limit_bytes(limit)
    return {"ulimits": [docker.types.Ulimit(name="fsize", soft=size, hard=size)]}


def written_bytes(client: docker.DockerClient, container_id: str) -> int:
    """What the container has written to its writable layer so far."""
    api = client.api  # docker-py's inspect_container has no `size`: the engine's endpoint takes it as a query flag
    found = api._result(api._get(api._url("/containers/{0}/json", container_id), params={"size": 1}), json=True)
    return int(found.get("SizeRw") or 0)


class DiskWatch:
    """Polls a running command's container; `exceeded` once it is over the limit (then `on_exceed` has run)."""

    def __init__(
        self, client: docker.DockerClient, container_id: str, limit: str, on_exceed: Callable[[], None]
    ) -> None:
        self.client, self.container_id, self.limit = client, container_id, limit_bytes(limit)
        self.on_exceed = on_exceed
        self.exceeded = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"disk-watch-{container_id[:12]}", daemon=True)

    def __enter__(self) -> DiskWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(POLL_S * 5)

    def _watch(self) -> None:
        while not self._stop.wait(POLL_S):
            try:
                if written_bytes(self.client, self.container_id) > self.limit:
                    self.exceeded = True
                    self.on_exceed()
                    return
            except docker.errors.DockerException:
                return  # the container is gone: nothing left to watch
