"""`swe-forge gym serve` on a task repository, for the length of an agent's run (`agents.run`, `--via gym`).

The server is the user's own command in a child process (its own token, any free loopback port, its ready file), so
the episodes are the ones `swe-forge gym serve` records (answered ones in `eval_results` under `gym:<agent>`), and
stopping it (SIGTERM) ends every episode still open and removes its containers, as the gym does for any user.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from swe_forge_dagster.settings import get_settings

TOKEN_ENV = "SWE_FORGE_GYM_TOKEN"
READY_S = 600.0


class GymStartError(RuntimeError):
    """The gym did not start serving (its exit code and log tail in the message)."""


@contextmanager
def served_gym(task_repo: Path, folder: Path, bash_seconds: int, git_url: str | None) -> Iterator[tuple[str, str]]:
    """Serve the task repository's tasks; yields (url, token) once it answers, stops it on exit. The server runs in
    this process's home (named to it, so a relative or `.env`-given home is the same one) and working folder."""
    folder.mkdir(parents=True, exist_ok=True)
    ready, log = folder / "gym-ready.json", folder / "gym.log"
    ready.unlink(missing_ok=True)
    token = secrets.token_hex(24)
    command = [sys.executable, "-m", "swe_forge_dagster.cli", "gym", "serve", "-i", str(task_repo), "--port", "0"]
    command += ["--ready-file", str(ready), "--bash-timeout", str(bash_seconds)]
    command += ["--git-url", git_url] if git_url else []
    env = {**os.environ, TOKEN_ENV: token, "SWE_FORGE_HOME": str(get_settings().home_abs)}
    with log.open("w", encoding="utf-8") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, env=env)
    try:
        deadline = time.monotonic() + READY_S
        while (url := _ready_url(ready)) is None:
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(encoding="utf-8", errors="replace")[-1500:]
                raise GymStartError(f"swe-forge gym serve did not start (exit {process.poll()}): {tail}")
            time.sleep(0.5)
        yield url, token
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # serve's own stop: open episodes end, containers go
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _ready_url(ready: Path) -> str | None:
    """The served URL once the ready file is whole (it is written in one call, but not atomically)."""
    try:
        return str(json.loads(ready.read_text(encoding="utf-8"))["url"])
    except (OSError, ValueError, KeyError):
        return None
