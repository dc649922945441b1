"""The one retry policy, on tenacity, for every client that talks to a server that fails now and then.

GitHub, the LLM endpoint and GH Archive downloads all retry the same way, so the rules live here
once instead of in three hand-written loops that drift apart:

- attempts are numbered from 1 and bounded by `max_attempts` (the first try included);
- between attempts the wait is `initial * 2 ** (attempt - 1)`, capped at `maximum`, with no jitter
  (the callers' tests assert the exact waits);
- a server that names its own wait (`Retry-After`) is obeyed instead: `server_wait` reads it off
  the error, and it is capped at `maximum` unless the caller says the server's word is a floor;
- `sleep` is injected, so tests record waits instead of taking them;
- on giving up the last error is re-raised unchanged: each client turns it into its own message.

What stays in the clients is what is not backoff. GitHub decides itself whether a rate-limit wait
is worth taking (a primary limit waits until its reset epoch, and a reset or `Retry-After` beyond
`max_rate_limit_wait` fails at once with the time to come back); it hands the helper only the
wait it chose, plus an `after_wait` hook that forgets the limit once it has been waited out.
GitHub's GraphQL `RATE_LIMITED` loop, which waits for a reset and never backs off, stays its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_base

ErrorTypes = type[BaseException] | tuple[type[BaseException], ...]
ServerWait = Callable[[BaseException], float | None]


@dataclass(frozen=True)
class Backoff:
    """How often to try and how long to wait in between; `retrying` turns it into a tenacity loop."""

    max_attempts: int
    initial: float = 1.0
    maximum: float = 60.0

    def delay(self, attempt: int) -> float:
        """The wait after failed attempt `attempt` (1-based) when the server named none."""
        return min(self.maximum, self.initial * 2 ** (attempt - 1))

    def retrying(
        self,
        retry_on: ErrorTypes,
        *,
        sleep: Callable[[float], None] = time.sleep,
        server_wait: ServerWait | None = None,
        cap_server_wait: bool = True,
        after_wait: Callable[[BaseException], None] | None = None,
    ) -> Retrying:
        """A fresh `tenacity.Retrying` (it keeps per-run state: build one per call, never share it).

        Only `retry_on` errors are retried; anything else propagates at once. `server_wait` returns
        the server's wait for an error, or None to back off. `after_wait` runs after each wait with
        the error that caused it. Use it as `retrying(fn, ...)`, or iterate it
        (`for attempt in ...: with attempt: ...`) when the body needs `attempt.retry_state.attempt_number`.
        """
        waited_for: list[BaseException] = []  # the error the coming sleep answers, for after_wait

        def remember(state: RetryCallState) -> None:
            error = _error(state)
            waited_for[:] = [error] if error is not None else []

        def pause(seconds: float) -> None:
            sleep(float(seconds))  # tenacity passes a float subclass: hand the caller a plain float
            if after_wait is not None and waited_for:
                after_wait(waited_for.pop())

        return Retrying(
            retry=retry_if_exception_type(retry_on),
            stop=stop_after_attempt(self.max_attempts),
            wait=_ServerOrBackoff(self, server_wait, cap_server_wait),
            sleep=pause,
            before_sleep=remember if after_wait is not None else None,
            reraise=True,
        )


class _ServerOrBackoff(wait_base):
    """tenacity wait: the server's word when it gave one (capped unless told not to), else `Backoff.delay`."""

    def __init__(self, backoff: Backoff, server_wait: ServerWait | None, cap: bool) -> None:
        self.backoff = backoff
        self.server_wait = server_wait
        self.cap = cap

    def __call__(self, retry_state: RetryCallState) -> float:
        error = _error(retry_state)
        named = self.server_wait(error) if self.server_wait is not None and error is not None else None
        if named is None:
            return self.backoff.delay(retry_state.attempt_number)
        return min(named, self.backoff.maximum) if self.cap else named


def _error(state: RetryCallState) -> BaseException | None:
    return state.outcome.exception() if state.outcome is not None and state.outcome.failed else None
