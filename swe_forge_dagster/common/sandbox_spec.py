"""What a run's sandboxes are made of and limited to: one specification, its defaults written once.

The settings (`Settings.sandbox`), the harness's configuration and resource, the gym's configuration and the
task builder's resource all hold one `SandboxSpec` (a nested object, never its fields copied one by one), and
the kernel's per-container configuration (`execution.sandbox_config.SandboxConfig`) extends it with what only
one container has (labels, environment, working directory). It sits in `common`, below both: the settings
build on `common` only, and the kernel must not import the settings' consumers.

Defaults are the safe ones for untrusted code (an agent under evaluation, a check): no network, and a bound
on what a container may write to disk. Sandboxes that build environments (installs need a package index and
may write gigabytes) ask for `for_builds()`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator

DEFAULT_DOCKER_IMAGE = "python:3.12-slim"
"""The image for tasks that do not name their own (`SWE_FORGE_DOCKER_IMAGE`)."""
DEFAULT_CPU = 2.0
DEFAULT_MEMORY = "4g"
GYM_CPU = 1.0
GYM_MEMORY = "2g"
"""SWE-Gym's card: 1 CPU and 2 GB of RAM per sandbox (`gym.config.GYM_SANDBOX`, `swe-forge gym serve`'s defaults)."""
DEFAULT_PIDS = 512
DEFAULT_SANDBOX_DISK = "4g"
"""What each sandbox may write to disk (`SWE_FORGE_SANDBOX_DISK`, `execution.disk_guard`)."""

Network = Literal["bridge", "none", "host"]


class SandboxSpec(BaseModel):
    """The image, limits, network and CA bundle of a run's sandboxes; checked when it is made, not at start."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    image: str = Field(default=DEFAULT_DOCKER_IMAGE, description="the image (a task may name its own)")
    cpu: float = Field(default=DEFAULT_CPU, gt=0, description="cores, as nano_cpus")
    mem_limit: str = Field(default=DEFAULT_MEMORY, description="memory, and memory+swap: no swap beyond it")
    pids_limit: int = Field(default=DEFAULT_PIDS, ge=16, description="processes at once")
    disk_limit: str | None = Field(
        default=DEFAULT_SANDBOX_DISK, description="what a container may write to disk (`disk_guard`); None: no bound"
    )
    network: Network = Field(default="none", description="none | bridge | host")
    ca_bundle: Path | None = Field(default=None, description="host CA file mounted into the containers")

    @field_validator("mem_limit", "disk_limit")
    @classmethod
    def _parsable_size(cls, value: str | None) -> str | None:
        # Docker's own parser, imported here: the settings hold a spec, and every command reads them without
        # needing the Docker client's import time.
        from docker.errors import DockerException
        from docker.utils import parse_bytes

        try:
            if value is not None:
                parse_bytes(value)  # fail at configuration time, not at container start
        except DockerException as exc:
            raise ValueError(str(exc)) from exc
        return value

    def but(self, **changes: Any) -> Self:
        """A copy with `changes`, validated (unlike `model_copy`): for values a user typed."""
        return type(self).model_validate({**dict(self), **changes})

    def for_builds(self) -> Self:
        """The spec of sandboxes that build environments (installs, the task builder's agents and proofs): a
        network, since installs need a package index, and no disk bound, since they may write gigabytes; they run
        no agent under evaluation."""
        return self.but(network="bridge", disk_limit=None)

    def disk_phrase(self) -> str:
        """How a message names the disk bound a command ran into."""
        return f"the sandbox's disk limit ({self.disk_limit})"
