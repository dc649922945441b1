"""What a gym (and each of its environments) runs with; one frozen object, checked when it is made.

Defaults follow SWE-Gym's card: 1 CPU and 2 GB of RAM per sandbox, no network, `bash` killed after 600 s.
The harness settings are the ones `swe-forge harness` takes (image, clone URL, repository cache, CA
bundle, registry, test timeout, pytest plugin autoloading), turned into the `HarnessConfig` every
environment is set up and graded with (`harness_config`), so an episode's diff gets the verdict the harness
would give it. An episode's wall-clock limit and the idle limit are the gym's own: the server ends an
episode that runs longer, or that no call has touched for that long (`Gym.reap`).
"""

from __future__ import annotations

import uuid
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from swe_forge_dagster.common.agent_kind import AgentKind
from swe_forge_dagster.common.sandbox_spec import GYM_CPU, GYM_MEMORY, SandboxSpec
from swe_forge_dagster.gym.tools import DEFAULT_BASH_TIMEOUT_S
from swe_forge_dagster.harness.models import HarnessConfig
from swe_forge_dagster.settings import DEFAULT_GIT_URL, DEFAULT_TEST_TIMEOUT_S

DEFAULT_EPISODE_TIMEOUT_S = 3600.0
DEFAULT_IDLE_TIMEOUT_S = 600.0
DEFAULT_MAX_ENVS = 8
GYM_SANDBOX = SandboxSpec(cpu=GYM_CPU, mem_limit=GYM_MEMORY)
"""SWE-Gym's card: 1 CPU and 2 GB of RAM per sandbox, no network (the spec's default)."""
GYM_AGENT_CMD = "swe-forge gym"
"""The harness's agent command for gym episodes: never run (the episode's tool calls are the agent)."""


class GymConfig(BaseModel):
    """Limits and harness settings of a gym; `state_dir` holds its transcripts (and the agent mount)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    state_dir: Path
    git_url: str = DEFAULT_GIT_URL
    repo_cache_dir: Path = Path(".swe-forge/cache/repos")
    registry: str = ""
    pull: bool = False
    sandbox: SandboxSpec = Field(
        default=GYM_SANDBOX, description="image (for tasks that do not name their own), limits, network, CA bundle"
    )
    test_timeout: float = Field(default=DEFAULT_TEST_TIMEOUT_S, gt=0)
    plugin_autoload: bool = False
    bash_timeout: float = Field(default=DEFAULT_BASH_TIMEOUT_S, gt=0)
    episode_timeout: float = Field(default=DEFAULT_EPISODE_TIMEOUT_S, gt=0)
    idle_timeout: float = Field(default=DEFAULT_IDLE_TIMEOUT_S, gt=0)
    max_envs: int = Field(default=DEFAULT_MAX_ENVS, ge=1, le=256)
    server_id: str = Field(default_factory=lambda: f"gym-{uuid.uuid4().hex[:8]}")

    @field_validator("state_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @property
    def docker_image(self) -> str:
        """The image for tasks that do not name their own."""
        return self.sandbox.image

    @property
    def transcripts_dir(self) -> Path:
        return self.state_dir / "transcripts"

    @property
    def agent_dir(self) -> Path:
        """An empty directory: the harness mounts the agent's directory at /agent; a gym agent has none there."""
        return self.state_dir / "agent"

    def harness_config(self) -> HarnessConfig:
        """The harness configuration every environment of this gym is set up and graded with."""
        return HarnessConfig(
            agent=AgentKind.COMMAND,
            agent_dir=self.agent_dir,
            agent_cmd=GYM_AGENT_CMD,
            agent_timeout=self.episode_timeout,
            test_timeout=self.test_timeout,
            sandbox=self.sandbox,
            plugin_autoload=self.plugin_autoload,
            pull=self.pull,
            git_url=self.git_url,
            repo_cache_dir=self.repo_cache_dir,
            registry=self.registry,
            parallel=min(self.max_envs, 64),
            run_id=self.server_id,
        )
