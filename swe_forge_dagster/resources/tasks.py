"""The task builder as a resource: Docker, the repository cache and the stage configuration.

The Docker client is made when a step starts (never at definition load, so `dagster dev` and
`dg check defs` work without an engine), and stale sandboxes of crashed runs are removed then.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import docker
from pydantic import Field

from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.ownership import cleanup_stale
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.export.task_repo import TaskRepoReport, write_task_repo
from swe_forge_dagster.harness.repo_tasks import directory_tasks
from swe_forge_dagster.resources.sandbox import SandboxResourceConfig
from swe_forge_dagster.tasks.prove import TaskExecutor
from swe_forge_dagster.tasks.recipes import RecipeStore
from swe_forge_dagster.tasks.shared_files import SharedTaskFiles
from swe_forge_dagster.tasks.stages import TaskBuilder


class TaskBuildResource(dg.ConfigurableResource):
    home: str = Field(description="SWE_FORGE_HOME: repo cache, recipes, per-task work folders")
    git_url: str = Field(description="clone URL template with {repo}, e.g. https://github.com/{repo}.git")
    output_dir: str = Field(description="where accepted tasks are exported as directories")
    sandbox: SandboxResourceConfig = Field(
        default=SandboxResourceConfig(),
        description="the image every sandbox and environment starts from, the limits and the CA bundle (the task "
        "builder's sandboxes install: they have a network and no disk bound, `SandboxSpec.for_builds`)",
    )
    registry: str = Field(default="", description="SWE_FORGE_REGISTRY: environment images pulled/pushed here")
    task_repo: str | None = Field(
        default=None, description="SWE_FORGE_TASK_REPO: swe_dataset also writes a SWE-bench 5 task repository here"
    )
    after_runs: int = Field(default=3, ge=3, le=50, description="suite runs with the fix (flakiness check)")
    agent_network: str = Field(default="bridge", description="network of the environment agent (installs need PyPI)")
    test_timeout_seconds: float = Field(default=900, gt=0)
    env_max_turns: int = Field(default=30, ge=1)
    test_max_turns: int = Field(default=200, ge=1)
    env_max_tokens: int | None = Field(default=2_000_000, ge=1000, description="tokens an environment episode may use")
    test_max_tokens: int | None = Field(
        default=8_000_000, ge=1000, description="tokens one test-writing episode may use"
    )

    @property
    def base_image(self) -> str:
        """The image every sandbox and environment starts from."""
        return self.sandbox.image

    @property
    def output_path(self) -> Path:
        return Path(self.output_dir)

    @property
    def dataset_dir(self) -> Path:
        return HomeLayout.of(self.home).datasets

    def write_task_repo(self) -> TaskRepoReport | None:
        """The exported tasks as a SWE-bench 5 task repository at `task_repo` (None when it is not configured)."""
        if not self.task_repo:
            return None
        tasks, unread = directory_tasks(self.output_path)
        cache = RepoCache(HomeLayout.of(self.home).repos, self.git_url)
        report = write_task_repo(tasks, Path(self.task_repo), cache, self.sandbox.spec.ca_bundle)
        report.skipped.update(unread)
        return report

    def shared_files(self) -> SharedTaskFiles:
        """Work and export folders' copies on the store (no-ops for a local home): `tasks.shared_files`."""
        return SharedTaskFiles.of(HomeLayout.of(self.home), self.output_path)

    def builder(self) -> TaskBuilder:
        home = HomeLayout.of(self.home)
        client = docker.from_env()
        cleanup_stale(client)
        executor = TaskExecutor(
            client, RepoCache(home.repos, self.git_url), sandbox_config(self.sandbox.spec, build=True), self.registry
        )
        return TaskBuilder(
            executor=executor,
            lake_dir=home.lake,
            work_root=home.work,
            output_dir=self.output_path,
            recipes=RecipeStore(home.recipes),
            base_image=self.base_image,
            # the executor's sandbox: an environment image built on another machine is pulled before it starts
            agent_sandbox=executor.sandbox.model_copy(update={"network": self.agent_network}),
            after_runs=self.after_runs,
            env_max_turns=self.env_max_turns,
            test_max_turns=self.test_max_turns,
            env_max_tokens=self.env_max_tokens,
            test_max_tokens=self.test_max_tokens,
            test_timeout=self.test_timeout_seconds,
        )
