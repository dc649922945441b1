"""The environment recipes to try for a repository at a commit, whatever its language: the one entry point.

Task building (`tasks.manifest_env`), `swe-forge validate` (`tasks.revalidate_instances`) and the
harness (SWE-bench instances without an environment) all ask here. The toolchain comes from the
manifests at the commit and the language of the change (`execution.toolchains`); Python goes to
`execution.manifest`, the others to `execution.toolchain_recipes`. A repository that cannot be
built on this machine at all (a registry the sandbox cannot reach, a build system with no runner
adapter, no toolchain image) gets no recipes and a `problem` saying why, with `buildable=False`, so a
caller spends nothing more on it (no build, no LLM call).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from swe_forge_dagster.execution.environment import EnvRecipe
from swe_forge_dagster.execution.manifest import manifest_candidates, remembered
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.toolchain_recipes import (
    cpp_recipes,
    go_recipes,
    java_recipes,
    node_recipes,
    rust_recipes,
)
from swe_forge_dagster.execution.toolchains import (
    EXTRA_FILES,
    PYTHON_MANIFESTS,
    TOOLCHAIN_MANIFESTS,
    dependency_problem,
    go_requirements,
    toolchain_images,
    toolchain_of,
)
from swe_forge_dagster.settings import PYTHON_BASE_IMAGES, get_settings


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
    images: Mapping[str, str] = PYTHON_BASE_IMAGES,
    max_candidates: int = 6,
) -> Candidates:
    """The candidates for `repo` at `sha` (`changed`: the files of the change, which decide between toolchains)."""
    roots = (*TOOLCHAIN_MANIFESTS, *PYTHON_MANIFESTS)
    present = {name for name in roots if cache.show_file(repo, sha, name) is not None}
    toolchain = toolchain_of(present, changed)
    if toolchain is None:
        return Candidates(
            None,
            problem="no manifest of a supported toolchain at the root (setup.py/pyproject.toml, "
            "package.json, go.mod, Cargo.toml, pom.xml, CMakeLists.txt)",
            buildable=False,
        )
    if toolchain == "python":
        recipes = manifest_candidates(cache, repo, sha, images, max_candidates, available)
        return Candidates("python", recipes, None if recipes else "no Python base image is built on this engine")
    files = {
        name: text.decode("utf-8", "replace")
        for name in (*TOOLCHAIN_MANIFESTS, *EXTRA_FILES)
        if (text := cache.show_file(repo, sha, name)) is not None
    }
    tree = set(cache.list_files(repo, sha))
    if problem := dependency_problem(toolchain, files, tree):
        return Candidates(toolchain, problem=problem, buildable=False)
    usable = toolchain_images(toolchain, files, available)
    if not usable:
        return Candidates(
            toolchain,
            problem=f"no {toolchain} toolchain image on this Docker engine "
            f"(scripts/build-toolchain-image.sh {toolchain})",
            buildable=False,
        )
    recipes: list[EnvRecipe] = []
    for image in usable:
        made, problem = _recipes(toolchain, files, tree, image)
        if problem:
            return Candidates(toolchain, problem=problem, buildable=False)
        recipes += made
    chosen = remembered(cache, repo, sha)
    if chosen is not None:
        recipes = [chosen, *(recipe for recipe in recipes if recipe != chosen)]
    return Candidates(toolchain, recipes[:max_candidates])


def _recipes(
    toolchain: str, files: Mapping[str, str], tree: set[str], image: str
) -> tuple[list[EnvRecipe], str | None]:
    if toolchain == "node":
        return node_recipes(files, tree, image)
    if toolchain == "go":
        proxy = get_settings().goproxy_url if go_requirements(files.get("go.mod", "")) else None
        return go_recipes(files, tree, image, proxy), None
    if toolchain == "rust":
        return rust_recipes(image), None
    if toolchain == "java":
        return java_recipes(files, image)
    return cpp_recipes(files, tree, image)
