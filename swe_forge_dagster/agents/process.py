"""The agent's process, watched: each task's end said as it comes, stopped at the wall time, never left behind.

The agent runs in a session of its own (so its containers' `docker` children and its workers stop with it), which
means a Ctrl-C in the user's terminal does not reach it: whatever ends the watch (the wall time, Ctrl-C, an error)
stops the whole process group before returning.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from swe_forge_dagster.agents import mini_swe_agent as mini

STOP_S = 30.0


@dataclass(frozen=True)
class Watched:
    """How the agent's process ended: its exit code (None when stopped), and whether the wall time stopped it."""

    returncode: int | None
    stopped_at_wall_time: bool


def watch(
    command: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    log: Path,
    ids: list[str],
    trajectories: Path,
    wall_seconds: float,
    say: Callable[[str], None],
) -> Watched:
    """Run the agent, saying each task's end as its trajectory appears; stop it at the wall time."""
    deadline, seen = time.monotonic() + wall_seconds, set[str]()
    with log.open("w", encoding="utf-8") as handle:
        process = subprocess.Popen(
            command, stdout=handle, stderr=subprocess.STDOUT, env=env, cwd=cwd, start_new_session=True
        )
        try:
            say(f"mini-swe-agent: {len(ids)} tasks, log {log}")
            while True:
                returncode = process.poll()
                for instance_id, status in mini.exit_statuses(trajectories).items():
                    if instance_id in ids and instance_id not in seen:
                        seen.add(instance_id)
                        say(f"[{len(seen)}/{len(ids)}] {instance_id}: {status}")
                if returncode is not None:
                    return Watched(returncode, False)
                if time.monotonic() > deadline:
                    say(f"wall time of {wall_seconds:g} s reached: stopping the agent")
                    return Watched(None, True)
                time.sleep(1.0)
        finally:
            stop_group(process)


def stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process's group, SIGKILL after `STOP_S`; nothing when it has ended."""
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=STOP_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    except ProcessLookupError:
        process.wait()
