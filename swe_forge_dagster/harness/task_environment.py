"""A task's environment image for the harness: the task's own recipe, or one from the repository's manifests.

Built by `environments.environment`, as task building builds it: reused only while the dependency
manifests at the task's base are the ones it was built from, one build per tag at a time across
processes, each install command under the fixed install step timeout. The base image is only
needed (and pulled when `--pull` is given) when a build is. Failures are the task's `setup_error`
(`HarnessOutcome`), with the reason.
"""

from __future__ import annotations

from functools import partial

import docker
from docker.errors import DockerException, ImageNotFound

from swe_forge_dagster.environments.candidates import environment_candidates
from swe_forge_dagster.environments.environment import EnvironmentBuildError, Environments, EnvRecipe, image_available
from swe_forge_dagster.execution.failures import needs_network
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.harness.inputs import patch_files
from swe_forge_dagster.harness.models import HarnessConfig, HarnessTask, Status
from swe_forge_dagster.harness.outcome import HarnessOutcome
from swe_forge_dagster.languages.registry import DEFAULT_RUNNER


def task_environment(
    environments: Environments,
    client: docker.DockerClient,
    cache: RepoCache,
    config: HarnessConfig,
    task: HarnessTask,
) -> tuple[str, str]:
    """The task's environment image (built on first use, then a cache hit for every task of the repo) and the
    test command to run in it (a manifest recipe's, which names its runner)."""
    if task.environment == "manifest":
        return _manifest_environment(environments, client, cache, task)
    recipe = EnvRecipe(tuple(task.install_commands), task.test_command or DEFAULT_RUNNER.template, task.image)
    try:
        try:
            image, _cached = environments.image(task.repo, task.base_commit, recipe)
        except ImageNotFound:
            _base_image(client, config, task.image)
            image, _cached = environments.image(task.repo, task.base_commit, recipe)
    except EnvironmentBuildError as exc:
        raise HarnessOutcome(Status.SETUP_ERROR, f"the environment of {task.repo} does not build: {exc}") from exc
    return image, task.test_command


def _manifest_environment(
    environments: Environments, client: docker.DockerClient, cache: RepoCache, task: HarnessTask
) -> tuple[str, str]:
    """The recipe `swe-forge validate` proved for this repository and commit when there is one (its image is
    reused: same recipe, same tag), else the first from the manifests whose image builds; the sanity
    check then shows whether its tests run."""
    problems = []
    found = environment_candidates(
        cache,
        task.repo,
        task.base_commit,
        patch_files(task.gold_patch),
        available=partial(image_available, client),
    )
    for recipe in found.recipes:
        try:
            return environments.image(task.repo, task.base_commit, recipe)[0], recipe.test_command
        except (ImageNotFound, EnvironmentBuildError) as exc:
            network = " [needs a network host the sandbox does not reach]" if needs_network(str(exc)) else ""
            problems.append(f"{recipe.base_image}: {str(exc)[:300]}{network}")
    why = "; ".join(problems) or found.problem or "no recipe"
    raise HarnessOutcome(
        Status.SETUP_ERROR, f"no environment from the manifests of {task.repo} ({why}); pass --env-spec"
    )


def _base_image(client: docker.DockerClient, config: HarnessConfig, image: str) -> None:
    try:
        client.images.get(image)
        return
    except ImageNotFound:
        if not config.pull:
            message = f"image {image!r} is not on this Docker engine (build or pull it, or use --pull)"
            raise HarnessOutcome(Status.SETUP_ERROR, message) from None
    try:
        client.images.pull(image)
    except DockerException as exc:
        raise HarnessOutcome(Status.SETUP_ERROR, f"image {image!r} could not be pulled: {exc}") from exc
