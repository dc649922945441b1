"""The per-repository recipe store: the environment agent runs once per repository, not once per task.

An accepted recipe (install commands + test command, proven by replay) is kept as JSON under the
cache; the next task of the same repository tries it first (its image is usually still cached,
so that task starts warm with no LLM call and no replay). A stored recipe that no longer builds
at a newer base commit is dropped and the agent runs again.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from swe_forge_dagster.environments.environment import EnvRecipe


class RecipeStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def _path(self, repo: str) -> Path:
        owner, _, name = repo.partition("/")
        return self.root / f"{owner}__{name}.json"

    def get(self, repo: str, base_image: str) -> EnvRecipe | None:
        """The stored recipe of `repo`: an agent's only for `base_image` (what it was found on does not carry over
        to another configured image), a manifest recipe on whichever image its Python chose."""
        try:
            data = json.loads(self._path(repo).read_text())
        except (FileNotFoundError, ValueError):
            return None
        if data.get("base_image") != base_image and data.get("source") != "manifest":
            return None
        return EnvRecipe(tuple(data["install_commands"]), data["test_command"], data["base_image"])

    def put(self, repo: str, recipe: EnvRecipe, found_at: str, source: str = "agent") -> None:
        """Keep `recipe` for the repository's next tasks; `source` is `manifest` or `agent` (who found it)."""
        self.root.mkdir(parents=True, exist_ok=True)
        data = {
            "repo": repo,
            "install_commands": list(recipe.install_commands),
            "test_command": recipe.test_command,
            "base_image": recipe.base_image,
            "key": recipe.key(),
            "found_at_commit": found_at,
            "source": source,
        }
        fd, tmp = tempfile.mkstemp(prefix=".recipe.", dir=self.root)
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle, indent=1)
        os.replace(tmp, self._path(repo))

    def drop(self, repo: str) -> None:
        self._path(repo).unlink(missing_ok=True)
