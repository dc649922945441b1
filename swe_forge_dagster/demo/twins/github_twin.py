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

This module is the orchestration (request order, locking, records); what is answered lives in
`github_rest_shapes` and `github_graphql_schema`, the limit/fault state in `github_twin_faults`,
and the wire handling in `github_twin_http`.
"""

from __future__ import annotations

import json
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

from swe_forge_dagster.demo.twins.github_graphql_schema import QueryCost, handle_graphql_request
from swe_forge_dagster.demo.twins.github_rest_shapes import (
    DOCS,
    NO_USER_AGENT,
    NOT_FOUND,
    RATE_DOCS,
    RATE_LIMITED_REST,
    SECONDARY,
    SECONDARY_DOCS,
    rate_limit_json,
    route,
    server_error,
)
from swe_forge_dagster.demo.twins.github_twin_faults import (
    WINDOW_SECONDS,
    Bucket,
    Faults,
    PartialError,
    ScriptedFailure,
)
from swe_forge_dagster.demo.twins.github_twin_http import (
    JSON,
    Reply,
    TwinHandler,
    TwinServer,
    finish_get,
    json_reply,
    send_reply,
)
from swe_forge_dagster.demo.twins.loopback import LoopbackService
from swe_forge_dagster.demo.worlds.github_world import GithubWorld


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


class GithubTwin(LoopbackService):
    """Serves `world` on 127.0.0.1 as api.github.com would; every setter is thread-safe and live."""

    server_class = TwinServer
    handler_class = TwinHandler
    thread_name = "github-twin"

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
        self._lock = threading.Lock()  # guards requests, counters, buckets and faults
        now = time.time()
        self._buckets = {
            "core": Bucket(rate_limit, rate_limit, now + WINDOW_SECONDS),
            "graphql": Bucket(graphql_rate_limit, graphql_rate_limit, now + WINDOW_SECONDS),
        }
        self._faults = Faults()
        self._in_flight = 0
        self._request_seq = 0

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
            self._faults.secondary_left, self._faults.retry_after = times, retry_after

    def fail_next(self, status: int = 502, times: int = 1, path_prefix: str | None = None) -> None:
        """The next `times` requests whose path starts with `path_prefix` (any if None) get `status`."""
        with self._lock:
            self._faults.failures.append(ScriptedFailure(status, times, path_prefix))

    def clear_faults(self) -> None:
        """Cancel every queued fault (failures, secondary limits, partial errors, delay)."""
        with self._lock:
            self._faults.clear()

    def graphql_partial_error(
        self, repo: str, number: int, error_type: str = "SERVICE_UNAVAILABLE", times: int = 1
    ) -> None:
        """The next `times` GraphQL executions resolving that PR null it with an error of this type."""
        with self._lock:
            self._faults.partials[(repo.lower(), number)] = PartialError(error_type, times)

    def delay(self, seconds: float) -> None:
        """Latency added to every request, so concurrency (`max_in_flight`) becomes observable."""
        with self._lock:
            self._faults.delay = seconds

    # --- counters --------------------------------------------------------------------------
    def count(self, path_prefix: str | None = None, method: str | None = None) -> int:
        with self._lock:
            return sum(
                1
                for r in self.requests
                if (path_prefix is None or r.path.startswith(path_prefix)) and (method is None or r.method == method)
            )

    @property
    def in_flight(self) -> int:
        """Requests being answered now (a killed client's are still answered, and then counted)."""
        with self._lock:
            return self._in_flight

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
    def _serve(self, handler: TwinHandler, method: str) -> None:
        with self._lock:
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            self._request_seq += 1
            request_id = f"{self._request_seq:04X}:{self._request_seq * 7919 % 65536:04X}"
            delay = self._faults.delay
        finished = False
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
                reply = json_reply(500, {"message": f"github twin error: {exc!r}", "documentation_url": DOCS})
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
            base_headers = {
                "content-type": reply.content_type,
                "x-github-media-type": "github.v3; format=json",
                "x-github-request-id": request_id,
            }
            # Out of flight before the reply is written: the client may hold the whole response (and
            # start its next request) before this thread returns from the write.
            with self._lock:
                self._in_flight -= 1
                finished = True
            send_reply(handler, method, reply, {**base_headers, **headers})
        finally:
            if not finished:
                with self._lock:
                    self._in_flight -= 1

    def _pre_checks(self, handler: TwinHandler, path: str) -> Reply | None:
        """Faults, auth and the secondary limit, in the order GitHub's edge applies them."""
        with self._lock:
            failure = self._faults.take_failure(path)
        if failure is not None:
            return server_error(failure, graphql=path == "/graphql")
        if self.token is not None:
            header = handler.headers.get("Authorization") or ""
            scheme, _, value = header.partition(" ")
            if scheme.lower() not in ("bearer", "token") or value.strip() != self.token:
                message = "Bad credentials"
                if not header and path == "/graphql":
                    message = "This endpoint requires you to be authenticated."
                return json_reply(401, {"message": message, "documentation_url": DOCS})
        if not handler.headers.get("User-Agent"):
            return json_reply(403, {"message": NO_USER_AGENT, "documentation_url": DOCS})
        with self._lock:
            retry_after = self._faults.take_secondary()
        if retry_after is not None:
            body = {"message": SECONDARY, "documentation_url": SECONDARY_DOCS}
            return json_reply(403, body, **{"retry-after": str(retry_after)})
        return None

    def _reply(
        self, handler: TwinHandler, method: str, path: str, query: dict[str, list[str]], raw: bytes, resource: str
    ) -> Reply:
        early = self._pre_checks(handler, path)
        if early is not None:
            return early
        if path == "/rate_limit" and method == "GET":
            with self._lock:
                now = time.time()
                for bucket in self._buckets.values():
                    bucket.refresh(now)
                payload = rate_limit_json({name: b.as_json() for name, b in self._buckets.items()})
            return finish_get(handler, json_reply(200, payload))
        if path == "/graphql":
            return self._graphql(raw) if method == "POST" else json_reply(404, NOT_FOUND)
        with self._lock:
            bucket = self._buckets["core"]
            bucket.refresh(time.time())
            if bucket.remaining <= 0:
                return json_reply(403, {"message": RATE_LIMITED_REST, "documentation_url": RATE_DOCS})
            bucket.remaining -= 1  # reserved now so concurrent requests never overspend; refunded on 304
        status, payload, content_type, extra = (404, NOT_FOUND, JSON, {})
        if method == "GET":
            status, payload, content_type, extra = route(
                self.world, self.url, path, query, handler.headers.get("Accept") or ""
            )
        body = payload if isinstance(payload, bytes) else json.dumps(payload, separators=(",", ":")).encode()
        reply = finish_get(handler, Reply(status, body, content_type, extra, counted=True))
        if reply.status == 304:
            with self._lock:
                self._buckets["core"].remaining += 1
            reply.counted = False
        return reply

    def _take_partial(self, repo: str, number: int) -> str | None:
        with self._lock:
            return self._faults.take_partial(repo, number)

    def _graphql(self, raw: bytes) -> Reply:
        status, payload, charged = handle_graphql_request(raw, self.world, self._charge_graphql, self._take_partial)
        reply = json_reply(status, payload)
        reply.counted = charged
        return reply

    def _charge_graphql(self, cost: QueryCost) -> dict[str, Any] | None:
        """Take a query's cost from the graphql bucket; None (nothing taken) when it does not fit."""
        with self._lock:
            return self._buckets["graphql"].charge(cost.cost, cost.dry_run, time.time())
