"""ArchiveFetcher's retries against a real loopback GH Archive twin that fails on cue: 5xx answers,
429/503 with Retry-After (seconds, HTTP dates, malformed), cut bodies and read timeouts are retried
with capped exponential backoff until max_attempts, 404 and 403 are not retried, and a download that
fails for good leaves no file behind. Only `sleep=` is replaced, to record the backoff asked for.
"""

from __future__ import annotations

import datetime as dt
import email.utils
from pathlib import Path

import pytest

from swe_forge_dagster.gharchive.download import DownloadError, HourNotPublishedError
from tests.support.download import (
    HOUR,
    NAME,
    SleepLog,
    assert_complete,
    fetcher_for,
    part_files,
)
from tests.support.gharchive_server import GharchiveServer

# -- retries ------------------------------------------------------------------------------


def test_500_then_success_retries_once(server: GharchiveServer, mirror: Path, tmp_path: Path, sleeps: SleepLog) -> None:
    server.fail_next(NAME, 500)
    cache = tmp_path / "cache"
    fetched = fetcher_for(server.url, cache, sleeps, backoff_initial=0.25).fetch(HOUR)
    assert_complete(fetched, mirror, cache)
    assert fetched.attempts == 2
    assert server.count(NAME) == 2
    assert sleeps.calls == [0.25]


def test_429_retry_after_seconds_is_honoured(
    server: GharchiveServer, mirror: Path, tmp_path: Path, sleeps: SleepLog
) -> None:
    server.fail_next(NAME, 429, headers={"Retry-After": "7"})
    server.fail_next(NAME, 429, headers={"Retry-After": "500"})  # capped by backoff_max
    cache = tmp_path / "cache"
    fetched = fetcher_for(server.url, cache, sleeps, backoff_initial=1.0, backoff_max=30.0).fetch(HOUR)
    assert_complete(fetched, mirror, cache)
    assert fetched.attempts == 3
    assert server.count(NAME) == 3
    assert sleeps.calls == [7.0, 30.0]


def test_503_retry_after_http_date_is_honoured(
    server: GharchiveServer, mirror: Path, tmp_path: Path, sleeps: SleepLog
) -> None:
    later = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=40)
    server.fail_next(NAME, 503, headers={"Retry-After": email.utils.format_datetime(later, usegmt=True)})
    server.fail_next(NAME, 503, headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})  # past: no wait
    cache = tmp_path / "cache"
    fetched = fetcher_for(server.url, cache, sleeps, backoff_max=120.0).fetch(HOUR)
    assert_complete(fetched, mirror, cache)
    assert len(sleeps.calls) == 2
    assert 35.0 < sleeps.calls[0] <= 40.0
    assert sleeps.calls[1] == 0.0


@pytest.mark.parametrize(
    ("retry_after", "expected_sleep"),
    [("soon", 2.0), ("Wed, 21 Oct 2015 07:28:00 -0000", 0.0)],  # unparseable -> backoff; naive past date -> 0
)
def test_malformed_retry_after_falls_back_to_backoff(
    server: GharchiveServer, mirror: Path, tmp_path: Path, sleeps: SleepLog, retry_after: str, expected_sleep: float
) -> None:
    server.fail_next(NAME, 503, headers={"Retry-After": retry_after})
    cache = tmp_path / "cache"
    fetched = fetcher_for(server.url, cache, sleeps, backoff_initial=2.0).fetch(HOUR)
    assert_complete(fetched, mirror, cache)
    assert fetched.attempts == 2
    assert sleeps.calls == [expected_sleep]


def test_persistent_502_gives_up_after_max_attempts(server: GharchiveServer, tmp_path: Path, sleeps: SleepLog) -> None:
    server.fail_next(NAME, 502, times=10)
    cache = tmp_path / "cache"
    fetcher = fetcher_for(server.url, cache, sleeps, max_attempts=4, backoff_initial=1.0, backoff_max=3.0)
    with pytest.raises(DownloadError, match=r"after 4 attempts: .*answered 502"):
        fetcher.fetch(HOUR)
    assert server.count(NAME) == 4
    assert sleeps.calls == [1.0, 2.0, 3.0]  # exponential, capped at backoff_max
    assert part_files(cache) == []
    assert not list((cache / "gharchive").glob("2015-01-01-5.*"))


def test_404_is_not_published_and_not_retried(server: GharchiveServer, tmp_path: Path, sleeps: SleepLog) -> None:
    hour = dt.datetime(2015, 1, 1, 6, tzinfo=dt.UTC)
    cache = tmp_path / "cache"
    with pytest.raises(HourNotPublishedError, match="not published") as caught:
        fetcher_for(server.url, cache, sleeps).fetch(hour)
    assert "2015-01-01-06:00" in str(caught.value)
    assert server.requests == [("GET", "/2015-01-01-6.json.gz")]
    assert sleeps.calls == []
    assert part_files(cache) == []


def test_403_is_permanent_download_error(server: GharchiveServer, tmp_path: Path, sleeps: SleepLog) -> None:
    server.fail_next(NAME, 403, times=5)
    with pytest.raises(DownloadError, match="answered 403 Forbidden"):
        fetcher_for(server.url, tmp_path / "cache", sleeps).fetch(HOUR)
    assert server.count(NAME) == 1
    assert sleeps.calls == []


def test_truncated_body_is_retried_then_succeeds(
    server: GharchiveServer, mirror: Path, tmp_path: Path, sleeps: SleepLog
) -> None:
    server.truncate_next(NAME)
    cache = tmp_path / "cache"
    fetched = fetcher_for(server.url, cache, sleeps, backoff_initial=0).fetch(HOUR)
    assert_complete(fetched, mirror, cache)
    assert fetched.attempts == 2
    assert server.count(NAME) == 2


def test_truncated_every_time_raises_and_leaves_no_file(
    server: GharchiveServer, tmp_path: Path, sleeps: SleepLog
) -> None:
    server.truncate_next(NAME, times=3)
    cache = tmp_path / "cache"
    with pytest.raises(DownloadError, match=r"after 3 attempts: .*RemoteProtocolError"):
        fetcher_for(server.url, cache, sleeps, max_attempts=3, backoff_initial=0).fetch(HOUR)
    assert server.count(NAME) == 3
    assert list((cache / "gharchive").iterdir()) == []  # neither a final file nor a .part


def test_read_timeout_is_transient(server: GharchiveServer, tmp_path: Path, sleeps: SleepLog) -> None:
    server.delay(NAME, 1.0)
    cache = tmp_path / "cache"
    fetcher = fetcher_for(server.url, cache, sleeps, max_attempts=2, timeout_seconds=0.2, backoff_initial=0)
    with pytest.raises(DownloadError, match=r"after 2 attempts: .*ReadTimeout"):
        fetcher.fetch(HOUR)
    assert server.count(NAME) == 2
    assert part_files(cache) == []
