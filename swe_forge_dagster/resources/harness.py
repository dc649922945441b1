"""The agent under evaluation as a resource: what `eval_result` runs on each exported task.

Unconfigured (`agent=""`) by default: evaluating costs Docker time and, for a real agent, model
calls, so it happens only when a user names an agent (`SWE_FORGE_AGENT=oracle`, or
`SWE_FORGE_AGENT_DIR=./my-agent` with `SWE_FORGE_AGENT_CMD`).
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from pydantic import Field, field_validator

from swe_forge_dagster.common.agent_kind import AgentKind, configured_kind
from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.harness.models import HarnessConfig
from swe_forge_dagster.resources.sandbox import SandboxResourceConfig
from swe_forge_dagster.settings import (
    DEFAULT_AGENT_CMD,
    DEFAULT_AGENT_TIMEOUT_S,
    DEFAULT_GIT_URL,
    DEFAULT_TEST_TIMEOUT_S,
)


class HarnessResource(dg.ConfigurableResource):
    home: str
    agent: str = Field(default="", description='"" (none), "oracle", or "command" (with agent_dir)')
    agent_dir: str | None = Field(default=None, description="mounted read-only at /agent")
    agent_cmd: str = DEFAULT_AGENT_CMD
    agent_timeout_seconds: float = Field(default=DEFAULT_AGENT_TIMEOUT_S, gt=0)
    test_timeout_seconds: float = Field(default=DEFAULT_TEST_TIMEOUT_S, gt=0)
    agent_env: list[str] = Field(default_factory=list, description="host variables forwarded by NAME")
    git_url: str = DEFAULT_GIT_URL
    registry: str = Field(default="", description="SWE_FORGE_REGISTRY: environment images pulled/pushed here")
    sandbox: SandboxResourceConfig = Field(
        default=SandboxResourceConfig(),
        description="the containers' image (for tasks without their own), limits, CA bundle, and the agent "
        "container's network (none | bridge | host)",
    )

    @field_validator("agent")
    @classmethod
    def _known_kind(cls, value: str) -> str:
        """A misspelt kind fails when the resource is configured (the launchpad, the settings), not later inside
        the harness sensor or `eval_result`."""
        if value:
            AgentKind.parse(value, where="harness resource agent", allowed=(AgentKind.ORACLE, AgentKind.COMMAND))
        return value

    @property
    def kind(self) -> AgentKind | None:
        """The configured agent's kind (`agent` parsed, ValueError for an unknown one), None when there is none."""
        return configured_kind(self.agent, bool(self.agent_dir))

    @property
    def configured(self) -> bool:
        return self.kind is not None

    def config(self, run_id: str) -> HarnessConfig:
        kind = self.kind
        if kind is None:
            raise ValueError("no agent configured: set SWE_FORGE_AGENT=oracle or SWE_FORGE_AGENT_DIR (+ _CMD)")
        return HarnessConfig(
            agent=kind,
            agent_dir=Path(self.agent_dir) if self.agent_dir and kind is AgentKind.COMMAND else None,
            agent_cmd=self.agent_cmd,
            agent_timeout=self.agent_timeout_seconds,
            test_timeout=self.test_timeout_seconds,
            sandbox=self.sandbox.spec,
            agent_env=tuple(self.agent_env),
            git_url=self.git_url,
            repo_cache_dir=HomeLayout.of(self.home).repos,
            run_id=run_id[:12],
            registry=self.registry,
        )

    @property
    def label(self) -> str:
        """The agent's name in `eval_results` (independent of the run)."""
        return self.config("label").agent_label
