"""The environment recipes to try for a repository at a commit, whatever its language: the one entry point.

Task building (`tasks.manifest_env`), `swe-forge validate` (`tasks.revalidate_instances`) and the
harness (SWE-bench instances without an environment) all ask here. The language pack comes from the
manifests at the commit and the language of the change (`languages.registry.pack_of`), and the
pack's images and recipes give the candidates. A repository that cannot be
built on this machine at all (a registry the sandbox cannot reach, a build system with no runner
adapter, no toolchain image) gets no recipes and a `problem` saying why, with `buildable=False`, so a
caller spends nothing more on it (no build, no LLM call).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from swe_forge_dagster.execution.era import runs_in_its_era
from swe_forge_dagster.execution.manifest import remembered
from swe_forge_dagster.execution.recipe import EnvRecipe
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.languages.registry import pack_of, root_files


@dataclass
class Candidates:
    """What to try: recipes in order, or why there are none (`buildable=False`: not on this machine at all)."""

    toolchain: str | None
    recipes: list[EnvRecipe] = field(default_factory=list)
    problem: str | None = None
    buildable: bool = True


def environment_candidates(
    cache: RepoCache,
    repo: str,
    sha: str,
    changed: Sequence[str] = (),
    *,
    available: Callable[[str], bool] | None = None,
    max_candidates: int = 6,
) -> Candidates:
    """The candidates for `repo` at `sha` (`changed`: the files of the change, which decide between languages)."""
    roots = root_files()
    present = {name for name in roots if cache.show_file(repo, sha, name) is not None}
    language = pack_of(present, changed)
    if language is None:
        return Candidates(
            None,
            problem=f"no manifest of a supported toolchain at the root ({', '.join(roots)})",
            buildable=False,
        )
    tree = set(cache.list_files(repo, sha))
    files = {
        name: text.decode("utf-8", "replace")
        for name in language.files_to_read(tree)
        if (text := cache.show_file(repo, sha, name)) is not None
    }
    if problem := language.dependency_problem(files, tree):
        return Candidates(language.name, problem=problem, buildable=False)
    usable = language.usable_images(files, available)
    if not usable:
        if language.missing_image:
            return Candidates(language.name, problem=language.missing_image)
        return Candidates(
            language.name,
            problem=f"no {language.name} toolchain image on this Docker engine "
            f"(scripts/build-toolchain-image.sh {language.name})",
            buildable=False,
        )
    recipes: list[EnvRecipe] = []
    for image in usable:
        made, problem = language.recipes(files, tree, image) if language.recipes else ([], None)
        if problem:
            return Candidates(language.name, problem=problem, buildable=False)
        recipes += made
    recipes = recipes[:max_candidates]
    if language.era_recipes is not None:  # the commit's era first, then today's releases (as many as without it)
        committed = cache.committed_at(repo, sha)
        era = [era for image in usable for era in language.era_recipes(files, tree, image, committed)]
        era.sort(key=lambda recipe: not runs_in_its_era(recipe, committed))  # a runtime of the commit's time first
        recipes = era + recipes
    chosen = remembered(cache, repo, sha)
    if chosen is not None and chosen in recipes:  # a recipe this code no longer makes is an older code's: stale
        recipes = [chosen, *(recipe for recipe in recipes if recipe != chosen)]
    return Candidates(language.name, recipes)
