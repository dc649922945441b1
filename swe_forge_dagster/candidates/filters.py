"""The local filter: the seed's rules and defaults, applied to what enrichment learned.

Defaults (seed `FilterConfig`): at least 20 stars, 1-50 files changed, 3-1000 added lines, a
language in python/javascript/typescript/go/rust/java (an unknown language passes), docs- or
config-only changes rejected. Added here: a language allowed but with no runner adapter rejected
before any LLM call (`no test runner`), tests-only changes rejected (nothing to solve), a
description of at least `min_description_chars` unless the PR closes an issue (the issue is the
statement), not-merged and bot-authored PRs rejected, user-owned repos rejected when org-only.
Every failing rule is reported; the first is the row's `reason`.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from swe_forge_dagster.common.paths import is_docs_path
from swe_forge_dagster.github.models import EnrichedPR
from swe_forge_dagster.languages.registry import is_test_path
from swe_forge_dagster.settings import DEFAULT_LANGUAGES

SEED_LANGUAGES = DEFAULT_LANGUAGES.split(",")
BUILDABLE_LANGUAGES = frozenset({*SEED_LANGUAGES, "c", "c++"})
"""GitHub's names of the languages with a toolchain image and a runner adapter (`execution.toolchains`)."""


class FilterConfig(BaseModel):
    min_stars: int = Field(default=20, ge=0)
    min_files: int = Field(default=1, ge=0)
    max_files: int = Field(default=50, ge=1)
    min_added_lines: int = Field(default=3, ge=0)
    max_added_lines: int = Field(default=1000, ge=1)
    languages: list[str] = Field(default_factory=lambda: list(SEED_LANGUAGES))
    min_description_chars: int = Field(default=30, ge=0)
    org_only: bool = True


Rejection = tuple[str, str]  # (category, detail): group by the first, read the second


def filter_rejections(pr: EnrichedPR, config: FilterConfig) -> list[Rejection]:
    """Every rule `pr` fails, as (category, detail) (empty: accepted)."""
    out: list[Rejection] = []
    repo = pr.repository
    if not pr.merged:
        out.append(("not merged", "not merged"))
    if pr.author_is_bot:
        out.append(("bot author", f"bot author ({pr.author_login})"))
    if config.org_only and repo.owner_type == "User":
        out.append(("not an org repo", "not an org repo (owner is a user)"))
    language = (repo.language or "").lower()
    allowed = [lang.lower() for lang in config.languages]
    if allowed and language and language not in allowed:
        out.append(("language not allowed", f"language {repo.language} not in {', '.join(config.languages)}"))
    elif (
        language and language not in BUILDABLE_LANGUAGES
    ):  # allowed by the user, but no task can be built: no LLM spend
        out.append(
            (
                "no test runner",
                f"no test runner for {repo.language} (tasks are built for {', '.join(sorted(BUILDABLE_LANGUAGES))})",
            )
        )
    if repo.stars < config.min_stars:
        out.append(("too few stars", f"stars {repo.stars} below minimum {config.min_stars}"))
    if pr.changed_files < config.min_files:
        out.append(("too few files", f"files changed {pr.changed_files} below minimum {config.min_files}"))
    if pr.changed_files > config.max_files:
        out.append(("too many files", f"files changed {pr.changed_files} above maximum {config.max_files}"))
    if pr.additions < config.min_added_lines:
        out.append(("too few added lines", f"added lines {pr.additions} below minimum {config.min_added_lines}"))
    if pr.additions > config.max_added_lines:
        out.append(("too many added lines", f"added lines {pr.additions} above maximum {config.max_added_lines}"))
    paths = pr.file_paths
    if paths and all(is_docs_path(p) for p in paths):
        out.append(("docs/config only", "docs/config-only change"))
    elif paths and all(is_test_path(p) for p in paths):
        out.append(("tests only", "tests-only change"))
    if len(pr.body.strip()) < config.min_description_chars and not pr.closing_issues:
        out.append(("short description", f"description under {config.min_description_chars} chars and no linked issue"))
    return out


def filter_reasons(pr: EnrichedPR, config: FilterConfig) -> list[str]:
    """The details of every rule `pr` fails (empty: accepted)."""
    return [detail for _, detail in filter_rejections(pr, config)]
