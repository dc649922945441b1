"""Who owns a sandbox container, and removing the ones whose owner is gone.

Every container carries labels naming its session, the owning process (pid and start time) and
host. A crashed run cannot clean up after itself, so the next start calls `cleanup_stale`: a
container whose owner process is dead (or whose pid now belongs to another process) is removed.
Pids are only judged on the host that wrote them, which matters on a shared engine.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from pathlib import Path

import docker
from docker.errors import NotFound

log = logging.getLogger(__name__)

LABEL = "swe-forge"
SESSION_LABEL = "swe-forge.session"
OWNER_PID_LABEL = "swe-forge.owner-pid"
OWNER_HOST_LABEL = "swe-forge.owner-host"
OWNER_START_LABEL = "swe-forge.owner-start"
RESERVED_LABELS = (LABEL, SESSION_LABEL, OWNER_PID_LABEL, OWNER_HOST_LABEL, OWNER_START_LABEL)


def remove_container(api: docker.APIClient, container_id: str) -> None:
    try:
        api.remove_container(container_id, force=True, v=True)
    except NotFound:
        pass
    except Exception as exc:  # at interpreter exit the engine may be unreachable: cleanup_stale retries
        log.warning("removing sandbox container %s failed: %s", container_id[:12], exc)


def owner_labels(session: str) -> dict[str, str]:
    """Who owns a container: enough for `cleanup_stale` to tell a crashed owner from a live one."""
    labels = {
        LABEL: "1",
        SESSION_LABEL: session,
        OWNER_PID_LABEL: str(os.getpid()),
        OWNER_HOST_LABEL: socket.gethostname(),
    }
    start = _process_start(os.getpid())
    if start is not None:
        labels[OWNER_START_LABEL] = start
    return labels


def _process_start(pid: int) -> str | None:
    """The process start time in clock ticks since boot (Linux), which tells a reused pid apart."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # the command name may contain spaces
    return fields[19] if len(fields) > 19 else None


def process_alive(pid: int, start: str | None = None) -> bool:
    """Whether `pid` runs on this host and, when `start` is known, is still the same process."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # someone else's process: alive
    if start is not None:
        actual = _process_start(pid)
        if actual is not None and actual != start:
            return False
    return True


def stale_reason(labels: dict[str, str], created: float, *, now: float, max_age_s: float, host: str) -> str | None:
    """Why a labelled container should go, or None to keep it.

    A pid is only judged on the host that recorded it: on a shared engine, another machine's
    pids say nothing here. Without owner labels only the age can condemn a container.
    """
    if max_age_s > 0 and now - created > max_age_s:
        return f"older than {max_age_s:g}s"
    pid = labels.get(OWNER_PID_LABEL, "")
    if not pid.isdigit() or labels.get(OWNER_HOST_LABEL, host) != host:
        return None
    if not process_alive(int(pid), labels.get(OWNER_START_LABEL)):
        return f"owner process {pid} is gone"
    return None


KEEP_LABEL = "swe-forge.keep"
"""Containers kept on purpose (the harness's `--keep-containers`): never removed as stale."""


def cleanup_stale(client: docker.DockerClient, max_age_s: float = 0) -> list[str]:
    """Remove `swe-forge=1` containers whose owner process is gone, or (max_age_s > 0) that are
    older than that; call at start so a crashed run leaves nothing behind. Containers labelled
    `swe-forge.keep=1` stay until removed by hand. Returns the removed ids."""
    now, host = time.time(), socket.gethostname()
    removed: list[str] = []
    for info in client.api.containers(all=True, filters={"label": f"{LABEL}=1"}):
        labels = info.get("Labels") or {}
        if labels.get(KEEP_LABEL) == "1":
            continue
        reason = stale_reason(labels, float(info.get("Created") or now), now=now, max_age_s=max_age_s, host=host)
        if reason is None:
            continue
        try:
            client.api.remove_container(info["Id"], force=True, v=True)
        except NotFound:  # another cleanup got there first
            continue
        log.info("removed stale sandbox %s (%s)", info["Id"][:12], reason)
        removed.append(info["Id"])
    return removed
