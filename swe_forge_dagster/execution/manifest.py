"""The recipe a proof settled on for a repository at a commit, remembered so the harness uses what `validate` proved.

Generic: every language pack's recipes are remembered here (`environments.candidates` puts the remembered one first).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from swe_forge_dagster.execution.recipe import EnvRecipe
from swe_forge_dagster.execution.repo_cache import RepoCache


def _memory(cache: RepoCache) -> Path:
    return cache.root / "manifest-recipes.json"


def remembered(cache: RepoCache, repo: str, sha: str) -> EnvRecipe | None:
    """The recipe a proof settled on for `repo` at `sha` (so the harness uses what `validate` proved)."""
    try:
        entry = json.loads(_memory(cache).read_text(encoding="utf-8")).get(f"{repo}@{sha}")
    except (OSError, ValueError):
        return None
    return EnvRecipe(tuple(entry["install_commands"]), entry["test_command"], entry["base_image"]) if entry else None


def remember(cache: RepoCache, repo: str, sha: str, recipe: EnvRecipe) -> None:
    """Record the recipe whose suite ran for `repo` at `sha` (atomically; last writer wins)."""
    path = _memory(cache)
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    known[f"{repo}@{sha}"] = {
        "install_commands": list(recipe.install_commands),
        "test_command": recipe.test_command,
        "base_image": recipe.base_image,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(known, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)
