"""Which process runs an in-process run, written as run tags, and whether that process still exists.

An in-process run (`swe-forge ingest`, `mine`, the demo) has no run worker Dagster can ask about:
when its process is killed with `kill -9`, the run stays STARTED and keeps its pool slots for
ever. So the launcher tags each run with its process's identity, and a later command compares it
with the machine's state. Two tags, so a run's tags in the UI stay few:

- `swe_forge/host`: the hostname; only runs started on this host are ever judged here (a pid
  means nothing on another machine, and its /proc is not ours to read); a tag of its own, so the
  reaper asks the instance for this host's runs only;
- `swe_forge/process`: `pid=…;start=…;boot=…;run=…`:
  - the pid and its start time in clock ticks after boot (field 22 of /proc/<pid>/stat), so a pid
    reused by a newer process is not taken for the run's;
  - /proc/sys/kernel/random/boot_id; a different boot id means the machine restarted since, so
    every process of the old boot is gone;
  - the run id the identity was written for. Dagster copies a run's tags to its re-executions (UI
    "re-execute", run retries), which run in other processes; a run whose id differs from this is
    not the one the process ran, and is left alone.

Plain Python (no Dagster): Linux gives all four facts; elsewhere only host and pid are written
and a live pid is taken as the same process.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

HOST_TAG = "swe_forge/host"
PROCESS_TAG = "swe_forge/process"

PROC = Path("/proc")


def hostname() -> str:
    return socket.gethostname()


def boot_id() -> str | None:
    """This boot's id (Linux), or None where the kernel does not expose one."""
    try:
        return (PROC / "sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/<pid>/stat from field 3 on (state, ppid, …), or None when the process does not exist.

    The command name (field 2) is in parentheses and may itself hold spaces and parentheses, so
    the fields are split after its last ')'.
    """
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def process_start(pid: int) -> str | None:
    """The process's start time in clock ticks after boot (stable for its lifetime), or None."""
    fields = _stat_fields(pid)
    return fields[19] if fields and len(fields) > 19 else None  # field 22 of the full line


def process_identity(run_id: str, pid: int | None = None) -> dict[str, str]:
    """The run tags that name the process running `run_id` (this process by default)."""
    pid = os.getpid() if pid is None else pid
    fields = {"pid": str(pid), "start": process_start(pid) or "", "boot": boot_id() or "", "run": run_id}
    return identity_tags(hostname(), fields)


def identity_tags(host: str, fields: dict[str, str]) -> dict[str, str]:
    """The two tags of a process identity (`fields`: pid, start, boot, run; empty ones left out)."""
    return {HOST_TAG: host, PROCESS_TAG: ";".join(f"{key}={value}" for key, value in fields.items() if value)}


def identity_fields(tags: dict[str, str]) -> dict[str, str]:
    """What a run's `swe_forge/process` tag says (pid, start, boot, run), {} without one."""
    fields = {}
    for part in tags.get(PROCESS_TAG, "").split(";"):
        key, sep, value = part.partition("=")
        if sep:
            fields[key] = value
    return fields


def _pid_exists(pid: int) -> bool:
    """Whether `pid` names a live process (a zombie — killed, not yet reaped by its parent — is dead)."""
    fields = _stat_fields(pid)
    if fields is not None:
        return fields[0] != "Z"
    if PROC.is_dir() and (PROC / "self").exists():
        return False  # Linux: no /proc entry, no process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def why_gone(tags: dict[str, str], run_id: str) -> str | None:
    """Why the process named by a run's tags is gone, or None when it may still be running.

    None also for runs this host cannot judge: no identity tags, another host's, or a
    re-execution that inherited the tags of the run it re-executes.
    """
    fields = identity_fields(tags)
    if fields.get("run") != run_id or tags.get(HOST_TAG) != hostname():
        return None
    try:
        pid = int(fields["pid"])
    except (KeyError, ValueError):
        return None
    where = f"pid {pid} on host {tags[HOST_TAG]}"
    current_boot = boot_id()
    if fields.get("boot") and current_boot and fields["boot"] != current_boot:
        return f"the process running this run ({where}) is gone: the machine has restarted since"
    if not _pid_exists(pid):
        return f"the process running this run ({where}) is gone (killed or crashed without ending the run)"
    start = process_start(pid)
    if fields.get("start") and start and start != fields["start"]:
        return (
            f"the process running this run ({where}) is gone (killed or crashed without ending the run); "
            "the pid now belongs to another process"
        )
    return None
