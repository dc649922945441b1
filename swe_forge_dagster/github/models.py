"""What enrichment knows about a pull request, whichever API it came from.

GraphQL (the batched path) and REST (the fallback, and the path for real recorded responses)
both produce `EnrichedPR`, so everything downstream has one shape to trust.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

BOT_LOGINS = frozenset(
    {
        "dependabot",
        "dependabot-preview",
        "renovate",
        "renovate-bot",
        "greenkeeper",
        "snyk-bot",
        "pyup-bot",
        "imgbot",
        "allcontributors",
        "codecov-io",
        "mergify",
        "github-actions",
        "pre-commit-ci",
        "web-flow",
        "copilot-swe-agent",
    }
)


def is_bot_login(login: str | None) -> bool:
    """`[bot]` app accounts and the common bot users (their PRs make poor tasks)."""
    if not login:
        return False
    lower = login.lower()
    return lower.endswith("[bot]") or lower.endswith("-bot") or lower in BOT_LOGINS


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class IssueComment(_Model):
    """A comment on a closing issue; those written before the PR's first commit are SWE-bench's hints.

    Both times are kept because SWE-bench's cut-off compares `updated_at` (an edit moves a comment
    past the cut-off), while `created_at` is what a reader expects to see.
    """

    body: str = ""
    created_at: dt.datetime | None = None
    updated_at: dt.datetime | None = None


class LinkedIssue(_Model):
    """An issue the PR closes: the best problem statement a task can have.

    `comments` are its first comments, oldest first (GraphQL and REST both list them in creation
    order), at most one page (`graphql.ISSUE_COMMENTS_FIRST` / 100 over REST).
    """

    number: int
    title: str
    body: str = ""
    repo: str | None = None
    comments: tuple[IssueComment, ...] = ()


class ChangedFile(_Model):
    path: str
    additions: int = 0
    deletions: int = 0
    change_type: str | None = None


class RepoInfo(_Model):
    full_name: str
    stars: int = 0
    language: str | None = None
    is_fork: bool = False
    is_archived: bool = False
    license: str | None = None
    owner_type: str | None = None


class EnrichedPR(_Model):
    """One PR as GitHub describes it now (merged state, shas, text, files, issues, repo)."""

    repo: str
    number: int
    merged: bool
    merged_at: dt.datetime | None = None
    merge_commit_sha: str | None = None
    base_ref: str | None = None
    base_sha: str | None = None
    head_ref: str | None = None
    head_sha: str | None = None
    title: str = ""
    body: str = ""
    author_login: str | None = None
    author_is_bot: bool = False
    created_at: dt.datetime | None = None
    # Author date of the PR's first commit (GraphQL `commits(first: 1) { commit { authoredDate } }`, REST
    # `commit.author.date` of the first `/pulls/{n}/commits` item): SWE-bench's cut-off for hints.
    # None when not fetched (PRs enriched before this field existed).
    first_commit_at: dt.datetime | None = None
    additions: int = 0
    deletions: int = 0
    changed_files: int = 0
    files: tuple[ChangedFile, ...] = ()
    files_complete: bool = True
    closing_issues: tuple[LinkedIssue, ...] = ()
    labels: tuple[str, ...] = ()
    repository: RepoInfo
    source: Literal["graphql", "rest"] = "graphql"
    fetched_at: dt.datetime = Field(default_factory=lambda: dt.datetime.now(dt.UTC))

    @property
    def key(self) -> tuple[str, int]:
        return (self.repo, self.number)

    @property
    def file_paths(self) -> list[str]:
        return [f.path for f in self.files]
