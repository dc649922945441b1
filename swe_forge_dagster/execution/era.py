"""What every language's era-true recipe shares: when a commit is old enough, the date's form, the variable a recipe
resolves as of, and how the environment was found.

A repository at a commit of 2021 was tested with the releases of 2021. Each pack that can resolve as of a date
(Python: uv's `--exclude-newer`, `languages.python.era`; Node: npm's `before`, `languages.node.era`) offers an era
recipe for an old commit before its recipes of today's releases. The recipe's first step exports its resolution
date (from the commit's committer date, `repo_cache.RepoCache.committed_at`) as `RESOLUTION_VAR`, and its install
records it (`recipe.RUNTIME_FILE`). The date is part of the recipe, so of its image's tag: commits of different
dates never share an era environment.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from swe_forge_dagster.execution.recipe import EnvRecipe

ERA_AGE = timedelta(days=365)
"""A commit younger than this gets no era recipe: its era's releases are today's, near enough (the demo world and
repositories of today keep today's recipes)."""
RESOLUTION_VAR = "SWE_FORGE_RESOLUTION_DATE"
"""Set by an era recipe's date step: the date its install resolves as of (empty: it could not, today's releases)."""
RUNG = "manifest-era"
"""How an era recipe's environment was found (today's releases: `manifest`; the LLM agent: `agent`)."""


def iso_utc(moment: datetime) -> str:
    """`2021-05-13T20:35:12Z`: the form uv and npm read, and one that sorts as text."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_old(committed: datetime | None, now: datetime | None = None) -> bool:
    """Whether a commit is old enough for its era's releases to differ from today's (`ERA_AGE`)."""
    return committed is not None and (now or datetime.now(UTC)) - committed > ERA_AGE


def resolution_of(recipe: EnvRecipe) -> str | None:
    """The date an era recipe resolves as of (`2023-06-29T00:04:33Z`), read from its date step; None if none."""
    for command in recipe.install_commands:
        if match := re.search(rf"\b{RESOLUTION_VAR}=(\S+)", command):
            return match.group(1).strip("'\"") or None
    return None


def runs_in_its_era(recipe: EnvRecipe, committed: datetime | None) -> bool:
    """Whether an era recipe resolves as of its commit's own date: its runtime existed then. A recipe on a newer
    runtime resolves as of that runtime's release instead (packages of 2014 do not run on Python 3.9), so it gets
    releases the commit never saw: pytest of June 2023 on Python 3.13 resolves as of October 2024, whose pluggy
    warns where pytest's own tests want silence."""
    return committed is not None and resolution_of(recipe) == iso_utc(committed)


def is_era(recipe: EnvRecipe) -> bool:
    """Whether `recipe` is an era recipe (its install resolves as of a date)."""
    return any(RESOLUTION_VAR in command for command in recipe.install_commands)
