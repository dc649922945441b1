"""How a swe-forge (seed) task's environment is built: its image and install, from its `install_config`.

Shared by the harness (which evaluates seed tasks) and `swe-forge validate` (which re-proves them),
so both run a seed task in the same environment. The seed's Python tasks expect a virtual
environment at `/tmp/venv` (their checks call `/tmp/venv/bin/python -m pytest`); the install goes
there, never into the system Python, which PEP 668 protects on Debian images. The image is the
local base image nearest to the Python version the task asks for; a JavaScript/TypeScript task (its
`install_config` names `node`, or its language is one of those) gets the Node.js toolchain image
(`scripts/build-toolchain-image.sh node`), or `node:<version>-bookworm` when the default image is an
official `python:*` one (a machine with a registry); a Go, Rust or Java task (`install_config`'s `go`,
`rust`, `java`, or its language) the local toolchain image whose version meets the one it names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath

from swe_forge_dagster.execution.toolchains import toolchain_images
from swe_forge_dagster.settings import NODE_IMAGE, PYTHON_BASE_IMAGES

ENSURE_GIT = (
    "command -v git >/dev/null 2>&1 || (apt-get update -qq "
    "&& apt-get install -y -qq --no-install-recommends git ca-certificates >/dev/null)"
)
"""First install step for tasks without their own recipe: the harness snapshots the repo with git."""
SEED_VENV = (
    "python3 -m venv --system-site-packages /tmp/venv && . /tmp/venv/bin/activate "
    "&& (python -c 'import pytest' 2>/dev/null || pip install -q pytest)"
)


def seed_install_commands(install_config: Mapping[str, object]) -> tuple[str, ...]:
    """The install steps of a seed task: git, then its own install (in the venv when it is Python's)."""
    install = str(install_config.get("install") or "").strip()
    python = str(install_config.get("python") or "")
    if install and (python or re.search(r"\bpip\b|python", install)):
        install = f"{SEED_VENV} && {install}"
    return (ENSURE_GIT, install) if install else (ENSURE_GIT,)


NODE_LANGUAGES = frozenset({"javascript", "typescript"})
SEED_TOOLCHAINS = {"go": "go", "rust": "rust", "java": "java"}
"""`install_config` keys (and languages) of the seed's other toolchains -> ours."""


def seed_task_image(install_config: Mapping[str, object], language: str, default_image: str) -> str:
    """The image a seed task runs on, from its `install_config` (and language); see the module docstring."""
    other = next((key for key in SEED_TOOLCHAINS if install_config.get(key)), None) or (
        (language or "").lower() if (language or "").lower() in SEED_TOOLCHAINS else None
    )
    if other is not None and default_image in PYTHON_BASE_IMAGES.values():  # the local toolchain image, by version
        numbers = [int(n) for n in re.findall(r"\d+", str(install_config.get(other) or ""))]
        if other == "java" and numbers[:1] == [1]:  # Java 8 is spelled 1.8
            numbers = numbers[1:]
        needed = tuple(numbers[:1] if other == "java" else numbers[:2]) or None
        return toolchain_images(SEED_TOOLCHAINS[other], {}, needed=needed)[0]
    node = str(install_config.get("node") or "").strip()
    if node or (language or "").lower() in NODE_LANGUAGES:
        if default_image in PYTHON_BASE_IMAGES.values():
            return NODE_IMAGE
        if re.fullmatch(r"python:3\.\d+(-slim|-bookworm|-bullseye)?", default_image):
            major = re.match(r"\d+", node)
            return f"node:{major.group(0) if major else '20'}-bookworm"
        return default_image
    return seed_image(str(install_config.get("python") or ""), default_image)


def seed_image(python: str, default_image: str) -> str:
    """The image for a seed task that asks for Python `python` (`3.11`): with our local base images, the one
    of the nearest version (the older on a tie); with an official `python:X-slim` default,
    `python:<version>-slim`; else the default."""
    match = re.fullmatch(r"3\.(\d+)(\.\d+)?", python.strip())
    if not match:
        return default_image
    if default_image in PYTHON_BASE_IMAGES.values():
        wanted = int(match.group(1))
        nearest = min(PYTHON_BASE_IMAGES, key=lambda v: (abs(int(v.split(".")[1]) - wanted), int(v.split(".")[1])))
        return PYTHON_BASE_IMAGES[nearest]
    if re.fullmatch(r"python:3\.\d+(-slim|-bookworm|-bullseye)?", default_image):
        return f"python:3.{match.group(1)}-slim"
    return default_image


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
