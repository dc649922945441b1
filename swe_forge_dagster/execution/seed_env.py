"""How a swe-forge (seed) task's environment is built: its image and install, from its `install_config`.

Shared by the harness (which evaluates seed tasks) and `swe-forge validate` (which re-proves them),
so both run a seed task in the same environment; the language packs decide (`registry.seed_task_image`,
each pack's `seed_image` and `seed_install`). The seed's Python tasks expect a virtual
environment at `/tmp/venv` (their checks call `/tmp/venv/bin/python -m pytest`); the install goes
there, never into the system Python, which PEP 668 protects on Debian images. The image is the
local base image nearest to the Python version the task asks for; a JavaScript/TypeScript task (its
`install_config` names `node`, or its language is one of those) gets the Node.js toolchain image
(`scripts/build-toolchain-image.sh node`), or `node:<version>-bookworm` when the default image is an
official `python:*` one (a machine with a registry); a Go, Rust or Java task (`install_config`'s `go`,
`rust`, `java`, or its language) the local toolchain image whose version meets the one it names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from swe_forge_dagster.execution.languages import registry

ENSURE_GIT = (
    "command -v git >/dev/null 2>&1 || (apt-get update -qq "
    "&& apt-get install -y -qq --no-install-recommends git ca-certificates >/dev/null)"
)
"""First install step for tasks without their own recipe: the harness snapshots the repo with git."""


def seed_install_commands(install_config: Mapping[str, object]) -> tuple[str, ...]:
    """The install steps of a seed task: git, then its own install (as its language pack runs it)."""
    install = registry.seed_install(install_config, str(install_config.get("install") or "").strip())
    return (ENSURE_GIT, install) if install else (ENSURE_GIT,)


def seed_task_image(install_config: Mapping[str, object], language: str, default_image: str) -> str:
    """The image a seed task runs on, from its `install_config` (and language); see the module docstring."""
    return registry.seed_task_image(install_config, language, default_image)


def seed_test_files(test_files: Iterable[object]) -> dict[str, str]:
    """The seed's `meta.test_files` (items with `path` and `content`) as repo-relative path -> content; real ones
    are relative or (some) absolute under /repo. ValueError for a path that leaves the repository."""
    files = {}
    for item in test_files:
        path = str(getattr(item, "path", ""))
        relative = path.removeprefix("/repo/")
        parts = PurePosixPath(relative).parts
        if not relative or PurePosixPath(relative).is_absolute() or ".." in parts or "\x00" in relative:
            raise ValueError(f"test file path {path!r} must stay inside the repository")
        files[relative] = str(getattr(item, "content", ""))
    return files
