"""The environment stage's saved record, and how the later stages get their image from it.

The record is what a later stage, on this host or another, needs to run in the same environment:
the recipe (to build it again), the image's tag and its registry digest (to pull exactly that
image: `environments.image_source`). Later stages never trust that the tag is on their engine: they
ask `stage_image`, which uses it when it is, pulls it by digest when it is not, and builds it from
the recipe when that fails, and they save where it came from (`image_source`).
"""

from __future__ import annotations

from typing import Any

from swe_forge_dagster.environments.image_source import StageImage
from swe_forge_dagster.execution.recipe import EnvRecipe
from swe_forge_dagster.tasks.prove import TaskExecutor


def environment_record(
    executor: TaskExecutor,
    recipe: EnvRecipe,
    image: str,
    cached: bool,
    source: str,
    manifest_problem: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(saved data, stage facts) of the environment stage; `manifest_problem` says why no manifest recipe served
    when the agent found the recipe. `image_digest` is None when the image never went through a registry (none
    configured, or it was down when the image was built): a later stage elsewhere then pulls by tag or builds."""
    digest = executor.environments.digest_of(image)
    data = {
        "install_commands": list(recipe.install_commands),
        "test_command": recipe.test_command,
        "base_image": recipe.base_image,
        "image": image,
        "image_digest": digest,
        "image_cached": cached,
        "recipe_source": source,
        "manifest_problem": manifest_problem,
        "image_adds_bytes": executor.environments.own_bytes(image),
    }
    facts = {
        "image": image,
        "image_digest": digest,
        "image_cached": cached,
        "recipe_source": source,
        "image_adds_mb": round((data["image_adds_bytes"] or 0) / 1e6, 1),
    }
    return data, facts


def recipe_of(env: dict[str, Any]) -> EnvRecipe:
    """The recipe an environment record saved."""
    return EnvRecipe(tuple(env["install_commands"]), env["test_command"], env["base_image"])


def stage_image(executor: TaskExecutor, repo: str, base: str, env: dict[str, Any]) -> StageImage:
    """The image of the environment record `env` (of `repo` at `base`) on this engine: there already, pulled by its
    saved digest, or built from its recipe (`TaskExecutor.stage_image`; raises `TaskBuildError` when the recipe
    no longer installs)."""
    return executor.stage_image(repo, base, recipe_of(env), env["image"], env.get("image_digest"))
