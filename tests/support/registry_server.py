"""Debian's `docker-registry` (the Distribution registry, package docker-registry) on 127.0.0.1.

    with RegistryServer(tmp_path / "registry") as registry:
        registry.address          # "127.0.0.1:<port>", what SWE_FORGE_REGISTRY takes
        registry.tags("swe-forge-env/acme-tinycalc")

Its own config file (no auth, storage in a temporary folder, deletes allowed) on an ephemeral
port: the package's /etc/docker/registry/config.yml wants htpasswd auth and port 5000 on every
address. The Docker engine pushes to and pulls from 127.0.0.0/8 over plain HTTP without any
`insecure-registries` setting. `registry_binary()` skips a test when the binary is absent
(`apt-get install docker-registry`), or fails it under SWE_FORGE_REQUIRE_DOCKER=1.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

import httpx
import pytest

HOST = "127.0.0.1"
BINARY = "docker-registry"
CONFIG = """version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: {root}
  delete:
    enabled: true
http:
  addr: {host}:{port}
"""


def registry_binary() -> str:
    """The path of `docker-registry`, or skip (fail under SWE_FORGE_REQUIRE_DOCKER=1) with the reason."""
    path = shutil.which(BINARY) or (f"/usr/bin/{BINARY}" if Path(f"/usr/bin/{BINARY}").is_file() else None)
    if path is None:
        message = f"{BINARY} not installed (apt-get install docker-registry): the image registry tests need it"
        if os.environ.get("SWE_FORGE_REQUIRE_DOCKER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class RegistryServer:
    """A registry process serving `root` until `stop` (or the end of the `with` block)."""

    def __init__(self, root: Path, port: int | None = None) -> None:
        self.root = root
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def url(self) -> str:
        return f"http://{self.address}"

    def start(self, timeout: float = 30) -> RegistryServer:
        binary = registry_binary()
        self.root.mkdir(parents=True, exist_ok=True)
        config = self.root / "config.yml"
        config.write_text(CONFIG.format(root=self.root / "data", host=HOST, port=self.port))
        log = (self.root / "registry.log").open("ab")
        self.process = subprocess.Popen([binary, "serve", str(config)], stdout=log, stderr=log, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{BINARY} exited {self.process.returncode}: {self.log_tail()}")
            try:
                if httpx.get(f"{self.url}/v2/", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"{BINARY} did not answer on {self.address} within {timeout}s: {self.log_tail()}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def tags(self, repository: str) -> list[str]:
        """The tags the registry holds for `repository` (empty when it has none)."""
        response = httpx.get(f"{self.url}/v2/{repository}/tags/list", timeout=10)
        if response.status_code == 404:
            return []
        response.raise_for_status()
        return sorted(response.json().get("tags") or [])

    def log_tail(self, lines: int = 20) -> str:
        path = self.root / "registry.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.is_file() else ""

    def __enter__(self) -> RegistryServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
