"""REST responses -> the same `EnrichedPR` that GraphQL gives.

REST is the fallback for a PR whose GraphQL resolution failed, and the path for what GraphQL
lacks (the `.diff` media type, files past the first page). REST has no closing-issue
references, so they are read from GitHub's closing keywords in the PR body. The hints' inputs
(each closing issue's comments, the first commit's author date) come from `/issues/{n}/comments`
and `/pulls/{n}/commits`, in the shapes of GitHub's recorded responses.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from typing import Any

from swe_forge_dagster.github.models import (
    ChangedFile,
    EnrichedPR,
    IssueComment,
    LinkedIssue,
    RepoInfo,
    is_bot_login,
)

# GitHub's keywords that link a PR to the issue it closes (same repository only).
CLOSING_KEYWORDS = re.compile(r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\s*:?\s+#(\d+)\b", re.IGNORECASE)
REST_STATUS_TO_CHANGE_TYPE = {
    "added": "ADDED",
    "removed": "DELETED",
    "modified": "MODIFIED",
    "renamed": "RENAMED",
    "copied": "COPIED",
    "changed": "CHANGED",
    "unchanged": "CHANGED",
}


def closing_issue_numbers(body: str | None) -> list[int]:
    """Issue numbers a PR body closes with GitHub's keywords, in order, without repeats."""
    return list(dict.fromkeys(int(n) for n in CLOSING_KEYWORDS.findall(body or "")))


def _time(value: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def repo_from_rest(repo: dict[str, Any]) -> RepoInfo:
    """`GET /repos/{o}/{r}`, or the `base.repo` object embedded in a pull request."""
    license_info = repo.get("license") or {}
    return RepoInfo(
        full_name=repo["full_name"],
        stars=int(repo.get("stargazers_count") or repo.get("watchers_count") or 0),
        language=repo.get("language"),
        is_fork=bool(repo.get("fork")),
        is_archived=bool(repo.get("archived")),
        license=license_info.get("spdx_id"),
        owner_type=(repo.get("owner") or {}).get("type"),
    )


def files_from_rest(files: Sequence[dict[str, Any]]) -> tuple[ChangedFile, ...]:
    return tuple(
        ChangedFile(
            path=f["filename"],
            additions=int(f.get("additions") or 0),
            deletions=int(f.get("deletions") or 0),
            change_type=REST_STATUS_TO_CHANGE_TYPE.get(str(f.get("status")), str(f.get("status")).upper()),
        )
        for f in files
    )


def comments_from_rest(comments: Sequence[dict[str, Any]]) -> tuple[IssueComment, ...]:
    """`GET /issues/{n}/comments` items (oldest first, as GitHub lists them)."""
    return tuple(
        IssueComment(
            body=c.get("body") or "", created_at=_time(c.get("created_at")), updated_at=_time(c.get("updated_at"))
        )
        for c in comments
    )


def issue_from_rest(issue: dict[str, Any], repo: str, comments: Sequence[dict[str, Any]] = ()) -> LinkedIssue:
    return LinkedIssue(
        number=int(issue["number"]),
        title=issue.get("title") or "",
        body=issue.get("body") or "",
        repo=repo,
        comments=comments_from_rest(comments),
    )


def first_commit_at(commits: Sequence[dict[str, Any]] | None) -> dt.datetime | None:
    """The author date of the first item of `GET /pulls/{n}/commits` (SWE-bench's `commits[0].commit.author.date`)."""
    if not commits:
        return None
    return _time(((commits[0].get("commit") or {}).get("author") or {}).get("date"))


def pr_from_rest(
    pull: dict[str, Any],
    files: Sequence[dict[str, Any]] | None = None,
    repo: dict[str, Any] | None = None,
    issues: Sequence[dict[str, Any]] = (),
    comments: Mapping[int, Sequence[dict[str, Any]]] | None = None,
    commits: Sequence[dict[str, Any]] | None = None,
) -> EnrichedPR:
    """`GET /pulls/{n}` (+ its `/files` pages, the repo, the closed issues, their comments by issue
    number, its `/commits`) as an `EnrichedPR`."""
    base, head, user = pull.get("base") or {}, pull.get("head") or {}, pull.get("user") or {}
    repo_json = repo or base.get("repo")
    if not repo_json:
        raise ValueError("a pull request without base.repo needs the repository JSON too")
    info = repo_from_rest(repo_json)
    merged = bool(pull.get("merged") or pull.get("merged_at"))
    parsed_files = files_from_rest(files) if files is not None else ()
    changed = int(pull.get("changed_files") or len(parsed_files))
    return EnrichedPR(
        repo=info.full_name,
        number=int(pull["number"]),
        merged=merged,
        merged_at=_time(pull.get("merged_at")),
        merge_commit_sha=pull.get("merge_commit_sha") if merged else None,
        base_ref=base.get("ref"),
        base_sha=base.get("sha"),
        head_ref=head.get("ref"),
        head_sha=head.get("sha"),
        title=pull.get("title") or "",
        body=pull.get("body") or "",
        author_login=user.get("login"),
        author_is_bot=user.get("type") == "Bot" or is_bot_login(user.get("login")),
        created_at=_time(pull.get("created_at")),
        first_commit_at=first_commit_at(commits),
        additions=int(pull.get("additions") or 0),
        deletions=int(pull.get("deletions") or 0),
        changed_files=changed,
        files=parsed_files,
        files_complete=files is not None and len(parsed_files) >= changed,
        closing_issues=tuple(
            issue_from_rest(i, info.full_name, (comments or {}).get(int(i["number"]), ())) for i in issues
        ),
        labels=tuple(label["name"] for label in pull.get("labels") or []),
        repository=info,
        source="rest",
    )
