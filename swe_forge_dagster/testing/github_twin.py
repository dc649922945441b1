"""A loopback twin of api.github.com (REST + GraphQL) serving a `GithubWorld`, with scripted faults.

Real client code runs against it unchanged but for the base URL (`twin.url` for
`https://api.github.com`, `{twin.url}/graphql`), so the things that make GitHub hard are
reproduced rather than mocked: Bearer/token auth, primary rate limits per resource with
`x-ratelimit-*` headers and automatic refill at reset, secondary limits with `Retry-After`,
ETag/`If-None-Match` 304s that cost nothing, `Link`-paginated file lists, the diff media type,
5xx bursts, GraphQL cost accounting, NOT_FOUND and partial errors next to intact data.

    with GithubTwin(world) as twin:
        twin.exhaust_rate_limit("graphql", reset_in=0.5)
        ...  # the client under test talks to twin.url
        assert twin.count("/graphql") == 2

`counted` on a `RequestRecord` means the request consumed primary rate limit (authenticated,
served, not a 304, not `/rate_limit`); 401s, 403s (primary/secondary), injected 5xx and invalid
GraphQL documents do not. `resource` is the bucket the path belongs to ("none" for /rate_limit).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit

from swe_forge_dagster.testing.github_graphql_schema import (
    SOMETHING_WENT_WRONG,
    QueryCost,
    handle_graphql_request,
    license_info,
)
from swe_forge_dagster.testing.github_world import ChangedFile, GithubWorld, Issue, PullRequest, Repo

HOST = "127.0.0.1"
WINDOW_SECONDS = 3600.0  # GitHub's primary rate-limit window
JSON = "application/json; charset=utf-8"


@dataclass(frozen=True)
class RequestRecord:
    """One request as the twin saw and answered it (for call-count and header assertions)."""

    method: str
    path: str
    query: str
    status: int
    resource: str  # "core" | "graphql" | "none"
    counted: bool
    authorization: str | None = None
    accept: str | None = None
    user_agent: str | None = None


@dataclass
class _Bucket:
    limit: int
    remaining: int
    reset_at: float

    def refresh(self, now: float) -> None:
        if now >= self.reset_at:
            self.remaining, self.reset_at = self.limit, now + WINDOW_SECONDS

    def headers(self, resource: str) -> dict[str, str]:
        return {
            "x-ratelimit-limit": str(self.limit),
            "x-ratelimit-remaining": str(self.remaining),
            "x-ratelimit-used": str(self.limit - self.remaining),
            "x-ratelimit-reset": str(math.ceil(self.reset_at)),
            "x-ratelimit-resource": resource,
        }

    def as_json(self) -> dict[str, int]:
        used = self.limit - self.remaining
        return {"limit": self.limit, "used": used, "remaining": self.remaining, "reset": math.ceil(self.reset_at)}


@dataclass
class _Reply:
    status: int
    body: bytes = b""
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)
    counted: bool = False


def _json(status: int, payload: Any, **headers: str) -> _Reply:
    return _Reply(status, json.dumps(payload, separators=(",", ":")).encode(), headers=headers)


# --- REST shapes (copied from recorded api.github.com responses, trimmed of rarely-read URLs) ------

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
_ROUTE = tuple[int, Any, str, dict[str, str]]


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
        "commits": 1,
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
        "comments": 0,
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


def _files_page(base: str, path: str, repo: Repo, pull: PullRequest, query: dict[str, list[str]]) -> _ROUTE:
    """One page of `/pulls/{n}/files` with GitHub's `Link` header (prev, next, last, first)."""

    def arg(name: str, default: int) -> int:
        value = (query.get(name) or [""])[0]
        return int(value) if value.isdigit() and int(value) > 0 else default

    per_page, page = min(arg("per_page", 30), 100), arg("page", 1)
    files = pull.files[:3000]  # GitHub lists at most 3000 files
    last = max(1, math.ceil(len(files) / per_page))
    items = [_file_json(base, repo, pull, f) for f in files[(page - 1) * per_page : page * per_page]]
    links = [(page - 1, "prev")] if page > 1 else []
    links += [(page + 1, "next"), (last, "last")] if page < last else []
    links += [(1, "first")] if page > 1 else []
    header = ", ".join(f'<{base}{path}?per_page={per_page}&page={n}>; rel="{rel}"' for n, rel in links)
    return 200, items, JSON, {"link": header} if header else {}


def _route(world: GithubWorld, base: str, path: str, query: dict[str, list[str]], accept: str) -> _ROUTE:
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
    if rest[0] == "pulls" and pull is not None and rest[2:] == ["files"]:
        return _files_page(base, path, repo, pull, query)
    if rest[0] == "issues" and len(rest) == 2 and number is not None:
        issue = world.get_issue(repo.full_name, number)
        if issue is not None or pull is not None:
            return 200, _issue_json(base, repo, number, issue, pull), JSON, {}
    return 404, NOT_FOUND, JSON, {}


def _rate_limit_json(buckets: dict[str, dict[str, int]]) -> dict[str, Any]:
    reset = buckets["core"]["reset"]
    search = {"limit": 30, "used": 0, "remaining": 30, "reset": reset}
    return {
        "resources": {**buckets, "search": search, "code_search": {**search, "limit": 10, "remaining": 10}},
        "rate": buckets["core"],
    }


def _server_error(status: int, graphql: bool) -> _Reply:
    """What GitHub's edge sends on 5xx: JSON for GraphQL and 500/503, an HTML page for 502/504."""
    if graphql:
        return _json(status, {"data": None, "errors": [{"message": SOMETHING_WENT_WRONG}]})
    if status in (502, 504):
        page = "<!DOCTYPE html>\n<html><head><title>Unicorn! &middot; GitHub</title></head><body>"
        page += f"<h1>{status}</h1><p>We had issues producing the response to your request.</p></body></html>\n"
        return _Reply(status, page.encode(), "text/html; charset=utf-8")
    return _json(
        status, {"message": "Server Error" if status == 500 else "Service Unavailable", "documentation_url": DOCS}
    )


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # never wait on handlers still sleeping for a client that left
    twin: GithubTwin

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client hanging up mid-reply (timeouts in tests) is normal, not a traceback on stderr."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like api.github.com; every reply has a length
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall
    server: _Server

    def version_string(self) -> str:
        return "GitHub.com"

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request stderr logging; the twin keeps its own records."""

    def do_GET(self) -> None:
        self.server.twin._serve(self, "GET")

    def do_POST(self) -> None:
        self.server.twin._serve(self, "POST")


class GithubTwin:
    """Serves `world` on 127.0.0.1 as api.github.com would; every setter is thread-safe and live."""

    def __init__(
        self,
        world: GithubWorld,
        token: str | None = "test-token",
        rate_limit: int = 5000,
        graphql_rate_limit: int = 5000,
    ) -> None:
        self.world = world
        self.token = token
        self.url = ""
        self.requests: list[RequestRecord] = []
        self.max_in_flight = 0
        self._lock = threading.Lock()
        now = time.time()
        self._buckets = {
            "core": _Bucket(rate_limit, rate_limit, now + WINDOW_SECONDS),
            "graphql": _Bucket(graphql_rate_limit, graphql_rate_limit, now + WINDOW_SECONDS),
        }
        self._in_flight = 0
        self._delay = 0.0
        self._failures: list[list[Any]] = []  # [status, times_left, path_prefix]
        self._secondary = [0, 1]  # [times_left, retry_after]
        self._partials: dict[tuple[str, int], list[Any]] = {}  # (repo lower, number) -> [type, times_left]
        self._request_seq = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------
    def start(self) -> GithubTwin:
        server = _Server((HOST, 0), _Handler)
        server.twin = self
        self._server = server
        self.url = f"http://{HOST}:{server.server_address[1]}"
        self._thread = threading.Thread(target=server.serve_forever, args=(0.05,), name="github-twin", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> GithubTwin:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    # --- faults ----------------------------------------------------------------------------
    def exhaust_rate_limit(self, resource: str = "core", reset_in: float = 60.0) -> None:
        """Spend the bucket; it refills to its limit by itself once `reset_in` seconds have passed."""
        with self._lock:
            bucket = self._buckets[resource]
            bucket.remaining, bucket.reset_at = 0, time.time() + reset_in

    def set_rate_limit_remaining(self, resource: str, remaining: int) -> None:
        """Put a bucket part-way down, to test clients that slow down before hitting zero."""
        with self._lock:
            self._buckets[resource].remaining = remaining

    def secondary_limit(self, times: int, retry_after: int = 1) -> None:
        """The next `times` requests (any path) get GitHub's secondary-rate-limit 403 + Retry-After."""
        with self._lock:
            self._secondary = [times, retry_after]

    def fail_next(self, status: int = 502, times: int = 1, path_prefix: str | None = None) -> None:
        """The next `times` requests whose path starts with `path_prefix` (any if None) get `status`."""
        with self._lock:
            self._failures.append([status, times, path_prefix])

    def clear_faults(self) -> None:
        """Cancel every queued fault (failures, secondary limits, partial errors, delay)."""
        with self._lock:
            self._failures.clear()
            self._secondary = [0, 1]
            self._partials.clear()
            self._delay = 0.0

    def graphql_partial_error(
        self, repo: str, number: int, error_type: str = "SERVICE_UNAVAILABLE", times: int = 1
    ) -> None:
        """The next `times` GraphQL executions resolving that PR null it with an error of this type."""
        with self._lock:
            self._partials[(repo.lower(), number)] = [error_type, times]

    def delay(self, seconds: float) -> None:
        """Latency added to every request, so concurrency (`max_in_flight`) becomes observable."""
        with self._lock:
            self._delay = seconds

    # --- counters --------------------------------------------------------------------------
    def count(self, path_prefix: str | None = None, method: str | None = None) -> int:
        with self._lock:
            return sum(
                1
                for r in self.requests
                if (path_prefix is None or r.path.startswith(path_prefix)) and (method is None or r.method == method)
            )

    def counted_requests(self) -> list[RequestRecord]:
        with self._lock:
            return [r for r in self.requests if r.counted]

    def graphql_requests(self) -> list[RequestRecord]:
        with self._lock:
            return [r for r in self.requests if r.path == "/graphql"]

    def reset_counters(self) -> None:
        with self._lock:
            self.requests.clear()
            self.max_in_flight = self._in_flight

    @property
    def authorizations(self) -> list[str | None]:
        """Distinct Authorization header values received, in first-seen order."""
        with self._lock:
            return list(dict.fromkeys(r.authorization for r in self.requests))

    def rate_limit_remaining(self, resource: str = "core") -> int:
        with self._lock:
            bucket = self._buckets[resource]
            bucket.refresh(time.time())
            return bucket.remaining

    # --- request handling ------------------------------------------------------------------
    def _serve(self, handler: _Handler, method: str) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self._request_seq += 1
            request_id = f"{self._request_seq:04X}:{self._request_seq * 7919 % 65536:04X}"
            delay = self._delay
        try:
            length = int(handler.headers.get("Content-Length") or 0)
            raw = handler.rfile.read(length) if length else b""
            if delay:
                time.sleep(delay)
            split = urlsplit(handler.path)
            path = split.path.rstrip("/") or "/"
            resource = "graphql" if path == "/graphql" else "core"
            try:
                reply = self._reply(handler, method, path, parse_qs(split.query), raw, resource)
            except Exception as exc:  # a twin bug: say so loudly instead of hanging up on the client
                traceback.print_exc()
                reply = _json(500, {"message": f"github twin error: {exc!r}", "documentation_url": DOCS})
            with self._lock:
                bucket = self._buckets[resource]
                bucket.refresh(time.time())
                headers = {**bucket.headers(resource), **reply.headers}
                record = RequestRecord(
                    method,
                    path,
                    split.query,
                    reply.status,
                    "none" if path == "/rate_limit" else resource,
                    reply.counted,
                    handler.headers.get("Authorization"),
                    handler.headers.get("Accept"),
                    handler.headers.get("User-Agent"),
                )
                self.requests.append(record)
            handler.send_response(reply.status)
            for name, value in {
                "content-type": reply.content_type,
                "x-github-media-type": "github.v3; format=json",
                "x-github-request-id": request_id,
                **headers,
            }.items():
                handler.send_header(name, value)
            if reply.status != 304:
                handler.send_header("content-length", str(len(reply.body)))
            handler.end_headers()
            if reply.status != 304 and method != "HEAD":
                handler.wfile.write(reply.body)
        finally:
            with self._lock:
                self._in_flight -= 1

    def _pre_checks(self, handler: _Handler, path: str) -> _Reply | None:
        """Faults, auth and the secondary limit, in the order GitHub's edge applies them."""
        with self._lock:
            failure = next((f for f in self._failures if f[2] is None or path.startswith(f[2])), None)
            if failure is not None:
                failure[1] -= 1
                if failure[1] <= 0:
                    self._failures.remove(failure)
        if failure is not None:
            return _server_error(failure[0], graphql=path == "/graphql")
        if self.token is not None:
            header = handler.headers.get("Authorization") or ""
            scheme, _, value = header.partition(" ")
            if scheme.lower() not in ("bearer", "token") or value.strip() != self.token:
                message = "Bad credentials"
                if not header and path == "/graphql":
                    message = "This endpoint requires you to be authenticated."
                return _json(401, {"message": message, "documentation_url": DOCS})
        if not handler.headers.get("User-Agent"):
            return _json(403, {"message": NO_USER_AGENT, "documentation_url": DOCS})
        with self._lock:
            if self._secondary[0] > 0:
                self._secondary[0] -= 1
                retry = str(self._secondary[1])
                return _json(403, {"message": SECONDARY, "documentation_url": SECONDARY_DOCS}, **{"retry-after": retry})
        return None

    def _reply(
        self, handler: _Handler, method: str, path: str, query: dict[str, list[str]], raw: bytes, resource: str
    ) -> _Reply:
        early = self._pre_checks(handler, path)
        if early is not None:
            return early
        if path == "/rate_limit" and method == "GET":
            with self._lock:
                now = time.time()
                for bucket in self._buckets.values():
                    bucket.refresh(now)
                payload = _rate_limit_json({name: b.as_json() for name, b in self._buckets.items()})
            return self._finish_get(handler, _json(200, payload))
        if path == "/graphql":
            return self._graphql(raw) if method == "POST" else _json(404, NOT_FOUND)
        with self._lock:
            bucket = self._buckets["core"]
            bucket.refresh(time.time())
            if bucket.remaining <= 0:
                return _json(403, {"message": RATE_LIMITED_REST, "documentation_url": RATE_DOCS})
            bucket.remaining -= 1  # reserved now so concurrent requests never overspend; refunded on 304
        status, payload, content_type, extra = (404, NOT_FOUND, JSON, {})
        if method == "GET":
            status, payload, content_type, extra = _route(
                self.world, self.url, path, query, handler.headers.get("Accept") or ""
            )
        body = payload if isinstance(payload, bytes) else json.dumps(payload, separators=(",", ":")).encode()
        reply = self._finish_get(handler, _Reply(status, body, content_type, extra, counted=True))
        if reply.status == 304:
            with self._lock:
                self._buckets["core"].remaining += 1
            reply.counted = False
        return reply

    @staticmethod
    def _finish_get(handler: _Handler, reply: _Reply) -> _Reply:
        """Strong ETag on every 200 GET; a matching If-None-Match turns it into a bodiless 304."""
        if reply.status != 200:
            return reply
        etag = f'"{hashlib.sha256(reply.body).hexdigest()}"'
        reply.headers = {**reply.headers, "etag": etag, "cache-control": "private, max-age=60, s-maxage=60"}
        wanted = {t.strip().removeprefix("W/") for t in (handler.headers.get("If-None-Match") or "").split(",")}
        if etag in wanted or "*" in wanted:
            return _Reply(304, b"", reply.content_type, reply.headers, counted=False)
        return reply

    def _take_partial(self, repo: str, number: int) -> str | None:
        with self._lock:
            entry = self._partials.get((repo.lower(), number))
            if entry is None or entry[1] <= 0:
                return None
            entry[1] -= 1
            return str(entry[0])

    def _graphql(self, raw: bytes) -> _Reply:
        status, payload, charged = handle_graphql_request(raw, self.world, self._charge_graphql, self._take_partial)
        reply = _json(status, payload)
        reply.counted = charged
        return reply

    def _charge_graphql(self, cost: QueryCost) -> dict[str, Any] | None:
        """Take a query's cost from the graphql bucket; None (nothing taken) when it does not fit."""
        with self._lock:
            bucket = self._buckets["graphql"]
            bucket.refresh(time.time())
            if bucket.remaining < cost.cost:
                return None
            if not cost.dry_run:
                bucket.remaining -= cost.cost
            reset_at = datetime.fromtimestamp(math.ceil(bucket.reset_at), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            used = bucket.limit - bucket.remaining
            return {"limit": bucket.limit, "remaining": bucket.remaining, "used": used, "resetAt": reset_at}
