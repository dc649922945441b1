"""ArchiveFetcher against a real loopback GH Archive twin: real sockets, real httpx, real TLS.

Nothing in the code under test is mocked. Only `sleep=` is replaced, to record the backoff the
fetcher asks for without waiting for it. The happy paths over http, https and file:// mirrors, the
existence checks, bad URLs and concurrency are here; retries and failures are in
test_download_retries.py.
"""

from __future__ import annotations

import datetime as dt
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from swe_forge_dagster.common.slots import Slots
from swe_forge_dagster.demo.worlds.gharchive_world import write_hour
from swe_forge_dagster.gharchive.download import ArchiveFetcher, DownloadError, FetchedHour, HourNotPublishedError
from tests.support.download import (
    HOUR,
    NAME,
    SleepLog,
    assert_complete,
    fetcher_for,
    part_files,
)
from tests.support.gharchive_server import GharchiveServer


@pytest.fixture
def tls_server(mirror: Path) -> Iterator[GharchiveServer]:
    with GharchiveServer(mirror, tls=True) as twin:
        yield twin


def wait_until(condition: Callable[[], bool], timeout: float = 3.0) -> bool:
    """For server-side observations that may land just after the client has returned."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


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
