"""Resolvers of the twin's GraphQL schema: what each field returns from a `GithubWorld`, GitHub's way.

`github_graphql_schema` holds the SDL these attach to, the static cost and request handling.
What graphql-core does not do the GitHub way is added here:

* errors are raised with GitHub's top-level `type` (`NOT_FOUND`, `EXCESSIVE_PAGINATION`, ...)
  via `github_error`; `github_graphql_schema.format_error` puts it next to `path`/`locations`/
  `message` with no `extensions`, because that is what clients match on;
* connections demand `first` (<= 100) like GitHub, and page with opaque `after` cursors;
* a Bot's GraphQL `login` has no `[bot]` suffix (`dependabot`), unlike REST's `dependabot[bot]`,
  because that is what the real API does and clients comparing the two must cope.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphql import GraphQLError, GraphQLResolveInfo

from swe_forge_dagster.demo.worlds.github_world import GithubWorld, Issue, PRCommit, PullRequest, Repo

MAX_FIRST = 100
SOMETHING_WENT_WRONG = (
    "Something went wrong while executing your query. This may be the result of a timeout, or it could be a GitHub bug."
)

LICENSE_NAMES = {
    "MIT": "MIT License",
    "Apache-2.0": "Apache License 2.0",
    "GPL-3.0": "GNU General Public License v3.0",
    "BSD-3-Clause": 'BSD 3-Clause "New" or "Revised" License',
    "NOASSERTION": "Other",
}

_PARTIAL_MESSAGES = {
    "SERVICE_UNAVAILABLE": SOMETHING_WENT_WRONG,
    "TIMEOUT": "Something went wrong while executing your query. This may be the result of a timeout.",
    "FORBIDDEN": "Resource not accessible by integration",
}


@dataclass
class QueryContext:
    """What resolvers need from the twin for one execution: the data, the rate-limit view, faults."""

    world: GithubWorld
    rate: dict[str, Any]  # cost, limit, remaining, used, resetAt, nodeCount (after this query's cost)
    inject: Callable[[str, int], str | None] = lambda _repo, _number: None  # -> error type or None
    injected: dict[tuple[str, int], str] = field(default_factory=dict)


def github_error(error_type: str, message: str) -> GraphQLError:
    return GraphQLError(message, extensions={"type": error_type})


def license_info(spdx: str | None) -> dict[str, Any] | None:
    """The `license`/`licenseInfo` object, with GitHub's key/name for the SPDX ids the world uses."""
    if spdx is None:
        return None
    key = "other" if spdx == "NOASSERTION" else spdx.lower()
    return {"spdxId": spdx, "key": key, "name": LICENSE_NAMES.get(spdx, spdx)}


def _node_id(kind: str, key: str) -> str:
    return base64.b64encode(f"{kind}:{key}".encode()).decode()


def _actor(login: str, typename: str) -> dict[str, str]:
    shown = login.removesuffix("[bot]") if typename == "Bot" else login
    prefix = "apps/" if typename == "Bot" else ""
    return {"__typename": typename, "login": shown, "url": f"https://github.com/{prefix}{shown}"}


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _connection(items: list[Any], field_name: str, first: int | None, after: str | None) -> dict[str, Any]:
    """A GitHub connection page; `first` is mandatory and capped, as GitHub enforces."""
    if first is None:
        raise github_error(
            "MISSING_PAGINATION_BOUNDARIES",
            f"You must provide a `first` or `last` value to properly paginate the `{field_name}` connection.",
        )
    if first > MAX_FIRST:
        raise github_error(
            "EXCESSIVE_PAGINATION",
            f"Requesting {first} records on the `{field_name}` connection exceeds the `first` limit of 100 records.",
        )
    if first < 0:
        raise github_error("INVALID_ARGUMENTS", "`first` must be a non-negative integer.")
    start = 0
    if after is not None:
        try:
            start = int(base64.b64decode(after).decode().rsplit(":", 1)[1]) + 1
        except (ValueError, IndexError, UnicodeDecodeError) as exc:
            raise github_error("INVALID_CURSOR_ARGUMENTS", f"`{after}` does not appear to be a valid cursor.") from exc
    page = items[start : start + first]
    edges = [{"cursor": _cursor(start + i), "node": node} for i, node in enumerate(page)]
    return {
        "totalCount": len(items),
        "nodes": page,
        "edges": edges,
        "pageInfo": {
            "hasNextPage": start + len(page) < len(items),
            "hasPreviousPage": start > 0,
            "startCursor": edges[0]["cursor"] if edges else None,
            "endCursor": edges[-1]["cursor"] if edges else None,
        },
    }


@dataclass(frozen=True)
class _IssueRef:
    repo: Repo
    issue: Issue


def _ctx(info: GraphQLResolveInfo) -> QueryContext:
    return info.context


def _repository(_root: Any, info: GraphQLResolveInfo, owner: str, name: str, **_: Any) -> Repo:
    repo = _ctx(info).world.get_repo(f"{owner}/{name}")
    if repo is None:
        raise github_error("NOT_FOUND", f"Could not resolve to a Repository with the name '{owner}/{name}'.")
    return repo


def _pull_request(repo: Repo, info: GraphQLResolveInfo, number: int) -> PullRequest:
    ctx = _ctx(info)
    key = (repo.full_name, number)
    error_type = ctx.injected.get(key) or ctx.inject(*key)  # one injection fails every alias of the PR
    if error_type is not None:
        ctx.injected[key] = error_type
        raise github_error(
            error_type, _PARTIAL_MESSAGES.get(error_type, f"{error_type}: the request could not be completed.")
        )
    pull = ctx.world.get_pull(repo.full_name, number)
    if pull is None:
        raise github_error("NOT_FOUND", f"Could not resolve to a PullRequest with the number of {number}.")
    return pull


def _issue(repo: Repo, info: GraphQLResolveInfo, number: int) -> _IssueRef:
    issue = _ctx(info).world.get_issue(repo.full_name, number)
    if issue is None:
        raise github_error("NOT_FOUND", f"Could not resolve to an Issue with the number of {number}.")
    return _IssueRef(repo, issue)


def _closing(pull: PullRequest, info: GraphQLResolveInfo, first: int | None = None, after: str | None = None) -> Any:
    world = _ctx(info).world
    repo = world.get_repo(pull.repo)
    refs = [(repo, world.get_issue(pull.repo, n)) for n in pull.closing_issues]
    items = [_IssueRef(r, i) for r, i in refs if r is not None and i is not None]
    return _connection(items, "closingIssuesReferences", first, after)


def _merge_commit(pull: PullRequest, _info: GraphQLResolveInfo) -> dict[str, Any] | None:
    if not (pull.merged and pull.merge_commit_sha):
        return None
    message = f"Merge pull request #{pull.number}"
    return {
        "oid": pull.merge_commit_sha,
        "authoredDate": pull.merged_at,
        "committedDate": pull.merged_at,
        "message": message,
    }


def _commits(pull: PullRequest, _info: GraphQLResolveInfo, first: int | None = None, after: str | None = None) -> Any:
    """`PullRequest.commits`, oldest first; `commit` carries the git author and committer dates."""

    def node(c: PRCommit) -> dict[str, Any]:
        commit = {"oid": c.sha, "authoredDate": c.authored_at, "committedDate": c.committed_at, "message": c.message}
        pr_url = f"https://github.com/{pull.repo}/pull/{pull.number}"
        return {
            "id": _node_id("PullRequestCommit", f"{pull.repo}#{pull.number}:{c.sha}"),
            "commit": commit,
            "url": f"{pr_url}/commits/{c.sha}",
        }

    return _connection([node(c) for c in pull.commits[:250]], "commits", first, after)  # GitHub lists 250 at most


def _comments(ref: _IssueRef, _info: GraphQLResolveInfo, first: int | None = None, after: str | None = None) -> Any:
    """`Issue.comments`, oldest first; `lastEditedAt` is set only for an edited comment, as on GitHub."""
    issue_url = f"https://github.com/{ref.repo.full_name}/issues/{ref.issue.number}"
    nodes = [
        {
            "id": _node_id("IssueComment", f"{issue_url}#{i}"),
            "body": c.body,
            "createdAt": c.created_at,
            "updatedAt": c.updated_at,
            "lastEditedAt": c.updated_at if c.updated_at != c.created_at else None,
            "author": _actor(c.author_login, "User"),
            "url": f"{issue_url}#issuecomment-{i}",
        }
        for i, c in enumerate(ref.issue.comments)
    ]
    return _connection(nodes, "comments", first, after)


def _rate_limit(_root: Any, info: GraphQLResolveInfo, dryRun: bool = False) -> dict[str, Any]:
    return dict(_ctx(info).rate)


_R = Callable[..., Any]
# type name -> field name -> resolver; fields not listed fall back to the attribute of that name
RESOLVERS: dict[str, dict[str, _R]] = {
    "Query": {"repository": _repository, "rateLimit": _rate_limit},
    "Repository": {
        "id": lambda r, _i: _node_id("Repository", r.full_name),
        "nameWithOwner": lambda r, _i: r.full_name,
        "name": lambda r, _i: r.name,
        "url": lambda r, _i: f"https://github.com/{r.full_name}",
        "stargazerCount": lambda r, _i: r.stars,
        "primaryLanguage": lambda r, _i: {"name": r.language} if r.language else None,
        "isFork": lambda r, _i: r.is_fork,
        "isArchived": lambda r, _i: r.is_archived,
        "licenseInfo": lambda r, _i: license_info(r.license_spdx),
        "owner": lambda r, _i: _actor(r.owner, r.owner_type),
        "defaultBranchRef": lambda r, _i: {"name": r.default_branch},
        "pullRequest": _pull_request,
        "issue": _issue,
    },
    "PullRequest": {
        "id": lambda p, _i: _node_id("PullRequest", f"{p.repo}#{p.number}"),
        "body": lambda p, _i: p.body or "",
        "state": lambda p, _i: "MERGED" if p.merged else "CLOSED" if p.state == "closed" else "OPEN",
        "isDraft": lambda _p, _i: False,
        "mergedAt": lambda p, _i: p.merged_at if p.merged else None,
        "mergeCommit": _merge_commit,
        "baseRefName": lambda p, _i: p.base_ref,
        "baseRefOid": lambda p, _i: p.base_sha,
        "headRefName": lambda p, _i: p.head_ref,
        "headRefOid": lambda p, _i: p.head_sha,
        "createdAt": lambda p, _i: p.created_at,
        "changedFiles": lambda p, _i: p.changed_files,
        "author": lambda p, _i: _actor(p.author_login, "Bot" if p.author_is_bot else "User"),
        "repository": lambda p, i: _ctx(i).world.get_repo(p.repo),
        "files": lambda p, _i, first=None, after=None: _connection(p.files, "files", first, after),
        "closingIssuesReferences": _closing,
        "labels": lambda p, _i, first=None, after=None: _connection(
            [{"name": n} for n in p.labels], "labels", first, after
        ),
        "commits": _commits,
        "url": lambda p, _i: f"https://github.com/{p.repo}/pull/{p.number}",
    },
    "PullRequestChangedFile": {"changeType": lambda f, _i: f.change_type},
    "Issue": {
        "id": lambda r, _i: _node_id("Issue", f"{r.repo.full_name}#{r.issue.number}"),
        "number": lambda r, _i: r.issue.number,
        "title": lambda r, _i: r.issue.title,
        "body": lambda r, _i: r.issue.body or "",
        "url": lambda r, _i: f"https://github.com/{r.repo.full_name}/issues/{r.issue.number}",
        "repository": lambda r, _i: r.repo,
        "comments": _comments,
    },
}
