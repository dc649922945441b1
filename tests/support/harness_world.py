"""The harness tests' world: task inputs made from the test world's PRs, built once per session.

The Docker test modules and the unit tests use it; `harness_world` caches one per directory, so
the git world, the task directories and (through its image tag) the environment image are made
once per session however many modules ask.
"""

from __future__ import annotations

import dataclasses
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker

from swe_forge_dagster.common.sandbox_spec import SandboxSpec
from swe_forge_dagster.demo.worlds.git_world import GitWorld, build_git_world
from swe_forge_dagster.demo.worlds.harness_task import WORLD_RECIPE, write_world_seed_workspace, write_world_task
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.harness import Harness, HarnessConfig, HarnessTask, TaskResult, load_inputs, run_harness
from tests.support.common import BASE_IMAGE, EXAMPLES

__all__ = ["EASY", "EXAMPLES", "HarnessWorld", "harness_world", "run_items", "write_agent"]

EASY = ("acme-labs/tinycalc", 12)


@dataclass
class HarnessWorld:
    root: Path
    world: GitWorld
    cache: RepoCache
    tasks: Path  # our task directories: acme-labs__tinycalc-12, northwind__datekit-7
    seed: Path  # the seed's nested format: acme-labs/tinycalc-12/workspace.yaml

    def config(self, **overrides: Any) -> HarnessConfig:
        values: dict[str, Any] = {
            "agent": "oracle",
            "repo_cache_dir": self.root / "harness-repos",
            "git_url": self.world.url_template,
            "test_timeout": 90,
            "agent_timeout": 120,
        }
        spec = {"image": BASE_IMAGE, "cpu": 1.0, "mem_limit": "1g"}
        for name, value in overrides.items():  # the sandbox's fields go to its spec, the others to the config
            if name in SandboxSpec.model_fields:
                spec[name] = value
            else:
                values[name] = value
        return HarnessConfig(**values, sandbox=SandboxSpec(**spec))

    def task(self, name: str = "acme-labs__tinycalc-12") -> HarnessTask:
        (loaded,) = load_inputs(self.tasks / name, default_image=BASE_IMAGE)
        assert isinstance(loaded, HarnessTask), loaded
        return loaded

    def variant(self, out: Path, task_id: str, **recipe: Any) -> Path:
        """Our tinycalc#12 task under another id (and recipe), so one agent can behave per task."""
        chosen = dataclasses.replace(WORLD_RECIPE, **recipe)
        return write_world_task(out, self.cache, self.world.pr(*EASY), chosen, task_id=task_id)


_WORLDS: dict[Path, HarnessWorld] = {}


def harness_world(root: Path) -> HarnessWorld:
    """The world and its harness inputs under `root`, made on first use and then reused."""
    root = root.resolve()
    if root not in _WORLDS:
        world = build_git_world(root / "world")
        cache = RepoCache(root / "build-repos", world.url_template)
        tasks, seed = root / "tasks", root / "seed"
        write_world_task(tasks, cache, world.pr(*EASY))
        write_world_task(tasks, cache, world.pr("northwind/datekit", 7))
        write_world_seed_workspace(seed, cache, world.pr(*EASY))
        _WORLDS[root] = HarnessWorld(root, world, cache, tasks, seed)
    return _WORLDS[root]


def write_agent(directory: Path, script: str) -> Path:
    """An agent directory holding `run.sh` (run as `sh /agent/run.sh`)."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    run = directory / "run.sh"
    run.write_text(script)
    run.chmod(run.stat().st_mode | stat.S_IXUSR | stat.S_IRGRP | stat.S_IROTH)
    directory.chmod(0o755)
    return directory


def run_items(hw: HarnessWorld, client: docker.DockerClient, items: list, **config: object) -> list[TaskResult]:
    """`items` through one harness (the shared engine connection) with the world's config plus `config`."""
    settings = hw.config(**config)
    with Harness(settings, client=client) as harness:
        return run_harness(items, settings, harness=harness)
