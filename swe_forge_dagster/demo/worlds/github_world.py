"""The data behind the GitHub twin: repositories, pull requests, their files, commits and closing issues.

Plain mutable dataclasses so a test can edit the world while a twin serves it (flip `merged`,
drop a PR to make it 404). `world_from_pr_events` turns rows of our `gharchive_pr_events`
dataset into a consistent world: values the events carry win, and everything the trimmed 2025
payload leaves NULL is invented deterministically per (seed, repo, number), with enough variety
(tiny repos, forks, docs-only PRs, bots, huge diffs...) that a local filter has real work to do.
That invention lives in `github_world_gen` (`world_from_pr_events`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta


@dataclass
class Repo:
    """A repository as the REST `/repos/{o}/{r}` and GraphQL `repository` fields describe it."""

    owner: str
    name: str
    stars: int = 100
    language: str | None = "Python"
    is_fork: bool = False
    is_archived: bool = False
    license_spdx: str | None = "MIT"
    owner_type: str = "Organization"  # "Organization" | "User"
    default_branch: str = "main"

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def id(self) -> int:
        """A stable numeric id (REST `id`), derived from the name so it never depends on hash salting."""
        return int(hashlib.sha1(self.full_name.encode()).hexdigest()[:7], 16)


@dataclass
class ChangedFile:
    """One file of a PR; `patch` is a unified-diff hunk whose +/- line counts match the numbers."""

    path: str
    additions: int
    deletions: int
    change_type: str = "MODIFIED"  # ADDED | MODIFIED | DELETED | RENAMED
    patch: str = ""
    previous_path: str | None = None  # for RENAMED

    def __post_init__(self) -> None:
        if not self.patch:
            self.patch = make_patch(self.path, self.additions, self.deletions, self.change_type)


@dataclass
class Comment:
    """A comment on an issue (GraphQL `IssueComment`, REST `/issues/{n}/comments`); unedited unless `updated_at`."""

    body: str
    created_at: str
    updated_at: str = ""
    author_login: str = "octocat"

    def __post_init__(self) -> None:
        self.updated_at = self.updated_at or self.created_at


@dataclass
class Issue:
    """An issue a PR closes (`closingIssuesReferences`), served at `/repos/{o}/{r}/issues/{n}`."""

    number: int
    title: str
    body: str = ""
    state: str = "closed"
    author_login: str = "octocat"
    comments: list[Comment] = field(default_factory=list)  # oldest first, as GitHub lists them


@dataclass
class PRCommit:
    """One commit of a PR (GraphQL `PullRequestCommit`, REST `/pulls/{n}/commits`); committed when authored
    unless `committed_at` (a rebase keeps the author date and moves the committer date)."""

    sha: str
    authored_at: str
    message: str = "Fix a bug"
    committed_at: str = ""

    def __post_init__(self) -> None:
        self.committed_at = self.committed_at or self.authored_at


@dataclass
class PullRequest:
    """A pull request; empty shas/timestamps are filled deterministically so tests can be terse."""

    repo: str  # full_name
    number: int
    title: str = "Fix a bug"
    body: str = ""
    author_login: str = "octocat"
    author_is_bot: bool = False
    merged: bool = True
    merged_at: str | None = None
    merge_commit_sha: str | None = None
    base_ref: str = "main"
    base_sha: str = ""
    head_ref: str = "fix-branch"
    head_sha: str = ""
    created_at: str = "2025-01-01T00:00:00Z"
    files: list[ChangedFile] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    closing_issues: list[int] = field(default_factory=list)
    state: str = "closed"  # "closed" | "open"
    commits: list[PRCommit] = field(default_factory=list)  # oldest first; default: one, an hour before created_at

    def __post_init__(self) -> None:
        self.base_sha = self.base_sha or fake_sha(f"{self.repo}#{self.number}:base")
        self.head_sha = self.head_sha or fake_sha(f"{self.repo}#{self.number}:head")
        if not self.commits:
            self.commits = [PRCommit(self.head_sha, iso(parse_iso(self.created_at) - timedelta(hours=1)), self.title)]
        if self.merged:
            self.state = "closed"
            self.merge_commit_sha = self.merge_commit_sha or fake_sha(f"{self.repo}#{self.number}:merge")
            self.merged_at = self.merged_at or iso(parse_iso(self.created_at) + timedelta(hours=5))

    @property
    def additions(self) -> int:
        return sum(f.additions for f in self.files)

    @property
    def deletions(self) -> int:
        return sum(f.deletions for f in self.files)

    @property
    def changed_files(self) -> int:
        return len(self.files)


@dataclass
class GithubWorld:
    """Everything the twin serves. Lookups ignore case like GitHub's `owner/name` routing does."""

    repos: dict[str, Repo] = field(default_factory=dict)
    pulls: dict[tuple[str, int], PullRequest] = field(default_factory=dict)
    issues: dict[tuple[str, int], Issue] = field(default_factory=dict)

    def add_repo(self, repo: Repo) -> Repo:
        self.repos[repo.full_name] = repo
        return repo

    def add_pull(self, pull: PullRequest) -> PullRequest:
        """Add a PR, creating a default repo for it when the test did not add one."""
        if self.get_repo(pull.repo) is None:
            owner, _, name = pull.repo.partition("/")
            self.add_repo(Repo(owner=owner, name=name))
        self.pulls[(pull.repo, pull.number)] = pull
        return pull

    def add_issue(self, repo: str, issue: Issue) -> Issue:
        self.issues[(repo, issue.number)] = issue
        return issue

    def get_repo(self, full_name: str) -> Repo | None:
        repo = self.repos.get(full_name)
        if repo is None:
            lowered = full_name.lower()
            repo = next((r for k, r in self.repos.items() if k.lower() == lowered), None)
        return repo

    def get_pull(self, repo: str, number: int) -> PullRequest | None:
        found = self.get_repo(repo)
        return self.pulls.get((found.full_name, number)) if found else None

    def get_issue(self, repo: str, number: int) -> Issue | None:
        found = self.get_repo(repo)
        return self.issues.get((found.full_name, number)) if found else None

    def remove_pull(self, repo: str, number: int) -> None:
        """Forget a PR so both REST and GraphQL answer 404 / NOT_FOUND for it (deleted or private)."""
        found = self.get_repo(repo)
        self.pulls.pop((found.full_name if found else repo, number), None)


def fake_sha(key: str) -> str:
    """A 40-hex git-like id that is stable for a key (sha1, never the salted built-in hash)."""
    return hashlib.sha1(key.encode()).hexdigest()


def iso(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def make_patch(path: str, additions: int, deletions: int, change_type: str = "MODIFIED") -> str:
    """A plausible hunk with exactly `additions` '+' and `deletions` '-' lines, as GitHub's `patch`."""
    stem = path.rsplit("/", 1)[-1].split(".")[0] or "file"
    plus = [f"+    {stem}_value_{i} = compute({i})" for i in range(additions)]
    minus = [f"-    {stem}_old_{i} = legacy({i})" for i in range(deletions)]
    if additions == 0 and deletions == 0:
        return ""  # a pure rename or mode change: GitHub sends no hunk
    if change_type == "ADDED":
        return "\n".join([f"@@ -0,0 +1,{additions} @@", *plus])
    if change_type == "DELETED":
        return "\n".join([f"@@ -1,{deletions} +0,0 @@", *minus])
    ctx = ["     # context line a", "     # context line b", "     # context line c"]
    header = f"@@ -10,{deletions + 6} +10,{additions + 6} @@ def {stem}():"
    return "\n".join([header, *ctx, *minus, *plus, *ctx])


_CLOSING = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(\d+)", re.IGNORECASE)


def closing_numbers(body: str) -> list[int]:
    """Issue numbers a body closes with GitHub's keywords (`Fixes #12`), in order, without repeats."""
    return list(dict.fromkeys(int(m) for m in _CLOSING.findall(body or "")))
