"""How a swe-forge (seed) task's environment is built: its image and install, from its `install_config`.

Shared by the harness (which evaluates seed tasks) and `swe-forge validate` (which re-proves them),
so both run a seed task in the same environment; the language packs decide (`registry.seed_task_image`,
each pack's `seed_image` and `seed_install`). The seed's Python tasks expect a virtual
environment at `/tmp/venv` (their checks call `/tmp/venv/bin/python -m pytest`); the install goes
there, never into the system Python, which PEP 668 protects on Debian images. The image is the
local base image nearest to the Python version the task asks for; a JavaScript/TypeScript task (its
`install_config` names `node`, or its language is one of those) gets the Node.js toolchain image of
the major it names (`swe-forge-node:20`, built on first need from the npm registry; Debian's Node
image when it names none), or `node:<version>-bookworm` when an official `python:*` image is given
(a machine with a registry); a Go, Rust or Java task (`install_config`'s `go`, `rust`, `java`, or its
language) the local toolchain image whose version meets the one it names. Without a given image
(the settings' default) the local images are used, and the choice is logged.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from swe_forge_dagster.languages import registry
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE, DEFAULT_DOCKER_IMAGE

log = logging.getLogger(__name__)
RUNTIME_KEYS = tuple(p.seed_languages[0] for p in registry.packs() if p.seed_languages)
"""The `install_config` keys that name a runtime version (`python`, `node`, `go`…)."""

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
    """The image a seed task runs on, from its `install_config` (and language); see the module docstring.

    With no image given (`default_image` is the settings' default, `python:*-slim` from Docker Hub), the
    local images answer: the base image of the Python it names (`python: '3.11'` -> swe-forge-base:bookworm),
    the Node image of its major (`node: '20'` -> swe-forge-node:20, built on first need); the choice is
    logged. An image given (`SWE_FORGE_DOCKER_IMAGE`, `--docker-image`) other than the default still wins.
    """
    if default_image != DEFAULT_DOCKER_IMAGE:
        return registry.seed_task_image(install_config, language, default_image)
    image = registry.seed_task_image(install_config, language, DEFAULT_BASE_IMAGE)
    asked = ", ".join(f"{key} {install_config[key]}" for key in RUNTIME_KEYS if install_config.get(key))
    log.info("seed task (%s): local image %s, no --docker-image given", asked or language or "no runtime", image)
    return image


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
