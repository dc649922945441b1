"""The shared retry policy (`common.retry.Backoff`) on its own: attempts, waits, server waits, giving up.

A real function that fails on cue is retried by the real tenacity loop; only `sleep=` is replaced,
to record the waits asked for instead of taking them.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from swe_forge_dagster.common.retry import Backoff


class Flaky(Exception):
    """A failure worth retrying; `retry_after` plays a server's Retry-After."""

    def __init__(self, retry_after: float | None = None) -> None:
        super().__init__(f"flaky (retry after {retry_after})")
        self.retry_after = retry_after


class Broken(Exception):
    """A failure retrying will not fix."""


def failing(errors: list[BaseException], result: str = "done") -> tuple[Callable[[], str], list[int]]:
    """A call that raises `errors` in turn, then returns `result`; the list counts the calls."""
    calls: list[int] = []

    def call() -> str:
        calls.append(len(calls) + 1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return result

    return call, calls


def retry_after(error: BaseException) -> float | None:
    return error.retry_after if isinstance(error, Flaky) else None


def test_delay_doubles_from_initial_and_is_capped() -> None:
    backoff = Backoff(max_attempts=10, initial=0.5, maximum=3.0)
    assert [backoff.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert Backoff(max_attempts=3, initial=0.0).delay(4) == 0.0


def test_retries_until_success_with_exponential_waits() -> None:
    sleeps: list[float] = []
    call, calls = failing([Flaky(), Flaky(), Flaky()])
    result = Backoff(max_attempts=5, initial=1.0, maximum=60.0).retrying(Flaky, sleep=sleeps.append)(call)
    assert result == "done"
    assert calls == [1, 2, 3, 4]
    assert sleeps == [1.0, 2.0, 4.0]


def test_gives_up_after_max_attempts_reraising_the_last_error_with_capped_waits() -> None:
    sleeps: list[float] = []
    errors: list[BaseException] = [Flaky() for _ in range(10)]
    call, calls = failing(errors)
    with pytest.raises(Flaky) as caught:
        Backoff(max_attempts=4, initial=1.0, maximum=3.0).retrying(Flaky, sleep=sleeps.append)(call)
    assert caught.value is errors[3]  # the last one, unchanged: the caller words the message
    assert calls == [1, 2, 3, 4]
    assert sleeps == [1.0, 2.0, 3.0]  # no wait after the last attempt


def test_other_errors_are_not_retried() -> None:
    sleeps: list[float] = []
    call, calls = failing([Broken()])
    with pytest.raises(Broken):
        Backoff(max_attempts=5).retrying(Flaky, sleep=sleeps.append)(call)
    assert calls == [1] and sleeps == []


def test_server_wait_is_honoured_capped_at_maximum_and_falls_back_to_backoff() -> None:
    sleeps: list[float] = []
    call, _ = failing([Flaky(retry_after=7.0), Flaky(retry_after=500.0), Flaky(), Flaky(retry_after=0.0)])
    backoff = Backoff(max_attempts=5, initial=1.0, maximum=30.0)
    assert backoff.retrying(Flaky, sleep=sleeps.append, server_wait=retry_after)(call) == "done"
    assert sleeps == [7.0, 30.0, 4.0, 0.0]  # Retry-After, capped, backoff for attempt 3, an explicit zero


def test_uncapped_server_wait_is_taken_as_given() -> None:
    sleeps: list[float] = []
    call, _ = failing([Flaky(retry_after=500.0)])
    backoff = Backoff(max_attempts=3, initial=1.0, maximum=30.0)
    backoff.retrying(Flaky, sleep=sleeps.append, server_wait=retry_after, cap_server_wait=False)(call)
    assert sleeps == [500.0]


def test_after_wait_sees_each_error_once_its_wait_is_over() -> None:
    events: list[str] = []
    first, second = Flaky(retry_after=1.0), Flaky(retry_after=2.0)
    call, _ = failing([first, second])
    retrying = Backoff(max_attempts=3).retrying(
        Flaky,
        sleep=lambda s: events.append(f"sleep {s}"),
        server_wait=retry_after,
        after_wait=lambda error: events.append(f"after {'first' if error is first else 'second'}"),
    )
    retrying(call)
    assert events == ["sleep 1.0", "after first", "sleep 2.0", "after second"]


def test_iterating_gives_the_attempt_number_to_the_body() -> None:
    seen: list[int] = []
    call, _ = failing([Flaky(), Flaky()])
    for attempt in Backoff(max_attempts=5, initial=0.0).retrying(Flaky, sleep=lambda _: None):
        with attempt:
            seen.append(attempt.retry_state.attempt_number)
            call()
    assert seen == [1, 2, 3]


def test_each_retrying_starts_afresh() -> None:
    """A policy is reused across calls; the attempts of one call never count against the next."""
    backoff = Backoff(max_attempts=2, initial=0.0)
    for _ in range(3):
        call, calls = failing([Flaky()])
        assert backoff.retrying(Flaky, sleep=lambda _: None)(call) == "done"
        assert calls == [1, 2]
