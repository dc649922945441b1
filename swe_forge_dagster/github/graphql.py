"""One GraphQL request enriches a whole chunk of PRs.

PRs are grouped by repository; each repository is one aliased `repository(...)` field (its
stars, language, license… fetched once) holding one aliased `pullRequest(number:)` per PR.
Values travel as variables, never spliced into the query text. A PR that fails inside the
response (NOT_FOUND, a transient resolver error) costs only that PR: the rest of the chunk is
parsed from the same response.

For SWE-bench's `hints_text` each PR also brings its first commit's author date and, per closing
issue, its first ISSUE_COMMENTS_FIRST comments (body, createdAt, updatedAt). Those two connections
raise GitHub's static cost of a 30-PR chunk from 1 point to 3: a connection costs one request per
parent node, so `comments` under `closingIssuesReferences(first: 5)` is 5 per PR and `commits` 1,
(30 x 9) / 100 = 2.7, rounded to 3; `first: 50` instead of 1 costs nothing more, only nodes.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from swe_forge_dagster.github.models import (
    ChangedFile,
    EnrichedPR,
    IssueComment,
    LinkedIssue,
    RepoInfo,
    is_bot_login,
)

Key = tuple[str, int]
# Comments read per closing issue: hints are what was said before the first commit, which is
# nearly always early in a thread; an issue with more comments before it loses the rest.
ISSUE_COMMENTS_FIRST = 50

REPO_FIELDS = (
    "nameWithOwner stargazerCount isFork isArchived primaryLanguage { name } "
    "licenseInfo { spdxId } owner { __typename login }"
)
PR_FRAGMENT = """
fragment PR on PullRequest {
  number title body merged mergedAt createdAt
  mergeCommit { oid }
  baseRefName baseRefOid headRefName headRefOid
  additions deletions changedFiles
  author { __typename login }
  files(first: $files) { totalCount nodes { path additions deletions changeType } }
  closingIssuesReferences(first: 5) {
    nodes {
      number title body repository { nameWithOwner }
      comments(first: $comments) { nodes { body createdAt updatedAt } }
    }
  }
  labels(first: 20) { nodes { name } }
  commits(first: 1) { nodes { commit { authoredDate } } }
}
"""


class GraphQLQueryError(Exception):
    """The whole GraphQL request was refused (syntax, validation): a bug, not a data problem."""


@dataclass(frozen=True)
class ChunkQuery:
    text: str
    variables: dict[str, Any]
    aliases: dict[tuple[str, str], Key]  # (repo alias, pr alias) -> (repo, number)
    repo_aliases: dict[str, str]  # repo alias -> "owner/name"


@dataclass
class ChunkResult:
    """Per-PR outcomes of one chunk, plus what the request cost."""

    enriched: dict[Key, EnrichedPR] = field(default_factory=dict)
    missing: dict[Key, str] = field(default_factory=dict)  # permanent: the PR or repo does not exist
    failed: dict[Key, str] = field(default_factory=dict)  # transient: worth another try
    cost: int | None = None
    remaining: int | None = None
    reset_at: dt.datetime | None = None


def build_chunk_query(keys: Sequence[Key], files_first: int = 50) -> ChunkQuery:
    if not keys:
        raise ValueError("empty chunk")
    by_repo: dict[str, list[int]] = defaultdict(list)
    for repo, number in dict.fromkeys(keys):
        by_repo[repo].append(number)
    declarations = ["$files: Int!", "$comments: Int!"]
    variables: dict[str, Any] = {"files": max(1, min(100, files_first)), "comments": ISSUE_COMMENTS_FIRST}
    aliases: dict[tuple[str, str], Key] = {}
    repo_aliases: dict[str, str] = {}
    parts = []
    for i, (repo, numbers) in enumerate(by_repo.items()):
        owner, _, name = repo.partition("/")
        declarations += [f"$o{i}: String!", f"$n{i}: String!"]
        variables[f"o{i}"], variables[f"n{i}"] = owner, name
        repo_aliases[f"r{i}"] = repo
        pulls = []
        for j, number in enumerate(numbers):
            declarations.append(f"$p{i}_{j}: Int!")
            variables[f"p{i}_{j}"] = number
            aliases[(f"r{i}", f"p{j}")] = (repo, number)
            pulls.append(f"p{j}: pullRequest(number: $p{i}_{j}) {{ ...PR }}")
        parts.append(f"r{i}: repository(owner: $o{i}, name: $n{i}) {{ {REPO_FIELDS} {' '.join(pulls)} }}")
    text = (
        f"query Enrich({', '.join(declarations)}) {{ rateLimit {{ cost remaining resetAt }} "
        + " ".join(parts)
        + " }"
        + PR_FRAGMENT
    )
    return ChunkQuery(text=text, variables=variables, aliases=aliases, repo_aliases=repo_aliases)


def _time(value: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _repo_info(data: dict[str, Any], fallback_name: str) -> RepoInfo:
    owner = data.get("owner") or {}
    return RepoInfo(
        full_name=data.get("nameWithOwner") or fallback_name,
        stars=int(data.get("stargazerCount") or 0),
        language=(data.get("primaryLanguage") or {}).get("name"),
        is_fork=bool(data.get("isFork")),
        is_archived=bool(data.get("isArchived")),
        license=(data.get("licenseInfo") or {}).get("spdxId"),
        owner_type=owner.get("__typename"),
    )


def _issue(node: dict[str, Any]) -> LinkedIssue:
    comments = (node.get("comments") or {}).get("nodes") or []
    return LinkedIssue(
        number=node["number"],
        title=node.get("title") or "",
        body=node.get("body") or "",
        repo=(node.get("repository") or {}).get("nameWithOwner"),
        comments=tuple(
            IssueComment(
                body=c.get("body") or "", created_at=_time(c.get("createdAt")), updated_at=_time(c.get("updatedAt"))
            )
            for c in comments
            if c
        ),
    )


def _first_commit_at(data: dict[str, Any]) -> dt.datetime | None:
    """The author date of the PR's first commit: what SWE-bench reads (`commits[0].commit.author.date`)."""
    nodes = (data.get("commits") or {}).get("nodes") or []
    return _time(((nodes[0] or {}).get("commit") or {}).get("authoredDate")) if nodes else None


def pr_from_graphql(repo: str, data: dict[str, Any], repo_info: RepoInfo) -> EnrichedPR:
    """Map one `pullRequest` object (fields of PR_FRAGMENT) onto the model."""
    author = data.get("author") or {}
    files = data.get("files") or {}
    nodes = files.get("nodes") or []
    return EnrichedPR(
        repo=repo,
        number=int(data["number"]),
        merged=bool(data.get("merged")),
        merged_at=_time(data.get("mergedAt")),
        merge_commit_sha=(data.get("mergeCommit") or {}).get("oid"),
        base_ref=data.get("baseRefName"),
        base_sha=data.get("baseRefOid"),
        head_ref=data.get("headRefName"),
        head_sha=data.get("headRefOid"),
        title=data.get("title") or "",
        body=data.get("body") or "",
        author_login=author.get("login"),
        author_is_bot=author.get("__typename") == "Bot" or is_bot_login(author.get("login")),
        created_at=_time(data.get("createdAt")),
        first_commit_at=_first_commit_at(data),
        additions=int(data.get("additions") or 0),
        deletions=int(data.get("deletions") or 0),
        changed_files=int(data.get("changedFiles") or 0),
        files=tuple(
            ChangedFile(
                path=n["path"],
                additions=n.get("additions", 0),
                deletions=n.get("deletions", 0),
                change_type=n.get("changeType"),
            )
            for n in nodes
        ),
        files_complete=data.get("files") is not None and int(files.get("totalCount") or 0) <= len(nodes),
        closing_issues=tuple(_issue(n) for n in (data.get("closingIssuesReferences") or {}).get("nodes") or []),
        labels=tuple(n["name"] for n in (data.get("labels") or {}).get("nodes") or []),
        repository=repo_info,
        source="graphql",
    )


def parse_chunk_response(query: ChunkQuery, payload: dict[str, Any]) -> ChunkResult:
    """Split a response into enriched, missing (NOT_FOUND) and failed (other errors) PRs."""
    data = payload.get("data")
    errors = payload.get("errors") or []
    if data is None:
        messages = "; ".join(str(e.get("message")) for e in errors) or "no data and no errors"
        raise GraphQLQueryError(f"GitHub refused the GraphQL query: {messages}")
    result = ChunkResult()
    rate = data.get("rateLimit") or {}
    result.cost, result.remaining = rate.get("cost"), rate.get("remaining")
    result.reset_at = _time(rate.get("resetAt"))
    error_at: dict[tuple[str, ...], dict[str, Any]] = {}
    for error in errors:
        path = tuple(str(p) for p in error.get("path") or [])
        if path:  # an error anywhere under a PR (its files, its issues...) makes that PR untrustworthy
            error_at.setdefault(path[:2], error)
    for (repo_alias, pr_alias), key in query.aliases.items():
        repo_data = data.get(repo_alias)
        error = error_at.get((repo_alias, pr_alias)) or error_at.get((repo_alias,))
        pr_data = (repo_data or {}).get(pr_alias)
        if pr_data and not error:
            result.enriched[key] = pr_from_graphql(key[0], pr_data, _repo_info(repo_data, key[0]))
        elif error and error.get("type") == "NOT_FOUND" and not pr_data:
            result.missing[key] = f"not found on GitHub: {error.get('message', 'NOT_FOUND')}"
        elif error:
            result.failed[key] = f"GraphQL error {error.get('type', '')}: {error.get('message', '')}".strip()
        else:
            result.missing[key] = "not found on GitHub"
    return result
