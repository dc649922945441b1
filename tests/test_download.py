"""ArchiveFetcher against a real loopback GH Archive twin: real sockets, real httpx, real TLS.

Nothing in the code under test is mocked. Only `sleep=` is replaced, to record the backoff the
fetcher asks for without waiting for it.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from swe_forge_dagster.common.slots import Slots
from swe_forge_dagster.demo.worlds.gharchive_world import write_hour
from swe_forge_dagster.gharchive.download import ArchiveFetcher, DownloadError, FetchedHour, HourNotPublishedError
from tests.twins.gharchive_server import GharchiveServer

HOUR = dt.datetime(2015, 1, 1, 5, tzinfo=dt.UTC)
NAME = "2015-01-01-5.json.gz"  # GH Archive does not zero-pad the hour


class SleepLog:
    """A `sleep=` stand-in that records the requested waits instead of sleeping."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture
def mirror(tmp_path: Path) -> Path:
    root = tmp_path / "mirror"
    write_hour(root, HOUR, events=300, seed=7)
    return root


@pytest.fixture
def server(mirror: Path) -> Iterator[GharchiveServer]:
    with GharchiveServer(mirror) as twin:
        yield twin


@pytest.fixture
def tls_server(mirror: Path) -> Iterator[GharchiveServer]:
    with GharchiveServer(mirror, tls=True) as twin:
        yield twin


@pytest.fixture
def sleeps() -> SleepLog:
    return SleepLog()


def fetcher_for(base_url: str, cache: Path, sleeps: SleepLog, **kwargs: object) -> ArchiveFetcher:
    options: dict[str, object] = {"max_attempts": 3, "timeout_seconds": 5.0, "sleep": sleeps}
    options.update(kwargs)
    return ArchiveFetcher(base_url, cache, **options)  # type: ignore[arg-type]


def wait_until(condition: Callable[[], bool], timeout: float = 3.0) -> bool:
    """For server-side observations that may land just after the client has returned."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def part_files(cache: Path) -> list[Path]:
    return sorted(cache.rglob("*.part"))


def assert_complete(fetched: FetchedHour, mirror: Path, cache: Path) -> None:
    source = (mirror / NAME).read_bytes()
    assert fetched.owned is True
    # each download is its own file (two runs of one hour must not delete each other's)
    assert fetched.path.parent == cache / "gharchive"
    assert fetched.path.name.startswith("2015-01-01-5.") and fetched.path.name.endswith(".json.gz")
    assert fetched.path.read_bytes() == source
    assert fetched.size == len(source) == fetched.path.stat().st_size
    assert part_files(cache) == []


# -- plain http -----------------------------------------------------------------------------


def test_http_success_downloads_identical_bytes(
    server: GharchiveServer, mirror: Path, tmp_path: Path, sleeps: SleepLog
) -> None:
    cache = tmp_path / "cache"
    fetched = fetcher_for(server.url, cache, sleeps).fetch(HOUR)
    assert_complete(fetched, mirror, cache)
    assert fetched.attempts == 1
    assert server.requests == [("GET", f"/{NAME}")]
    assert sleeps.calls == []


def test_real_gharchive_hour_survives_a_cut_connection(gharchive_2015: Path, tmp_path: Path, sleeps: SleepLog) -> None:
    """A real 2.6 MB GH Archive file (several 1 MiB chunks), cut once mid-body, arrives intact."""
    hour = dt.datetime(2015, 1, 1, 0, tzinfo=dt.UTC)
    cache = tmp_path / "cache"
    with GharchiveServer(gharchive_2015) as twin:
        twin.truncate_next("2015-01-01-0.json.gz")
        fetched = fetcher_for(twin.url, cache, sleeps, backoff_initial=0).fetch(hour)
        assert twin.requests == [("GET", "/2015-01-01-0.json.gz")] * 2
    assert fetched.attempts == 2
    assert fetched.path.read_bytes() == (gharchive_2015 / "2015-01-01-0.json.gz").read_bytes()
    assert part_files(cache) == []


def test_url_uses_unpadded_hour_and_keeps_base_path(tmp_path: Path, sleeps: SleepLog) -> None:
    root = tmp_path / "root"
    write_hour(root / "sub", HOUR, events=20)
    cache = tmp_path / "cache"
    with GharchiveServer(root) as twin:
        fetcher = fetcher_for(twin.url + "/sub/", cache, sleeps)
        assert fetcher.url_for(HOUR) == f"{twin.url}/sub/2015-01-01-5.json.gz"
        fetched = fetcher.fetch(HOUR)
        assert twin.requests == [("GET", "/sub/2015-01-01-5.json.gz")]
    assert fetched.path.name.startswith("2015-01-01-5.")
    assert fetched.path.read_bytes() == (root / "sub" / NAME).read_bytes()


# -- TLS ----------------------------------------------------------------------------------


# httpx 0.28 deprecates `verify=<str>`, which is what ArchiveFetcher passes on; see the report.
@pytest.mark.filterwarnings("ignore:`verify=<str>` is deprecated:DeprecationWarning")
def test_https_success_with_self_signed_ca(
    tls_server: GharchiveServer, mirror: Path, tmp_path: Path, sleeps: SleepLog
) -> None:
    assert tls_server.url.startswith("https://127.0.0.1:")
    assert tls_server.ca_file is not None
    cache = tmp_path / "cache"
    fetcher = fetcher_for(tls_server.url, cache, sleeps, verify=str(tls_server.ca_file))
    fetched = fetcher.fetch(HOUR)
    assert_complete(fetched, mirror, cache)
    assert fetched.attempts == 1
    assert fetcher.is_published(HOUR) is True
    assert tls_server.tls_failures == 0


def test_https_untrusted_certificate_is_a_permanent_download_error(
    tls_server: GharchiveServer, tmp_path: Path, sleeps: SleepLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Default verification (certifi) rejects the self-signed cert: retrying cannot help, so the
    fetcher fails at once with a DownloadError that says what to do. No HTTP request is sent."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    cache = tmp_path / "cache"
    fetcher = fetcher_for(tls_server.url, cache, sleeps, max_attempts=3, backoff_initial=0.5)
    with pytest.raises(DownloadError, match=r"certificate not trusted.*SSL_CERT_FILE") as caught:
        fetcher.fetch(HOUR)
    assert "CERTIFICATE_VERIFY_FAILED" in str(caught.value)
    assert isinstance(caught.value.__cause__, httpx.ConnectError)
    assert sleeps.calls == []
    assert wait_until(lambda: tls_server.tls_failures == 1)  # one handshake refused by the client
    assert tls_server.requests == []
    assert part_files(cache) == []
    assert not list((cache / "gharchive").glob("2015-01-01-5.*"))


def test_https_untrusted_certificate_is_published_raises_download_error(
    tls_server: GharchiveServer, tmp_path: Path, sleeps: SleepLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`is_published` answers only True (200) or False (404); anything else is a clear error."""
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    fetcher = fetcher_for(tls_server.url, tmp_path / "cache", sleeps)
    with pytest.raises(DownloadError, match=r"cannot tell whether .* CERTIFICATE_VERIFY_FAILED"):
        fetcher.is_published(HOUR)


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


# -- existence checks ---------------------------------------------------------------------


def test_is_published_over_http_uses_head(server: GharchiveServer, tmp_path: Path, sleeps: SleepLog) -> None:
    fetcher = fetcher_for(server.url, tmp_path / "cache", sleeps)
    assert fetcher.is_published(HOUR) is True
    assert fetcher.is_published(dt.datetime(2015, 1, 1, 6, tzinfo=dt.UTC)) is False
    assert server.requests == [("HEAD", f"/{NAME}"), ("HEAD", "/2015-01-01-6.json.gz")]
    assert not (tmp_path / "cache").exists()


# -- file:// mirrors and bad URLs -----------------------------------------------------------


def test_file_mirror_returns_the_mirror_file_without_copying(tmp_path: Path, sleeps: SleepLog) -> None:
    mirror = tmp_path / "my mirror"  # a space: the file:// URL is percent-encoded
    source, _ = write_hour(mirror, HOUR, events=50)
    cache = tmp_path / "cache"
    fetcher = fetcher_for(mirror.as_uri(), cache, sleeps)
    assert "%20" in fetcher.base_url
    fetched = fetcher.fetch(HOUR)
    assert fetched == FetchedHour(path=source, size=source.stat().st_size, owned=False, attempts=1)
    assert not cache.exists()
    assert fetcher.is_published(HOUR) is True
    assert fetcher.is_published(HOUR + dt.timedelta(hours=1)) is False


def test_file_mirror_missing_hour_is_not_published(tmp_path: Path, sleeps: SleepLog) -> None:
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    with pytest.raises(HourNotPublishedError, match=r"2015-01-01-5\.json\.gz does not exist"):
        fetcher_for(mirror.as_uri(), tmp_path / "cache", sleeps).fetch(HOUR)


@pytest.mark.parametrize("base_url", ["ftp://data.gharchive.org", "data.gharchive.org", "s3://bucket/gharchive"])
def test_unsupported_scheme_is_download_error(base_url: str, tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="unsupported GH Archive URL"):
        ArchiveFetcher(base_url, tmp_path)


# -- concurrency --------------------------------------------------------------------------


def _fetch_concurrently(
    fetchers: list[ArchiveFetcher], hours: list[dt.datetime]
) -> tuple[dict[int, FetchedHour], list[BaseException]]:
    """Run `fetchers[i].fetch(hours[i])` in threads released together; results and errors."""
    results: dict[int, FetchedHour] = {}
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(hours))

    def work(index: int) -> None:
        barrier.wait()
        try:
            results[index] = fetchers[index].fetch(hours[index])
        except BaseException as exc:  # surfaced by the caller
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(hours))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    return results, errors


def _slow_hours(mirror: Path, twin: GharchiveServer, count: int = 6, seconds: float = 0.15) -> list[dt.datetime]:
    """`count` hours of 2015-01-02 in `mirror`, each answered `seconds` late by the twin."""
    hours = [dt.datetime(2015, 1, 2, h, tzinfo=dt.UTC) for h in range(count)]
    for hour in hours:
        write_hour(mirror, hour, events=30)
        twin.delay(f"2015-01-02-{hour.hour}.json.gz", seconds)
    return hours


def test_slots_cap_requests_across_processes(tmp_path: Path, sleeps: SleepLog) -> None:
    """Six fetchers, each with its own `Slots` (as six processes would have), share two flock slots."""
    mirror, cache, locks = tmp_path / "mirror", tmp_path / "cache", tmp_path / "locks"
    mirror.mkdir()
    with GharchiveServer(mirror) as twin:
        hours = _slow_hours(mirror, twin)
        fetchers = [fetcher_for(twin.url, cache, sleeps, slots=Slots(locks, "dl", 2)) for _ in hours]
        results, errors = _fetch_concurrently(fetchers, hours)
        assert errors == []
        assert len(twin.requests) == 6
        assert twin.max_in_flight == 2  # capped by the slots, and the cap is actually used
    for index, hour in enumerate(hours):
        assert results[index].path.read_bytes() == (mirror / f"2015-01-02-{hour.hour}.json.gz").read_bytes()
    assert part_files(cache) == []


def test_slots_cap_requests_across_threads_sharing_one_slots(tmp_path: Path, sleeps: SleepLog) -> None:
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    mirror.mkdir()
    with GharchiveServer(mirror) as twin:
        hours = _slow_hours(mirror, twin)
        fetcher = fetcher_for(twin.url, cache, sleeps, slots=Slots(tmp_path / "locks", "dl", 2))
        results, errors = _fetch_concurrently([fetcher] * len(hours), hours)
        if errors:
            raise errors[0]
        assert len(results) == 6
        assert twin.max_in_flight == 2


def test_without_slots_requests_overlap(tmp_path: Path, sleeps: SleepLog) -> None:
    """Control for the slots tests: without slots the twin does see more than 2 requests at once."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    with GharchiveServer(mirror) as twin:
        hours = _slow_hours(mirror, twin, count=4, seconds=0.3)
        fetcher = fetcher_for(twin.url, tmp_path / "cache", sleeps)
        results, errors = _fetch_concurrently([fetcher] * len(hours), hours)
        assert errors == []
        assert len(results) == 4
        assert twin.max_in_flight > 2


def test_concurrent_fetches_of_one_hour_get_whole_files_of_their_own(
    server: GharchiveServer, mirror: Path, tmp_path: Path, sleeps: SleepLog
) -> None:
    cache = tmp_path / "cache"
    fetcher = fetcher_for(server.url, cache, sleeps)
    results: list[FetchedHour] = []
    threads = [threading.Thread(target=lambda: results.append(fetcher.fetch(HOUR))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert len(results) == 4
    for result in results:
        assert_complete(result, mirror, cache)
    assert len({r.path for r in results}) == 4
    for result in results:  # each run deletes only its own download
        result.path.unlink()
    assert list((cache / "gharchive").iterdir()) == []
