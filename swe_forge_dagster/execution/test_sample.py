"""Which of a repository's test modules show that an environment works, without running the whole suite.

An environment is proven by a run of some of the repository's own tests at the base commit (the
environment agent's replay, the manifest recipes of the task stages): at least one must pass. A
spread sample of the pytest modules, tried first with the ones the PR touches, keeps that run short
on a large suite while still reaching more than one package.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath

from swe_forge_dagster.common.paths import is_test_path

SAMPLE_SIZE = 20


def pytest_modules(paths: Iterable[str]) -> list[str]:
    """The pytest modules (`test_*.py` / `*_test.py` under a test path) among `paths`, sorted."""
    return sorted(
        p for p in paths if is_test_path(p) and re.fullmatch(r"test_.*\.py|.*_test\.py", PurePosixPath(p).name)
    )


def spread_sample(files: list[str], limit: int = SAMPLE_SIZE) -> list[str]:
    """At most `limit` files spread evenly over the sorted list (so more than one package is tried)."""
    if len(files) <= limit:
        return files
    step = len(files) / limit
    return [files[int(i * step)] for i in range(limit)]


def proof_sample(
    paths: Iterable[str],
    preferred: Iterable[str] = (),
    limit: int = SAMPLE_SIZE,
    runs: Callable[[str], bool] | None = None,
) -> list[str]:
    """The modules to run to prove an environment: those of `preferred` that exist, then a spread sample.
    `runs` picks another runner's test files (under a test path) instead of pytest modules."""
    modules = pytest_modules(paths) if runs is None else sorted(p for p in paths if is_test_path(p) and runs(p))
    present = set(modules)
    first = [p for p in dict.fromkeys(preferred) if p in present][:limit]
    rest = spread_sample([p for p in modules if p not in first], limit - len(first))
    return sorted(first + rest)
