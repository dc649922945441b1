"""The agent under evaluation as a resource: what `eval_result` runs on each exported task.

Unconfigured (`agent=""`) by default: evaluating costs Docker time and, for a real agent, model
calls, so it happens only when a user names an agent (`SWE_FORGE_AGENT=oracle`, or
`SWE_FORGE_AGENT_DIR=./my-agent` with `SWE_FORGE_AGENT_CMD`).
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from pydantic import Field

from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.harness.models import HarnessConfig
from swe_forge_dagster.settings import (
    DEFAULT_AGENT_CMD,
    DEFAULT_AGENT_TIMEOUT_S,
    DEFAULT_DOCKER_IMAGE,
    DEFAULT_GIT_URL,
    DEFAULT_SANDBOX_DISK,
    DEFAULT_TEST_TIMEOUT_S,
)


class HarnessResource(dg.ConfigurableResource):
    home: str
    agent: str = Field(default="", description='"" (none), "oracle", or "command" (with agent_dir)')
    agent_dir: str | None = Field(default=None, description="mounted read-only at /agent")
    agent_cmd: str = DEFAULT_AGENT_CMD
    agent_timeout_seconds: float = Field(default=DEFAULT_AGENT_TIMEOUT_S, gt=0)
    test_timeout_seconds: float = Field(default=DEFAULT_TEST_TIMEOUT_S, gt=0)
    docker_image: str = DEFAULT_DOCKER_IMAGE
    network: str = Field(default="none", description="the agent container's network: none | bridge | host")
    agent_env: list[str] = Field(default_factory=list, description="host variables forwarded by NAME")
    git_url: str = DEFAULT_GIT_URL
    ca_bundle: str | None = None
    registry: str = Field(default="", description="SWE_FORGE_REGISTRY: environment images pulled/pushed here")
    cpu: float = Field(default=2.0, gt=0)
    mem_limit: str = "4g"
    pids_limit: int = Field(default=512, ge=16)
    disk_limit: str = Field(default=DEFAULT_SANDBOX_DISK, description="what each container may write to disk")

    @property
    def configured(self) -> bool:
        return self.agent == "oracle" or bool(self.agent_dir)

    def config(self, run_id: str) -> HarnessConfig:
        if not self.configured:
            raise ValueError("no agent configured: set SWE_FORGE_AGENT=oracle or SWE_FORGE_AGENT_DIR (+ _CMD)")
        return HarnessConfig(
            agent="oracle" if self.agent == "oracle" else "command",
            agent_dir=Path(self.agent_dir) if self.agent_dir and self.agent != "oracle" else None,
            agent_cmd=self.agent_cmd,
            agent_timeout=self.agent_timeout_seconds,
            test_timeout=self.test_timeout_seconds,
            docker_image=self.docker_image,
            network=self.network,
            agent_env=tuple(self.agent_env),
            cpu=self.cpu,
            mem_limit=self.mem_limit,
            pids_limit=self.pids_limit,
            disk_limit=self.disk_limit,
            ca_bundle=Path(self.ca_bundle) if self.ca_bundle else None,
            git_url=self.git_url,
            repo_cache_dir=HomeLayout.of(self.home).repos,
            run_id=run_id[:12],
            registry=self.registry,
        )

    @property
    def label(self) -> str:
        """The agent's name in `eval_results` (independent of the run)."""
        return self.config("label").agent_label
