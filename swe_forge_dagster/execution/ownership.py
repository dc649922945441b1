"""Who owns a sandbox container, and removing the ones whose owner is gone.

A crashed run (`kill -9`) cannot clean up after itself, so every start calls `cleanup_stale`,
which removes the `swe-forge=1` containers whose owner process is dead. The hard part is saying
"dead" only when it is certain: removing a live run's sandbox breaks that run.

Why not hostname + pid (what this module used before): a pid means something only inside one pid
namespace of one running kernel. A process in a host-network container has the host's hostname
but its own pid namespace, so the host's owner pids are absent from its /proc and every live
sandbox looked stale to it; two machines on one engine can share a hostname too.

So an owner is recorded as the kernel and the pid namespace its pid belongs to, plus the pid and
its start time (labels, see `owner_labels`):
- boot id (`/proc/sys/kernel/random/boot_id`): one running kernel; another machine or a reboot
  has another. The same inside containers (it is not namespaced).
- pid namespace (the inode of `/proc/self/ns/pid`): which process table the pid is in.
- start time (field 22 of `/proc/<pid>/stat`, clock ticks since boot): tells a reused pid apart.

`owner_state` judges an owner only when this process can see it:
- same boot and same pid namespace: the pid is looked up directly (exists, and same start time);
- same boot, other namespace, and this process is in the initial pid namespace (it sees every
  process of the machine, /proc not mounted with hidepid): the owner is alive if some process's
  innermost pid (`NSpid` in /proc/<pid>/status) is the owner's pid with its start time (as the owner
  saw it through its time namespace; never the namespace's inode, which the kernel reuses). So a host
  process still cleans up after a killed containerized run;
- otherwise (another machine, a sibling container, labels of an older version) it cannot know,
  and keeps the container; only `max_age_s`, when given, removes it then.
A lease with a heartbeat would also cover other machines, but needs a store every owner can write
and a clock window during which a dead owner's sandboxes linger; the kernel's own identities need
neither and are exact where they apply. Containers labelled `swe-forge.keep=1` are never removed.
"""

from __future__ import annotations

import functools
import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import docker
from docker.errors import APIError, NotFound

log = logging.getLogger(__name__)

LABEL = "swe-forge"
SESSION_LABEL = "swe-forge.session"
OWNER_PID_LABEL = "swe-forge.owner-pid"
OWNER_HOST_LABEL = "swe-forge.owner-host"  # for people (`docker ps`): never used to judge
OWNER_START_LABEL = "swe-forge.owner-start"
OWNER_BOOT_LABEL = "swe-forge.owner-boot"
OWNER_PIDNS_LABEL = "swe-forge.owner-pidns"
RESERVED_LABELS = (
    LABEL,
    SESSION_LABEL,
    OWNER_PID_LABEL,
    OWNER_HOST_LABEL,
    OWNER_START_LABEL,
    OWNER_BOOT_LABEL,
    OWNER_PIDNS_LABEL,
)
KEEP_LABEL = "swe-forge.keep"
"""Containers kept on purpose (the harness's `--keep-containers`): never removed as stale."""

INIT_PIDNS = f"pid:[{0xEFFFFFFC}]"  # the kernel's PROC_PID_INIT_INO: the initial pid namespace
PROC = Path("/proc")


@dataclass(frozen=True)
class Owner:
    """A process as the kernel knows it: boot id, pid namespace, pid in it, start time."""

    boot: str
    pidns: str
    pid: int
    start: str | None


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _pidns(pid: int | str = "self") -> str | None:
    return _read_link(PROC / str(pid) / "ns" / "pid")


def _process_start(pid: int) -> str | None:
    """The process start time in clock ticks since boot (Linux), which tells a reused pid apart."""
    stat = _read(PROC / str(pid) / "stat")
    if stat is None:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # the command name may contain spaces
    return fields[19] if len(fields) > 19 else None


def current_owner() -> Owner:
    """This process. Without /proc (not Linux) the hostname stands in for the boot and namespace."""
    pid = os.getpid()
    boot = _read(PROC / "sys" / "kernel" / "random" / "boot_id") or f"host:{socket.gethostname()}"
    return Owner(boot, _pidns() or "", pid, _process_start(pid))


def owner_labels(session: str) -> dict[str, str]:
    """Who owns a container: enough for `cleanup_stale` to tell a crashed owner from a live one."""
    me = current_owner()
    labels = {
        LABEL: "1",
        SESSION_LABEL: session,
        OWNER_PID_LABEL: str(me.pid),
        OWNER_HOST_LABEL: socket.gethostname(),
        OWNER_BOOT_LABEL: me.boot,
        OWNER_PIDNS_LABEL: me.pidns,
    }
    if me.start is not None:
        labels[OWNER_START_LABEL] = me.start
    return labels


def owner_from_labels(labels: dict[str, str]) -> Owner | None:
    """The recorded owner, or None when the labels do not say enough to judge it (older versions)."""
    pid, boot = labels.get(OWNER_PID_LABEL, ""), labels.get(OWNER_BOOT_LABEL, "")
    if not pid.isdigit() or int(pid) <= 0 or not boot:
        return None
    return Owner(boot, labels.get(OWNER_PIDNS_LABEL, ""), int(pid), labels.get(OWNER_START_LABEL) or None)


def process_alive(pid: int, start: str | None = None) -> bool:
    """Whether `pid` is a process in this pid namespace and, when `start` is known, still the same one."""
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


def _sees_every_process(me: Owner) -> bool:
    """Whether this process's /proc lists every process of the machine (initial namespace, no hidepid)."""
    if me.pidns != INIT_PIDNS:
        return False
    for line in (_read(PROC / "self" / "mountinfo") or "").splitlines():
        fields = line.split(" - ", 1)
        if len(fields) == 2 and fields[0].split()[4:5] == ["/proc"]:
            options = fields[1].split()[-1].split(",")
            return not any(o.startswith("hidepid=") and o not in ("hidepid=0", "hidepid=off") for o in options)
    return False


def innermost_pids() -> dict[str, list[str]]:
    """Every process in /proc by its pid in its own namespace (the last of `NSpid`) -> its pids here."""
    table: dict[str, list[str]] = {}
    for entry in os.scandir(PROC):
        if entry.name.isdigit():
            status = _read(PROC / entry.name / "status") or ""
            nspids = next((line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), [])
            if nspids:
                table.setdefault(nspids[-1], []).append(entry.name)
    return table


Processes = Callable[[], dict[str, list[str]]]


def _boottime_offset_ticks(pid: str) -> int | None:
    """The boottime offset of the process's time namespace in clock ticks: 0 in this process's own time namespace
    (or on a kernel without them), None when it cannot be known.

    A process in a time namespace reads its start time shifted by that offset, so the start it recorded for itself
    is the one seen here plus the offset. `timens_offsets` shows the namespace of the process's *children*, so it
    is read only when that is the process's own."""
    own, mine = _read_link(PROC / pid / "ns" / "time"), _read_link(PROC / "self" / "ns" / "time")
    if own is None or own == mine:
        return 0
    if own != _read_link(PROC / pid / "ns" / "time_for_children"):
        return None
    for line in (_read(PROC / pid / "timens_offsets") or "").splitlines():
        name, *values = line.split()
        if name == "boottime" and len(values) == 2:
            return (int(values[0]) * 10**9 + int(values[1])) * os.sysconf("SC_CLK_TCK") // 10**9
    return None


def _read_link(path: Path) -> str | None:
    try:
        return os.readlink(path)
    except OSError:
        return None


def _seen_in_any_namespace(owner: Owner, processes: dict[str, list[str]]) -> bool:
    """Whether a process of some pid namespace is `owner`: its innermost pid, and its start time as the owner saw it
    (through its time namespace, if any).

    The pid namespace's inode does not tell: the kernel reuses the inode numbers of dead namespaces, so a container
    started after the owner's was killed can have the owner's namespace inode and its pid 1 (a killed owner's
    sandboxes were kept while the engine was busy)."""
    if owner.start is None or not owner.start.isdecimal():  # nothing to tell a reused pid by: kept while it exists
        return bool(processes.get(str(owner.pid)))
    for pid in processes.get(str(owner.pid), []):
        seen = _process_start(int(pid))
        if seen is None:
            continue
        if seen == owner.start:
            return True
        offset = _boottime_offset_ticks(pid)  # nanoseconds of an offset may round the tick either way
        if offset is None or (offset and abs(int(seen) + offset - int(owner.start)) <= 1):
            return True  # in a time namespace whose offset cannot be read: kept, never called gone
    return False


def owner_state(owner: Owner, me: Owner | None = None, processes: Processes = innermost_pids) -> bool | None:
    """True when `owner` runs, False when it is certainly gone, None when this process cannot tell.

    `processes` lists the machine's processes when that is needed (a cleanup reads them once)."""
    me = me or current_owner()
    if owner.boot != me.boot:
        return None  # another machine, or a boot before the last (the engine's restart policy governs those)
    if owner.pidns and owner.pidns == me.pidns:  # an unreadable namespace ("") tells nothing
        return process_alive(owner.pid, owner.start)
    if _sees_every_process(me):
        return _seen_in_any_namespace(owner, processes())
    return None


def stale_reason(
    labels: dict[str, str],
    created: float,
    *,
    now: float,
    max_age_s: float,
    me: Owner,
    processes: Processes = innermost_pids,
) -> str | None:
    """Why a labelled container should go, or None to keep it (see the module docstring)."""
    if max_age_s > 0 and now - created > max_age_s:
        return f"older than {max_age_s:g}s"
    owner = owner_from_labels(labels)
    if owner is not None and owner_state(owner, me, processes) is False:
        return f"owner process {owner.pid} is gone"
    return None


def removed_elsewhere(exc: Exception) -> bool:
    """Whether a failed removal means another remover has it: gone already (404), or its removal under way (409).
    Two lanes, or a finalizer and a start-up cleanup, race for the same stale container; the loser has lost
    nothing."""
    if isinstance(exc, NotFound):
        return True
    return isinstance(exc, APIError) and exc.status_code == 409 and "in progress" in str(exc)


def remove_container(api: docker.APIClient, container_id: str) -> None:
    try:
        api.remove_container(container_id, force=True, v=True)
    except Exception as exc:  # at interpreter exit the engine may be unreachable: cleanup_stale retries
        if not removed_elsewhere(exc):
            log.warning("removing sandbox container %s failed: %s", container_id[:12], exc)


def cleanup_stale(client: docker.DockerClient, max_age_s: float = 0) -> list[str]:
    """Remove `swe-forge=1` containers whose owner process is certainly gone, or (max_age_s > 0) that are
    older than that; call at start so a crashed run leaves nothing behind. Containers labelled
    `swe-forge.keep=1` stay until removed by hand. Returns the removed ids."""
    now, me = time.time(), current_owner()
    removed: list[str] = []
    containers = client.api.containers(all=True, filters={"label": f"{LABEL}=1"})
    processes = functools.cache(innermost_pids)  # read after the listing: every listed owner started before it
    for info in containers:
        labels = info.get("Labels") or {}
        if labels.get(KEEP_LABEL) == "1":
            continue
        created = float(info.get("Created") or now)
        reason = stale_reason(labels, created, now=now, max_age_s=max_age_s, me=me, processes=processes)
        if reason is None:
            continue
        try:
            client.api.remove_container(info["Id"], force=True, v=True)
        except APIError as exc:
            if removed_elsewhere(exc):  # another cleanup got there first
                continue
            raise
        log.info("removed stale sandbox %s (%s)", info["Id"][:12], reason)
        removed.append(info["Id"])
    return removed
