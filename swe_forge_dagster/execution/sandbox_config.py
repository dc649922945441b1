"""A sandbox's configuration (image, limits, network, CA bundle, labels) and a command's result.

Separate from `sandbox` so that configurations can be built and validated (at configuration
time, not at container start) without the container machinery.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import docker
from docker.types import Mount
from pydantic import Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from swe_forge_dagster.common.sandbox_spec import SandboxSpec

CONTAINER_CA_PATH = "/etc/ssl/certs/ca-certificates.crt"
GIT_CA_ENV_VARS = ("GIT_SSL_CAINFO",)
"""Where git looks for extra CA certificates: the one tool the kernel itself runs in every sandbox; the language
packs' tools name theirs through `SandboxConfig.ca_env_vars`."""

# PID 1 without docker-init: sleeps in the background and `wait`s, so a TERM stops the container
# at once, and the `wait` reaps the orphans that killed commands leave behind.
KEEPALIVE = "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"

DEFAULT_ENV = {
    "DEBIAN_FRONTEND": "noninteractive",  # apt never prompts (there is no stdin)
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",  # no network call and no noise per pip command
    "PIP_NO_INPUT": "1",
    "PYTHONUNBUFFERED": "1",  # keeps Python's stdout and stderr interleaved in the order written
}
"""Set before `SandboxConfig.env`, which overrides them."""

TIMEOUT_EXIT_CODE = 124  # what coreutils `timeout` reports, so callers can treat both alike
DISK_EXIT_CODE = 153  # 128 + SIGXFSZ: what a process killed for writing past a file size limit reports
KILL_GRACE_S = 5.0
MAX_SYMLINKS = 16

Mounts = dict[str | Path, tuple[str, str]]
"""host path -> (container path, "ro" | "rw")"""
ImageHook = Callable[[docker.DockerClient, str], object]
"""Makes a missing image (`Sandbox.start` calls it with the client and the image before creating the container)."""


class SandboxConfig(SandboxSpec):
    """One container: the run's `SandboxSpec` plus its labels, environment and working directory, and what the
    kernel is handed rather than knowing (it knows no language): the variables the image's tools read a CA bundle
    from, and the hook that makes a missing image. Without the hook the image must exist. Product code makes these
    in one place (`environments.sandboxes.sandbox_config`); its `model_dump_json()` (the hook left out) can key a
    cache."""

    image: str
    workdir: str = "/repo"
    labels: dict[str, str] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    ca_env_vars: tuple[str, ...] = Field(default=(), description="set to the mounted CA bundle, with git's")
    ensure_image: SkipJsonSchema[ImageHook | None] = Field(default=None, exclude=True, repr=False)

    @field_validator("workdir")
    @classmethod
    def _absolute_workdir(cls, value: str) -> str:
        if not value.startswith("/"):
            raise ValueError(f"workdir must be an absolute path, got {value!r}")
        return posixpath.normpath(value)

    def environment(self) -> dict[str, str]:
        """The container's environment: defaults, the CA variables, then the configured env."""
        names = (*self.ca_env_vars, *GIT_CA_ENV_VARS)
        ca = dict.fromkeys(names, CONTAINER_CA_PATH) if self.ca_bundle else {}
        return {**DEFAULT_ENV, **ca, **self.env}


@dataclass(frozen=True)
class CommandResult:
    """One command's outcome; `output` is stdout and stderr interleaved, possibly truncated."""

    command: str
    exit_code: int
    output: str
    truncated: bool
    duration_s: float
    timed_out: bool
    disk_exceeded: bool = False  # killed for writing past the sandbox's disk limit

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


def bind_mounts(config: SandboxConfig, mounts: Mounts | None) -> list[Mount]:
    """Bind mounts, checked first: Docker would create a missing host path as a root-owned folder."""
    binds: list[Mount] = []
    if config.ca_bundle is not None:
        if not config.ca_bundle.is_file():
            raise FileNotFoundError(f"CA bundle not found: {config.ca_bundle}")
        binds.append(Mount(CONTAINER_CA_PATH, str(config.ca_bundle.resolve()), type="bind", read_only=True))
    for host_path, (container_path, mode) in (mounts or {}).items():
        if mode not in ("ro", "rw"):
            raise ValueError(f"mount mode must be 'ro' or 'rw', got {mode!r} for {host_path}")
        source = Path(host_path)
        if not source.exists():
            raise FileNotFoundError(f"mount source not found: {source}")
        binds.append(Mount(container_path, str(source.resolve()), type="bind", read_only=mode == "ro"))
    return binds
