"""Rate-limit buckets and scripted faults of the GitHub twin: the state behind its limits and errors.

Neither locks by itself: `GithubTwin` calls every method here while holding its own lock, so
concurrent requests never overspend a bucket and a fault fires exactly as many times as scripted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

WINDOW_SECONDS = 3600.0  # GitHub's primary rate-limit window


@dataclass
class Bucket:
    """One primary rate-limit resource ("core" or "graphql"); refills to `limit` at `reset_at`."""

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

    def charge(self, cost: int, dry_run: bool, now: float) -> dict[str, Any] | None:
        """Take a GraphQL query's cost (unless `dry_run`); the `rateLimit` view, or None when it does not fit."""
        self.refresh(now)
        if self.remaining < cost:
            return None
        if not dry_run:
            self.remaining -= cost
        reset_at = datetime.fromtimestamp(math.ceil(self.reset_at), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        used = self.limit - self.remaining
        return {"limit": self.limit, "remaining": self.remaining, "used": used, "resetAt": reset_at}


@dataclass
class ScriptedFailure:
    """A 5xx answer for the next `times_left` requests whose path starts with `path_prefix` (any if None)."""

    status: int
    times_left: int
    path_prefix: str | None


@dataclass
class PartialError:
    """A GraphQL error of `error_type` nulling one PR in the next `times_left` executions resolving it."""

    error_type: str
    times_left: int


@dataclass
class Faults:
    """Every fault waiting to fire; each `take_*` uses one up and says what the request gets."""

    delay: float = 0.0  # latency added to every request, so concurrency becomes observable
    failures: list[ScriptedFailure] = field(default_factory=list)
    secondary_left: int = 0
    retry_after: int = 1
    partials: dict[tuple[str, int], PartialError] = field(default_factory=dict)  # key: (repo lower, number)

    def clear(self) -> None:
        self.failures.clear()
        self.secondary_left, self.retry_after = 0, 1
        self.partials.clear()
        self.delay = 0.0

    def take_failure(self, path: str) -> int | None:
        """The status of the first queued failure matching `path` (oldest first), or None."""
        failure = next((f for f in self.failures if f.path_prefix is None or path.startswith(f.path_prefix)), None)
        if failure is None:
            return None
        failure.times_left -= 1
        if failure.times_left <= 0:
            self.failures.remove(failure)
        return failure.status

    def take_secondary(self) -> int | None:
        """The Retry-After seconds when this request hits the scripted secondary limit, else None."""
        if self.secondary_left <= 0:
            return None
        self.secondary_left -= 1
        return self.retry_after

    def take_partial(self, repo: str, number: int) -> str | None:
        """The error type to null this PR with in the current GraphQL execution, or None."""
        entry = self.partials.get((repo.lower(), number))
        if entry is None or entry.times_left <= 0:
            return None
        entry.times_left -= 1
        return entry.error_type
