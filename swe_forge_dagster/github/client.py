"""An httpx client for GitHub that survives every way the API says no, and never leaks the token.

- Primary rate limits (`x-ratelimit-remaining: 0`, GraphQL `RATE_LIMITED`): wait for the reset
  when it is near, else fail with "retry after HH:MM UTC".
- Secondary limits (403/429 "secondary rate limit", `Retry-After`): wait and retry.
- 5xx and network errors: exponential backoff, bounded (every wait between attempts is `common.retry`'s).
- 401: fail at once with a message naming GITHUB_TOKEN (never its value).
- REST GETs are conditional on the stored ETag: a 304 costs no rate limit.
- At most `max_in_flight` requests at once in this process, and (with `slots`) machine-wide.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import httpx

from swe_forge_dagster.common.retry import Backoff
from swe_forge_dagster.common.slots import RequestSlots
from swe_forge_dagster.github.store import CachedResponse, ResponseStore

JSON = "application/vnd.github+json"
DIFF = "application/vnd.github.diff"


class GitHubError(Exception):
    """GitHub refused or failed a request in a way retrying will not fix."""


class GitHubAuthError(GitHubError):
    """The token was rejected: nothing will work until GITHUB_TOKEN is fixed."""


class GitHubRateLimitError(GitHubError):
    """The rate limit is exhausted and its reset is further away than we may wait."""


class GitHubUnavailableError(GitHubError):
    """5xx or network errors persisted through every retry."""


class GitHubNotFoundError(GitHubError):
    """404: the repository, PR or issue does not exist (or is not visible to the token)."""


@dataclass
class ClientStats:
    """Requests spent, for metadata and request budgets."""

    sent: int = 0
    counted: int = 0  # consumed rate limit (everything but 304s)
    not_modified: int = 0
    graphql_requests: int = 0
    graphql_cost: int = 0
    retries: int = 0
    waited_seconds: float = 0.0
    remaining: dict[str, int] = field(default_factory=dict)
    reset: dict[str, float] = field(default_factory=dict)


def _clock_text(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%H:%M UTC")


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    return str(body.get("message", "")) if isinstance(body, dict) else ""


class GitHubClient:
    def __init__(
        self,
        api_url: str,
        token: str | None,
        *,
        store: ResponseStore | None = None,
        slots: RequestSlots | None = None,
        max_in_flight: int = 3,
        max_rate_limit_wait: float = 900.0,
        max_attempts: int = 6,
        backoff_initial: float = 1.0,
        backoff_max: float = 60.0,
        timeout: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.api_url = api_url.rstrip("/")
        self.store = store
        self.slots = slots
        self.max_rate_limit_wait = max_rate_limit_wait
        self.max_attempts = max_attempts
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.stats = ClientStats()
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()
        self._in_flight = threading.BoundedSemaphore(max_in_flight)
        self._exhausted_until: dict[str, float] = {}
        headers = {"Accept": JSON, "User-Agent": "swe-forge-dagster", "X-GitHub-Api-Version": "2022-11-28"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._http = httpx.Client(headers=headers, timeout=timeout, follow_redirects=True)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> GitHubClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public calls ---------------------------------------------------------------------
    def graphql(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """POST /graphql; waits out RATE_LIMITED answers like any primary limit."""
        for _ in range(self.max_attempts):
            response = self._request(
                "POST", f"{self.api_url}/graphql", resource="graphql", json={"query": query, "variables": variables}
            )
            if response.status_code >= 400 and response.status_code != 403:
                raise GitHubError(
                    f"POST /graphql: {response.status_code} {_message(response) or response.reason_phrase}"
                )
            try:
                payload = response.json()
            except ValueError as exc:
                raise GitHubError(
                    f"POST /graphql answered {response.status_code} with no JSON: is SWE_FORGE_GITHUB_API_URL "
                    f"({self.api_url}) a GitHub API root?"
                ) from exc
            if response.status_code == 403 and payload.get("data") is None and not payload.get("errors"):
                raise GitHubError(f"POST /graphql: 403 {_message(response)}")
            errors = payload.get("errors") or []
            if payload.get("data") is None and any(e.get("type") == "RATE_LIMITED" for e in errors):
                reset = float(response.headers.get("x-ratelimit-reset") or self._clock() + 60)
                self._wait_for_reset("graphql", reset)
                continue
            cost = ((payload.get("data") or {}).get("rateLimit") or {}).get("cost")
            with self._lock:
                self.stats.graphql_requests += 1
                self.stats.graphql_cost += int(cost or 0)
            return payload
        raise GitHubRateLimitError(f"GraphQL still rate limited after {self.max_attempts} attempts")

    def rest(self, path: str, params: dict[str, Any] | None = None, accept: str = JSON) -> httpx.Response:
        """A conditional GET: answered from the store when GitHub says 304 Not Modified."""
        url = f"{self.api_url}/{path.lstrip('/')}"
        if params:
            url += "?" + urlencode(sorted(params.items()))
        key = f"{accept} {url}"
        cached = self.store.get_response(key) if self.store else None
        headers = {"Accept": accept}
        if cached and cached.etag:
            headers["If-None-Match"] = cached.etag
        response = self._request("GET", url, resource="core", headers=headers)
        if response.status_code == 304 and cached:
            return httpx.Response(cached.status, headers=cached.headers, content=cached.body, request=response.request)
        if response.status_code == 404:
            raise GitHubNotFoundError(f"GET {path}: 404 Not Found")
        if response.status_code >= 400:
            raise GitHubError(f"GET {path}: {response.status_code} {_message(response)}")
        if self.store and response.headers.get("etag"):
            kept = {k: v for k, v in response.headers.items() if k.lower() in ("etag", "link", "content-type")}
            self.store.put_response(
                key, CachedResponse(response.headers["etag"], response.status_code, kept, response.content)
            )
        return response

    def rest_json(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self.rest(path, params).json()

    def rest_pages(self, path: str, per_page: int = 100, max_pages: int = 30) -> list[Any]:
        """All items of a paginated list, following `Link: rel="next"` (capped at `max_pages`)."""
        items: list[Any] = []
        for page in range(1, max_pages + 1):
            response = self.rest(path, {"per_page": per_page, "page": page})
            items.extend(response.json())
            if "next" not in response.links:
                break
        return items

    def diff(self, repo: str, number: int) -> str:
        """The PR's unified diff (the `.diff` media type GraphQL lacks)."""
        return self.rest(f"repos/{repo}/pulls/{number}", accept=DIFF).text

    # -- the request loop -----------------------------------------------------------------
    def _request(self, method: str, url: str, *, resource: str, **kwargs: Any) -> httpx.Response:
        """Send until GitHub answers something final; the attempts and waits are the shared `Backoff`'s."""
        what = f"{method} {url.removeprefix(self.api_url)}"
        retrying = self._backoff().retrying(
            _Again, sleep=self._pause, server_wait=_Again.wait_of, cap_server_wait=False, after_wait=self._forget_waited
        )
        try:
            for attempt in retrying:
                with attempt:
                    return self._send(method, url, resource, what, attempt.retry_state.attempt_number, kwargs)
        except _Again as exc:
            raise exc.give_up from exc.__cause__
        raise AssertionError("unreachable")  # pragma: no cover (tenacity returns or raises)

    def _send(
        self, method: str, url: str, resource: str, what: str, attempt: int, kwargs: dict[str, Any]
    ) -> httpx.Response:
        """One attempt: the response, a GitHubError retrying will not fix, or `_Again` to try once more."""
        self._respect_known_limit(resource)
        try:
            with self._in_flight, self.slots.hold() if self.slots else nullcontext():
                response = self._http.request(method, url, **kwargs)
        except httpx.TransportError as exc:
            problem = f"{what}: {type(exc).__name__}: {exc}"
            raise _Again(GitHubUnavailableError(f"{problem} (gave up after {attempt} attempts)")) from exc
        self._note(response, resource)
        status = response.status_code
        if status == 401:
            raise GitHubAuthError(
                f"{what}: GitHub rejected the token (401 {_message(response) or 'Bad credentials'}): "
                "check GITHUB_TOKEN (it must be a valid token with public repository read access)"
            )
        if status in (403, 429):
            self._check_rate_limit(response, resource, attempt, what)
        if status >= 500:
            problem = f"{what}: {status} {response.reason_phrase}"
            raise _Again(GitHubUnavailableError(f"{problem} (gave up after {attempt} attempts)"))
        return response

    def _check_rate_limit(self, response: httpx.Response, resource: str, attempt: int, what: str) -> None:
        """Raise `_Again` with the wait for a 403/429 that is a rate limit (or fail at once); pass a plain 403.

        A wait longer than `max_rate_limit_wait` fails now with the time to come back, but only
        when another attempt is left: on the last one there is no wait to refuse.
        """
        message = _message(response)
        retry_after = response.headers.get("retry-after")
        last = attempt >= self.max_attempts
        if "secondary rate limit" in message.lower() or retry_after is not None:
            give_up = GitHubRateLimitError(f"{what}: secondary rate limit persisted through {attempt} attempts")
            wait = float(retry_after) if retry_after and retry_after.isdigit() else self._backoff().delay(attempt)
            if not last and wait > self.max_rate_limit_wait:  # retrying early only prolongs a secondary limit
                until = self._clock() + wait
                raise GitHubRateLimitError(
                    f"{what}: GitHub secondary rate limit, Retry-After {wait:.0f}s: retry after {_clock_text(until)}"
                )
            raise _Again(give_up, wait)
        if response.headers.get("x-ratelimit-remaining") == "0":
            give_up = GitHubRateLimitError(f"{what}: rate limited through {attempt} attempts")
            if last:
                raise _Again(give_up)
            reset = float(response.headers.get("x-ratelimit-reset") or self._clock() + 60)
            raise _Again(give_up, self._reset_wait(resource, reset), waits_out=resource)

    def _note(self, response: httpx.Response, resource: str) -> None:
        headers = response.headers
        with self._lock:
            self.stats.sent += 1
            if response.status_code == 304:
                self.stats.not_modified += 1
            else:
                self.stats.counted += 1
            if "x-ratelimit-remaining" in headers:
                bucket = headers.get("x-ratelimit-resource", resource)
                remaining = int(headers["x-ratelimit-remaining"])
                self.stats.remaining[bucket] = remaining
                self.stats.reset[bucket] = float(headers.get("x-ratelimit-reset") or 0)
                if remaining == 0:
                    self._exhausted_until[bucket] = self.stats.reset[bucket]
                else:
                    self._exhausted_until.pop(bucket, None)

    def _respect_known_limit(self, resource: str) -> None:
        with self._lock:
            until = self._exhausted_until.get(resource)
        if until is not None and until > self._clock():
            self._wait_for_reset(resource, until)

    def _wait_for_reset(self, resource: str, reset_epoch: float) -> None:
        self._pause(self._reset_wait(resource, reset_epoch))
        self._forget_limit(resource)

    def _reset_wait(self, resource: str, reset_epoch: float) -> float:
        """Seconds until `resource` resets (plus one for clock skew), or the error when that is too long."""
        wait = max(0.0, reset_epoch - self._clock()) + 1.0
        if wait > self.max_rate_limit_wait:
            raise GitHubRateLimitError(
                f"GitHub {resource} rate limit exhausted for this token until {_clock_text(reset_epoch)}: "
                f"retry after {_clock_text(reset_epoch + 60)} (waits over {self.max_rate_limit_wait:.0f}s "
                "are not taken; raise max_rate_limit_wait to wait instead)"
            )
        return wait

    def _forget_limit(self, resource: str) -> None:
        """Once its reset was waited out, a limit must not hold up the next request again."""
        with self._lock:
            self._exhausted_until.pop(resource, None)

    def _forget_waited(self, error: BaseException) -> None:
        if isinstance(error, _Again) and error.waits_out is not None:
            self._forget_limit(error.waits_out)

    def _backoff(self) -> Backoff:
        return Backoff(self.max_attempts, self.backoff_initial, self.backoff_max)

    def _pause(self, seconds: float) -> None:
        with self._lock:
            self.stats.retries += 1
            self.stats.waited_seconds += seconds
        self._sleep(seconds)


class _Again(Exception):
    """An attempt another one may fix: the error to raise if none is left, and the wait GitHub asked for.

    `wait` None means exponential backoff; `waits_out` names a primary limit the wait outlasts.
    """

    def __init__(self, give_up: GitHubError, wait: float | None = None, *, waits_out: str | None = None) -> None:
        super().__init__(str(give_up))
        self.give_up = give_up
        self.wait = wait
        self.waits_out = waits_out

    @staticmethod
    def wait_of(error: BaseException) -> float | None:
        return error.wait if isinstance(error, _Again) else None
