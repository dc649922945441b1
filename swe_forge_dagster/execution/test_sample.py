"""Which of a repository's test files show that an environment works, without running the whole suite.

An environment is proven by a run of some of the repository's own tests at the base commit (the
environment agent's replay, the manifest recipes of the task stages): at least one must pass. A
spread sample of the test files, tried first with the ones the PR touches, keeps that run short
on a large suite while still reaching more than one package. Which files are tests, and which of them
a runner runs, the caller says (`languages.registry`: `is_test_path`, `proof_file`, `Runner.runs`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

SAMPLE_SIZE = 20


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
    *,
    runs: Callable[[str], bool],
    is_test: Callable[[str], bool],
) -> list[str]:
    """The test files to run to prove an environment: those of `preferred` that exist, then a spread sample, among
    the `paths` that are test code (`is_test`) and that the runner runs (`runs`)."""
    modules = sorted(p for p in paths if is_test(p) and runs(p))
    present = set(modules)
    first = [p for p in dict.fromkeys(preferred) if p in present][:limit]
    rest = spread_sample([p for p in modules if p not in first], limit - len(first))
    return sorted(first + rest)
