"""REST response shapes of the GitHub twin: what api.github.com sends for each GET it serves.

Copied from recorded api.github.com responses and trimmed of rarely-read URLs, so a client
parsing them meets GitHub's field names, nesting and quirks: `Link`-paginated file lists, the
diff media type (406 when too large), PRs that are also issues, a PR's commits and an issue's
comments (oldest first, as GitHub lists them), the `/rate_limit` document and the edge's 5xx
pages. `route` maps a GET to (status, payload, content type, extra headers).
"""

from __future__ import annotations

import base64
import hashlib
import math
from collections.abc import Callable
from typing import Any

from swe_forge_dagster.demo.twins.github_graphql_resolvers import SOMETHING_WENT_WRONG, license_info
from swe_forge_dagster.demo.twins.github_twin_http import JSON, Reply, json_reply
from swe_forge_dagster.demo.worlds.github_world import (
    ChangedFile,
    Comment,
    GithubWorld,
    Issue,
    PRCommit,
    PullRequest,
    Repo,
)

DOCS = "https://docs.github.com/rest"
RATE_DOCS = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
SECONDARY_DOCS = f"{RATE_DOCS}#about-secondary-rate-limits"
NOT_FOUND = {"message": "Not Found", "documentation_url": DOCS}
_SUPPORT = "If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000."
RATE_LIMITED_REST = f"API rate limit exceeded for user ID 1. {_SUPPORT}"
SECONDARY = f"You have exceeded a secondary rate limit. Please wait a few minutes before you try again. {_SUPPORT}"
NO_USER_AGENT = "Request forbidden by administrative rules. Please make sure your request has a User-Agent header."
_STATUS = {"ADDED": "added", "MODIFIED": "modified", "DELETED": "removed", "RENAMED": "renamed"}
_DIFF_TOO_LARGE = (300, 20_000)  # files, lines: GitHub answers 406 for diffs above either
Route = tuple[int, Any, str, dict[str, str]]


def _num(key: str) -> int:
    return int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) % 200_000_000


def _user(base: str, login: str, kind: str) -> dict[str, Any]:
    uid = _num(login)
    html = f"https://github.com/apps/{login.removesuffix('[bot]')}" if kind == "Bot" else f"https://github.com/{login}"
    return {
        "login": login,
        "id": uid,
        "node_id": base64.b64encode(f"04:{kind}{uid}".encode()).decode(),
        "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4",
        "gravatar_id": "",
        "url": f"{base}/users/{login}",
        "html_url": html,
        "type": kind,
        "site_admin": False,
    }


def _repo_json(base: str, repo: Repo) -> dict[str, Any]:
    api, html = f"{base}/repos/{repo.full_name}", f"https://github.com/{repo.full_name}"
    spdx = repo.license_spdx
    lic = license_info(spdx)
    return {
        "id": repo.id,
        "node_id": base64.b64encode(f"010:Repository{repo.id}".encode()).decode(),
        "name": repo.name,
        "full_name": repo.full_name,
        "private": False,
        "owner": _user(base, repo.owner, repo.owner_type),
        "html_url": html,
        "description": f"{repo.name}: a {repo.language or 'software'} project",
        "fork": repo.is_fork,
        "url": api,
        "pulls_url": f"{api}/pulls{{/number}}",
        "issues_url": f"{api}/issues{{/number}}",
        "created_at": "2019-03-01T12:00:00Z",
        "updated_at": "2025-10-01T12:00:00Z",
        "pushed_at": "2025-10-01T12:00:00Z",
        "clone_url": f"{html}.git",
        "homepage": None,
        "size": 1000 + repo.stars,
        "stargazers_count": repo.stars,
        "watchers_count": repo.stars,
        "language": repo.language,
        "has_issues": True,
        "forks_count": repo.stars // 7,
        "archived": repo.is_archived,
        "disabled": False,
        "open_issues_count": repo.stars // 20,
        "license": lic
        and {"key": lic["key"], "name": lic["name"], "spdx_id": spdx, "url": None, "node_id": "MDc6TGljZW5zZTA="},
        "topics": [],
        "visibility": "public",
        "forks": repo.stars // 7,
        "open_issues": repo.stars // 20,
        "watchers": repo.stars,
        "default_branch": repo.default_branch,
    }


def _pull_json(base: str, repo: Repo, pull: PullRequest) -> dict[str, Any]:
    api, html = f"{base}/repos/{repo.full_name}", f"https://github.com/{repo.full_name}"
    author = _user(base, pull.author_login, "Bot" if pull.author_is_bot else "User")
    owner = _user(base, repo.owner, repo.owner_type)
    repo_json = _repo_json(base, repo)
    closed_at = pull.merged_at if pull.merged else pull.created_at if pull.state == "closed" else None
    label_json = [
        {"id": _num(n), "name": n, "color": "ededed", "default": False, "description": None} for n in pull.labels
    ]

    def side(ref: str, sha: str, who: dict[str, Any]) -> dict[str, Any]:
        return {"label": f"{who['login']}:{ref}", "ref": ref, "sha": sha, "user": who, "repo": repo_json}

    return {
        "url": f"{api}/pulls/{pull.number}",
        "id": _num(f"{repo.full_name}#{pull.number}"),
        "node_id": base64.b64encode(f"011:PullRequest{pull.number}".encode()).decode(),
        "html_url": f"{html}/pull/{pull.number}",
        "diff_url": f"{html}/pull/{pull.number}.diff",
        "patch_url": f"{html}/pull/{pull.number}.patch",
        "issue_url": f"{api}/issues/{pull.number}",
        "number": pull.number,
        "state": "closed" if pull.merged else pull.state,
        "locked": False,
        "title": pull.title,
        "user": author,
        "body": pull.body or None,
        "created_at": pull.created_at,
        "updated_at": closed_at or pull.created_at,
        "closed_at": closed_at,
        "merged_at": pull.merged_at if pull.merged else None,
        "merge_commit_sha": pull.merge_commit_sha,
        "assignee": None,
        "assignees": [],
        "requested_reviewers": [],
        "labels": label_json,
        "milestone": None,
        "draft": False,
        "commits_url": f"{api}/pulls/{pull.number}/commits",
        "comments_url": f"{api}/issues/{pull.number}/comments",
        "statuses_url": f"{api}/statuses/{pull.head_sha}",
        "head": side(pull.head_ref, pull.head_sha, author),
        "base": side(pull.base_ref, pull.base_sha, owner),
        "_links": {"self": {"href": f"{api}/pulls/{pull.number}"}, "html": {"href": f"{html}/pull/{pull.number}"}},
        "author_association": "NONE" if pull.author_is_bot else "CONTRIBUTOR",
        "auto_merge": None,
        "merged": pull.merged,
        "mergeable": None,
        "merged_by": owner if pull.merged else None,
        "comments": 0,
        "review_comments": 0,
        "commits": len(pull.commits),
        "additions": pull.additions,
        "deletions": pull.deletions,
        "changed_files": pull.changed_files,
    }


def _file_json(base: str, repo: Repo, pull: PullRequest, f: ChangedFile) -> dict[str, Any]:
    blob = f"https://github.com/{repo.full_name}/blob/{pull.head_sha}/{f.path}"
    item: dict[str, Any] = {
        "sha": hashlib.sha1(f"{pull.head_sha}:{f.path}".encode()).hexdigest(),
        "filename": f.path,
        "status": _STATUS.get(f.change_type, "modified"),
        "additions": f.additions,
        "deletions": f.deletions,
        "changes": f.additions + f.deletions,
        "blob_url": blob,
        "raw_url": blob.replace("/blob/", "/raw/", 1),
        "contents_url": f"{base}/repos/{repo.full_name}/contents/{f.path}?ref={pull.head_sha}",
    }
    if f.patch:
        item["patch"] = f.patch
    if f.change_type == "RENAMED" and f.previous_path:
        item["previous_filename"] = f.previous_path
    return item


def _diff(pull: PullRequest) -> str:
    """`git diff` text as GitHub serves it for `Accept: application/vnd.github.diff`."""
    chunks = []
    for f in pull.files:
        old, sha = f.previous_path or f.path, hashlib.sha1(f.path.encode()).hexdigest()
        lines = [f"diff --git a/{old} b/{f.path}"]
        if f.change_type == "ADDED":
            lines += ["new file mode 100644", f"index 0000000..{sha[:7]}", "--- /dev/null", f"+++ b/{f.path}"]
        elif f.change_type == "DELETED":
            lines += ["deleted file mode 100644", f"index {sha[:7]}..0000000", f"--- a/{f.path}", "+++ /dev/null"]
        else:
            if f.change_type == "RENAMED":
                lines += ["similarity index 90%", f"rename from {old}", f"rename to {f.path}"]
            if f.patch:
                lines += [f"index {sha[7:14]}..{sha[:7]} 100644", f"--- a/{old}", f"+++ b/{f.path}"]
        chunks.append("\n".join(lines + ([f.patch] if f.patch else [])) + "\n")
    return "".join(chunks)


def _issue_json(base: str, repo: Repo, number: int, issue: Issue | None, pull: PullRequest | None) -> dict[str, Any]:
    api, html = f"{base}/repos/{repo.full_name}", f"https://github.com/{repo.full_name}"
    closed = (issue.state if issue else pull.state if pull else "open") == "closed"
    item: dict[str, Any] = {
        "url": f"{api}/issues/{number}",
        "repository_url": api,
        "html_url": f"{html}/{'pull' if pull else 'issues'}/{number}",
        "id": _num(f"{repo.full_name}!{number}"),
        "number": number,
        "title": issue.title if issue else pull.title if pull else "",
        "user": _user(base, issue.author_login if issue else pull.author_login if pull else "ghost", "User"),
        "labels": [],
        "state": "closed" if closed else "open",
        "locked": False,
        "assignee": None,
        "assignees": [],
        "comments": len(issue.comments) if issue else 0,
        "created_at": pull.created_at if pull else "2025-01-01T00:00:00Z",
        "closed_at": (pull.merged_at or pull.created_at)
        if pull and closed
        else "2025-01-02T00:00:00Z"
        if closed
        else None,
        "author_association": "CONTRIBUTOR",
        "body": (issue.body if issue else pull.body if pull else "") or None,
        "state_reason": "completed" if closed else None,
    }
    if pull is not None:
        item["pull_request"] = {
            "url": f"{api}/pulls/{number}",
            "html_url": item["html_url"],
            "merged_at": pull.merged_at,
        }
    return item


def _comment_json(base: str, repo: Repo, number: int, index: int, comment: Comment) -> dict[str, Any]:
    """An item of `/issues/{n}/comments`, shaped like the recorded github3.py responses."""
    cid = _num(f"{repo.full_name}!{number}~{index}")
    api = f"{base}/repos/{repo.full_name}"
    return {
        "url": f"{api}/issues/comments/{cid}",
        "html_url": f"https://github.com/{repo.full_name}/issues/{number}#issuecomment-{cid}",
        "issue_url": f"{api}/issues/{number}",
        "id": cid,
        "node_id": base64.b64encode(f"012:IssueComment{cid}".encode()).decode(),
        "user": _user(base, comment.author_login, "User"),
        "created_at": comment.created_at,
        "updated_at": comment.updated_at,
        "author_association": "NONE",
        "body": comment.body,
        "performed_via_github_app": None,
    }


def _commit_json(base: str, repo: Repo, commit: PRCommit) -> dict[str, Any]:
    """An item of `/pulls/{n}/commits`: the git author/committer dates live under `commit`."""
    api, who = f"{base}/repos/{repo.full_name}", {"name": "Octo Cat", "email": "octocat@example.invalid"}
    tree = hashlib.sha1(f"tree:{commit.sha}".encode()).hexdigest()
    return {
        "sha": commit.sha,
        "node_id": base64.b64encode(f"04:Commit{commit.sha}".encode()).decode(),
        "commit": {
            "author": {**who, "date": commit.authored_at},
            "committer": {**who, "date": commit.committed_at},
            "message": commit.message,
            "tree": {"sha": tree, "url": f"{api}/git/trees/{tree}"},
            "url": f"{api}/git/commits/{commit.sha}",
            "comment_count": 0,
            "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None},
        },
        "url": f"{api}/commits/{commit.sha}",
        "html_url": f"https://github.com/{repo.full_name}/commit/{commit.sha}",
        "author": _user(base, "octocat", "User"),
        "committer": _user(base, "octocat", "User"),
        "parents": [],
    }


def _page(base: str, path: str, query: dict[str, list[str]], items: list[Any], to_json: Callable[[Any], Any]) -> Route:
    """One page of a REST list with GitHub's `Link` header (prev, next, last, first)."""

    def arg(name: str, default: int) -> int:
        value = (query.get(name) or [""])[0]
        return int(value) if value.isdigit() and int(value) > 0 else default

    per_page, page = min(arg("per_page", 30), 100), arg("page", 1)
    last = max(1, math.ceil(len(items) / per_page))
    payload = [to_json(item) for item in items[(page - 1) * per_page : page * per_page]]
    links = [(page - 1, "prev")] if page > 1 else []
    links += [(page + 1, "next"), (last, "last")] if page < last else []
    links += [(1, "first")] if page > 1 else []
    header = ", ".join(f'<{base}{path}?per_page={per_page}&page={n}>; rel="{rel}"' for n, rel in links)
    return 200, payload, JSON, {"link": header} if header else {}


def route(world: GithubWorld, base: str, path: str, query: dict[str, list[str]], accept: str) -> Route:
    """(status, JSON payload or bytes, content type, extra headers) for a REST GET."""
    parts = path.strip("/").split("/")
    repo = world.get_repo(f"{parts[1]}/{parts[2]}") if len(parts) >= 3 and parts[0] == "repos" else None
    if repo is None:
        return 404, NOT_FOUND, JSON, {}
    rest = parts[3:]
    if not rest:
        return 200, _repo_json(base, repo), JSON, {}
    number = int(rest[1]) if len(rest) >= 2 and rest[1].isdigit() else None
    pull = world.get_pull(repo.full_name, number) if number is not None else None
    if rest[0] == "pulls" and pull is not None and len(rest) == 2:
        if "vnd.github.diff" in accept or "vnd.github.v3.diff" in accept:
            if pull.changed_files > _DIFF_TOO_LARGE[0] or pull.additions + pull.deletions > _DIFF_TOO_LARGE[1]:
                message = "Sorry, the diff exceeded the maximum number of files (300). Consider using 'List pull "
                message += "requests files' API or locally cloning the repository instead."
                errors = [{"resource": "PullRequest", "field": "diff", "code": "too_large"}]
                return 406, {"message": message, "errors": errors, "documentation_url": DOCS}, JSON, {}
            return 200, _diff(pull).encode(), "application/vnd.github.diff; charset=utf-8", {}
        return 200, _pull_json(base, repo, pull), JSON, {}
    if rest[0] == "pulls" and pull is not None and rest[2:] == ["files"]:  # GitHub lists at most 3000 files
        return _page(base, path, query, pull.files[:3000], lambda f: _file_json(base, repo, pull, f))
    if rest[0] == "pulls" and pull is not None and rest[2:] == ["commits"]:  # and at most 250 commits
        return _page(base, path, query, pull.commits[:250], lambda c: _commit_json(base, repo, c))
    issue = world.get_issue(repo.full_name, number) if rest[0] == "issues" and number is not None else None
    if number is None or (issue is None and pull is None) or rest[0] != "issues":
        return 404, NOT_FOUND, JSON, {}
    if len(rest) == 2:
        return 200, _issue_json(base, repo, number, issue, pull), JSON, {}
    if rest[2:] == ["comments"]:  # a PR's own thread is served empty
        comments = list(enumerate(issue.comments if issue else []))
        return _page(base, path, query, comments, lambda item: _comment_json(base, repo, number, *item))
    return 404, NOT_FOUND, JSON, {}


def rate_limit_json(buckets: dict[str, dict[str, int]]) -> dict[str, Any]:
    reset = buckets["core"]["reset"]
    search = {"limit": 30, "used": 0, "remaining": 30, "reset": reset}
    return {
        "resources": {**buckets, "search": search, "code_search": {**search, "limit": 10, "remaining": 10}},
        "rate": buckets["core"],
    }


def server_error(status: int, graphql: bool) -> Reply:
    """What GitHub's edge sends on 5xx: JSON for GraphQL and 500/503, an HTML page for 502/504."""
    if graphql:
        return json_reply(status, {"data": None, "errors": [{"message": SOMETHING_WENT_WRONG}]})
    if status in (502, 504):
        page = "<!DOCTYPE html>\n<html><head><title>Unicorn! &middot; GitHub</title></head><body>"
        page += f"<h1>{status}</h1><p>We had issues producing the response to your request.</p></body></html>\n"
        return Reply(status, page.encode(), "text/html; charset=utf-8")
    return json_reply(
        status, {"message": "Server Error" if status == 500 else "Service Unavailable", "documentation_url": DOCS}
    )
