"""An environment for a task from the repository's own manifests, before the environment agent is asked.

The environment stage tries, in order: the repository's stored recipe, then the recipes its
packaging files suggest (`environments.candidates`: those that resolve as of the commit's era first,
then today's releases; for Python an install per test extra /
requirements file, on the base image of the Python it declares; for JavaScript, Go, Rust, Java and
C/C++ the toolchain image and the project's own install and test runner), then the LLM agent
(Python only). A manifest recipe is proven the way
the agent's submissions are: its install must succeed and a run of the repository's own tests at
the base commit (the PR's test modules that exist there first, then a spread sample) must pass at
least one test. An image whose suite does not start (an old code base on a new Python: nothing
passes) moves on to the next candidate, so the next Python is tried.
"""

from __future__ import annotations

import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from docker.errors import ImageNotFound

from swe_forge_dagster.environments.candidates import environment_candidates
from swe_forge_dagster.environments.environment import EnvRecipe, image_available
from swe_forge_dagster.execution.manifest import remember
from swe_forge_dagster.execution.patch import SplitPatch
from swe_forge_dagster.execution.repo_box import write_tree_archive
from swe_forge_dagster.execution.runtime_record import runtime_record
from swe_forge_dagster.execution.test_sample import proof_sample
from swe_forge_dagster.languages.registry import is_default, is_test_path, pack, pack_of_runner, proof_file, runner_of
from swe_forge_dagster.tasks.prove import TaskBuildError, TaskExecutor

PROOF_TIMEOUT_S = 900.0


@dataclass
class ManifestEnvironment:
    """What the search found: the recipe and its image, or why none (with each candidate's failure)."""

    toolchain: str | None = None
    recipe: EnvRecipe | None = None
    image: str | None = None
    image_cached: bool = False
    problem: str | None = None
    tried: list[str] = field(default_factory=list)
    rung: str | None = None
    """How the recipe was found: `manifest-era` (dependencies as of the commit) or `manifest` (today's releases)."""
    runtime: dict[str, str] = field(default_factory=dict)
    """What the image records of its runtime (`execution.runtime_record`: interpreter, resolution date...)."""


def buildable_problem(executor: TaskExecutor, repo: str, base: str, split: SplitPatch) -> str | None:
    """Why a PR of a non-Python repository cannot become a task on this machine (checked before any LLM call): a
    registry its dependencies need is unreachable, no runner adapter or toolchain image, or (C/C++) no tests of its
    own: the test agent writes tests in every language, but a new GoogleTest file runs only from a CMake target,
    which it cannot add. None for Python and unknown projects: the agents may still try."""
    found = environment_candidates(
        executor.cache, repo, base, split.src_files, available=partial(image_available, executor.client)
    )
    if is_default(found.toolchain):
        return None
    if not found.buildable:
        return f"cannot be built on this machine ({found.toolchain}): {found.problem}"
    written = pack(str(found.toolchain)).written_tests_problem
    if written and not split.test_patch.strip():
        return f"the PR has no tests, and {written}"
    return None


def find_manifest_environment(
    executor: TaskExecutor,
    repo: str,
    base: str,
    preferred_tests: Sequence[str] = (),
    changed: Sequence[str] = (),
    timeout: float = PROOF_TIMEOUT_S,
) -> ManifestEnvironment:
    """The first manifest recipe of `repo` at `base` that installs and passes a test; see the module docstring."""
    found = ManifestEnvironment()
    available = partial(image_available, executor.client)
    options = environment_candidates(executor.cache, repo, base, changed, available=available)
    found.toolchain, candidates = options.toolchain, options.recipes
    if not candidates:
        found.problem = options.problem
        return found
    if is_default(options.toolchain) and (problem := executor.environments.index_problem(candidates[0].base_image)):
        found.problem = problem
        return found
    runner = runner_of(candidates[0].test_command)
    files = executor.cache.list_files(repo, base)
    runs = proof_file(pack_of_runner(runner)) if runner.in_process else runner.runs
    sample = proof_sample(files, preferred_tests, runs=runs, is_test=is_test_path)
    if not sample:
        found.problem = f"the repository has no {runner.name} tests at the base commit to prove an environment with"
        return found
    with tempfile.TemporaryDirectory(prefix="swe-forge-manifest-") as tmp:
        archive = write_tree_archive(executor.cache, repo, base, Path(tmp) / "tree.tar")
        for recipe in candidates:
            label = f"{recipe.base_image}: {recipe.install_commands[-1]}"
            try:
                image, cached = executor.environment_image(repo, base, recipe)
            except (TaskBuildError, ImageNotFound) as exc:
                found.tried.append(f"{label}: {_first_line(str(exc))}")
                continue
            run = executor.run_tests(image, archive, [], recipe, sample, timeout)
            counts = Counter((run.outcomes or {}).values())
            if counts["passed"]:
                remember(executor.cache, repo, base, recipe)  # the harness then uses what was proven here
                found.recipe, found.image, found.image_cached = recipe, image, cached
                found.runtime = runtime_record(executor.client, image)
                found.rung = found.runtime.get("rung", "manifest")
                return found
            ran = ", ".join(f"{n} {o}" for o, n in sorted(counts.items())) or run.error or "no test ran"
            found.tried.append(f"{label}: no passing test ({_first_line(ran)})")
    found.problem = "no manifest recipe passed a test: " + "; ".join(found.tried)
    return found


def _first_line(text: str, limit: int = 300) -> str:
    """The first line of a failure, and its last when there are more (where pip and pytest say why)."""
    lines = [line for line in text.strip().splitlines() if line.strip()] or [""]
    gist = lines[0] if len(lines) == 1 else f"{lines[0]} … {lines[-1].strip()}"
    return gist[:limit]
