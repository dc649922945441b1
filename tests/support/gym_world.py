"""What the gym tests share: a gym over the harness world, a patch turned into tool calls, a served gym.

`served` starts the real `swe-forge gym serve` in its own process (its own SWE_FORGE_HOME and token), so the
tests can kill it with SIGKILL and start it again as a user would.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import unidiff

from swe_forge_dagster.gym.client import GymClient
from swe_forge_dagster.gym.config import GYM_SANDBOX, GymConfig
from swe_forge_dagster.harness.cleanup import RUN_LABEL
from tests.support.common import BASE_IMAGE
from tests.support.harness_world import HarnessWorld

TOKEN = "gym-test-token-0123456789"


def world_gym_config(hw: HarnessWorld, state: Path, **overrides: Any) -> GymConfig:
    """A gym over the harness world's tasks (its git remotes, the local base image)."""
    values: dict[str, Any] = {
        "state_dir": state,
        "repo_cache_dir": hw.root / "harness-repos",
        "test_timeout": 90,
        "git_url": hw.world.url_template,
        "sandbox": GYM_SANDBOX.but(image=BASE_IMAGE),
    }
    values.update(overrides)
    return GymConfig(**values)


def patch_edits(patch: str) -> list[tuple[str, dict[str, str]]]:
    """A patch's changes as the tool calls an agent would make: `create` for a new file, one `str_replace` per
    hunk otherwise (its context and old lines -> its context and new lines)."""
    calls: list[tuple[str, dict[str, str]]] = []
    for changed in unidiff.PatchSet(patch):
        path = f"/testbed/{changed.path}"
        if changed.is_added_file:
            calls.append(("create", {"path": path, "content": "".join(line.value for h in changed for line in h)}))
            continue
        assert not changed.is_removed_file and not changed.is_binary_file, changed.path
        for hunk in changed:
            old = "".join(line.value for line in hunk if not line.is_added)
            new = "".join(line.value for line in hunk if not line.is_removed)
            calls.append(("str_replace", {"path": path, "old_str": old, "new_str": new}))
    return calls


def containers_of(client: docker.DockerClient, server_id: str) -> list[str]:
    """Names of the containers (running or not) of one gym server (its harness run label); listed without
    inspecting each, as some are being removed meanwhile."""
    found = client.api.containers(all=True, filters={"label": f"{RUN_LABEL}={server_id}"})
    return [name.lstrip("/") for info in found for name in info["Names"][:1]]


def wait_until(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g}s: {what}")
        time.sleep(0.2)


@dataclass
class Served:
    process: subprocess.Popen[str]
    url: str
    server_id: str
    log: Path

    def client(self, token: str = TOKEN) -> GymClient:
        return GymClient(self.url, token, timeout=600)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)


@contextmanager
def served(home: Path, hw: HarnessWorld, *args: str, name: str = "server") -> Iterator[Served]:
    """`swe-forge gym serve` over the world's task directories on a free loopback port; SIGTERM at the end."""
    home.mkdir(parents=True, exist_ok=True)
    ready, log = home / f"{name}.ready.json", home / f"{name}.log"
    ready.unlink(missing_ok=True)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_")},
        "SWE_FORGE_HOME": str(home),
        "SWE_FORGE_START_DATE": "2015-01-01",
        "SWE_FORGE_GYM_TOKEN": TOKEN,
        "SWE_FORGE_GIT_URL": hw.world.url_template,
    }
    argv = [
        sys.executable,
        "-m",
        "swe_forge_dagster.cli",
        "gym",
        "serve",
        "--input",
        str(hw.tasks),
        "--port",
        "0",
        "--docker-image",
        BASE_IMAGE,
        "--ready-file",
        str(ready),
        *args,
    ]
    with log.open("w") as output:
        process = subprocess.Popen(argv, env=env, stdout=output, stderr=subprocess.STDOUT, text=True)
    try:
        wait_until(lambda: ready.is_file() or process.poll() is not None, 120, "the gym server to start")
        assert process.poll() is None, log.read_text()[-3000:]
        info = json.loads(ready.read_text())
        yield Served(process, info["url"], info["server_id"], log)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(120)
            except subprocess.TimeoutExpired:
                process.kill()
