"""pyproject.toml, read once for the Python pack: its tables, and its `[build-system]`.

A leaf module (it imports nothing of the pack), so the recipes, the era's legacy-build check and the compiled-build
check share one reading without an import cycle. Text that is not TOML reads as empty: a repository's broken
pyproject.toml is the build's problem to report, not the recipe maker's.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass


def toml(text: str | None) -> dict:
    """The document's tables, or {} when there is none or it is not TOML."""
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


@dataclass(frozen=True)
class BuildSystem:
    requires: list[str]
    """`[build-system] requires`, the entries that are strings."""
    backend: str | None
    """`[build-system] build-backend`, when it is a string."""


def build_system(text: str | None) -> BuildSystem:
    """pyproject's `[build-system]` (empty when it has none)."""
    build = toml(text).get("build-system")
    build = build if isinstance(build, dict) else {}
    requires = build.get("requires")
    backend = build.get("build-backend")
    return BuildSystem(
        [r for r in requires if isinstance(r, str)] if isinstance(requires, list) else [],
        backend if isinstance(backend, str) else None,
    )
