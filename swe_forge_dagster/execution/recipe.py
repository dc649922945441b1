"""An environment recipe: how to install a repository and run its tests, the unit images are built and cached by.

Generic (every language pack's recipes are these); apart from `environment` so the packs can build
recipes without the image machinery.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from swe_forge_dagster.execution.runners import fill_tests
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE

ENV_DIR = "/.swe-forge-env"
"""In an environment image: `base.list` (the build tree's files, NUL-separated) and `outputs.list` (what
the install added to /repo, one topmost path a line); see `repo_box.prepare_script`."""
RUNTIME_FILE = f"{ENV_DIR}/runtime"
"""`name=value` lines an install may write about the runtime it made (`python-version=3.9.2`, `resolution-date=...`):
the build labels the image `swe-forge.<name>`, which `validate` and the harness print (`execution.runtime_record`)."""
RETOUCH = f"mkdir -p {ENV_DIR} && touch {ENV_DIR}/retouch"
"""Run last by recipes that compile: the environment image may have been built at another commit, and the tree is
copied in with its commit's timestamps, so make could take an old object for a changed source; containers from an
image with this mark re-date every tree file (the repo box), and ccache/go's content-addressed caches keep the
rebuild cheap."""


@dataclass(frozen=True)
class EnvRecipe:
    """How to install a repository and run its tests; cached as an image per (repo, recipe).

    The test command has no default: the kernel names no runner, so whoever makes a recipe (a language pack's
    ladder, a seed task, a test) says which one runs."""

    install_commands: tuple[str, ...]
    test_command: str  # `{tests}` is replaced by the quoted test files
    base_image: str = DEFAULT_BASE_IMAGE

    def key(self) -> str:
        raw = json.dumps([self.base_image, list(self.install_commands), self.test_command])
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    def tests_command(self, test_files: list[str], report: str | None = None) -> str:
        """The test command for `test_files` (its `{report}` filled with `report`; None: left as it is), filled as
        validation and the harness fill it."""
        return fill_tests(self.test_command, test_files, report)
