"""Fetch one GH Archive hour to local disk: https with streaming and retries, or a `file://` mirror.

A download streams to a temporary name in the cache and is renamed only once complete (and its
length checked against Content-Length), so a crash or a cut connection never leaves a file that
looks whole. A 404 means the hour is not published yet: it is not retried, the caller reports it.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import os
import ssl
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

import httpx

from swe_forge_dagster.common.retry import Backoff
from swe_forge_dagster.common.slots import RequestSlots
from swe_forge_dagster.gharchive.hours import archive_file_name, archive_url, partition_key


class HourNotPublishedError(Exception):
    """GH Archive has no file for this hour (yet): retry the partition later."""


class DownloadError(Exception):
    """A permanent download failure (bad URL, 4xx other than 404, retries exhausted)."""


class TransientDownloadError(Exception):
    """A failure worth retrying: 5xx, 429, network errors, a short body."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class FetchedHour:
    """A local gzip file holding one hour; `owned` files are ours to delete after parsing."""

    path: Path
    size: int
    owned: bool
    attempts: int = 1


def _retry_after_seconds(value: str | None) -> float | None:
    """`Retry-After` as seconds (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None  # malformed: fall back to exponential backoff
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)  # RFC 9110 dates are GMT
    return max(0.0, (parsed - dt.datetime.now(dt.UTC)).total_seconds())


def _server_wait(exc: BaseException) -> float | None:
    """The wait the archive named with `Retry-After` (the shared `Backoff` caps it), or None to back off."""
    return exc.retry_after if isinstance(exc, TransientDownloadError) else None


def _is_certificate_error(exc: BaseException) -> bool:
    """An untrusted or invalid certificate will not fix itself: don't retry it."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError) or "CERTIFICATE_VERIFY_FAILED" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class ArchiveFetcher:
    """Fetches hours from `base_url` (https://… or file:///dir) into `cache_dir`."""

    def __init__(
        self,
        base_url: str,
        cache_dir: Path,
        *,
        timeout_seconds: float = 120.0,
        max_attempts: int = 5,
        backoff_initial: float = 1.0,
        backoff_max: float = 60.0,
        slots: RequestSlots | None = None,
        verify: str | bool = True,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.cache_dir = Path(cache_dir)
        self.timeout_seconds = timeout_seconds
        self.max_attempts = max_attempts
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.slots = slots
        # True (certifi / SSL_CERT_FILE), False, or a CA bundle path (turned into an SSL context)
        self.verify: ssl.SSLContext | bool = (
            ssl.create_default_context(cafile=verify) if isinstance(verify, str) else verify
        )
        self._sleep = sleep
        scheme = urlparse(self.base_url).scheme
        if scheme not in ("http", "https", "file"):
            raise DownloadError(f"unsupported GH Archive URL {self.base_url!r}: use https://… or file:///dir")
        self.is_local = scheme == "file"

    def url_for(self, hour: dt.datetime) -> str:
        return archive_url(self.base_url, hour)

    def fetch(self, hour: dt.datetime) -> FetchedHour:
        if self.is_local:
            return self._fetch_local(hour)
        backoff = Backoff(self.max_attempts, self.backoff_initial, self.backoff_max)
        retrying = backoff.retrying(TransientDownloadError, sleep=self._sleep, server_wait=_server_wait)
        attempts = 0
        try:
            for attempt in retrying:
                with attempt:
                    attempts = attempt.retry_state.attempt_number
                    fetched = self._download_once(hour)
        except TransientDownloadError as exc:
            raise DownloadError(f"giving up on {self.url_for(hour)} after {attempts} attempts: {exc}") from exc
        return FetchedHour(fetched.path, fetched.size, fetched.owned, attempts)

    def is_published(self, hour: dt.datetime) -> bool:
        """Cheap existence check (HEAD, or a stat on a mirror) for sensors."""
        if self.is_local:
            return self._local_path(hour).is_file()
        url = self.url_for(hour)
        try:
            with httpx.Client(timeout=self.timeout_seconds, follow_redirects=True, verify=self.verify) as client:
                response = client.head(url)
        except httpx.TransportError as exc:
            raise DownloadError(f"cannot tell whether {url} is published: {type(exc).__name__}: {exc}") from exc
        if response.status_code in (200, 404):
            return response.status_code == 200
        raise DownloadError(f"cannot tell whether {url} is published: it answered {response.status_code}")

    def _local_path(self, hour: dt.datetime) -> Path:
        return Path(unquote(urlparse(self.base_url).path)) / archive_file_name(hour)

    def _fetch_local(self, hour: dt.datetime) -> FetchedHour:
        path = self._local_path(hour)
        if not path.is_file():
            raise HourNotPublishedError(f"hour {partition_key(hour)} is not in the mirror: {path} does not exist")
        return FetchedHour(path=path, size=path.stat().st_size, owned=False)

    def _download_once(self, hour: dt.datetime) -> FetchedHour:
        url = self.url_for(hour)
        target_dir = self.cache_dir / "gharchive"
        target_dir.mkdir(parents=True, exist_ok=True)
        # Unique per download: two runs of the same hour each get (and later delete) their own file.
        unique = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        final = target_dir / f"{archive_file_name(hour).removesuffix('.json.gz')}.{unique}.json.gz"
        part = target_dir / f".{final.name}.part"
        try:
            if self.slots is not None:
                with self.slots.hold():
                    size = self._stream(url, part, hour)
            else:
                size = self._stream(url, part, hour)
            part.replace(final)
        finally:
            part.unlink(missing_ok=True)
        return FetchedHour(path=final, size=size, owned=True)

    def _stream(self, url: str, part: Path, hour: dt.datetime) -> int:
        try:
            with (
                httpx.Client(timeout=self.timeout_seconds, follow_redirects=True, verify=self.verify) as client,
                client.stream("GET", url) as response,
            ):
                status = response.status_code
                if status == 404:
                    raise HourNotPublishedError(
                        f"hour {partition_key(hour)} is not published yet ({url} answered 404); "
                        "GH Archive publishes each hour shortly after it ends: retry this partition later"
                    )
                if status == 429 or status >= 500:
                    raise TransientDownloadError(
                        f"{url} answered {status}",
                        retry_after=_retry_after_seconds(response.headers.get("retry-after")),
                    )
                if status != 200:
                    raise DownloadError(f"{url} answered {status} {response.reason_phrase}")
                expected = response.headers.get("content-length")
                size = 0
                with open(part, "wb") as out:
                    for chunk in response.iter_raw(1 << 20):
                        out.write(chunk)
                        size += len(chunk)
        except httpx.TransportError as exc:  # connect/read errors, timeouts, cut bodies
            if _is_certificate_error(exc):
                raise DownloadError(
                    f"{url}: TLS certificate not trusted ({exc}); set SSL_CERT_FILE to your CA bundle"
                ) from exc
            raise TransientDownloadError(f"{url}: {type(exc).__name__}: {exc}") from exc
        if expected is not None and int(expected) != size:
            raise TransientDownloadError(f"{url}: short body, got {size} of {expected} bytes")
        return size
