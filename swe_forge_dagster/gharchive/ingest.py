"""Ingest GH Archive hours into the lake: fetch, parse, write, report.

One function per hour, and one that runs many hours with up to N downloads in flight while
parsing (CPU-bound) stays at the core count. The Dagster asset, the CLI and the tests all call
these; nothing here knows about Dagster.
"""

from __future__ import annotations

import datetime as dt
import os
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.compute as pc

from swe_forge_dagster.common.store import StorePath
from swe_forge_dagster.gharchive.download import ArchiveFetcher
from swe_forge_dagster.gharchive.hours import hive_dir, partition_key
from swe_forge_dagster.gharchive.parse import parse_hour
from swe_forge_dagster.gharchive.schema import PR_EVENTS_SCHEMA
from swe_forge_dagster.lake.writer import remove_stale_temp_files, write_partition

DATASET = "gharchive_pr_events"


@dataclass(frozen=True)
class IngestOptions:
    """Knobs of an ingest; defaults suit a 2-core machine and GH Archive's politeness."""

    max_parallel_downloads: int = 8
    parse_workers: int = max(1, min(2, os.cpu_count() or 1))
    max_bad_line_fraction: float = 0.01
    keep_downloads: bool = False


@dataclass(frozen=True)
class HourReport:
    """What ingesting one hour did: the materialization metadata of its partition."""

    hour: dt.datetime
    path: Path
    events_read: int
    pr_events: int
    by_action: dict[str, int]
    merged: int
    payload_formats: dict[str, int]
    bad_lines: int
    bytes_downloaded: int
    uncompressed_bytes: int
    download_attempts: int
    download_seconds: float
    parse_seconds: float
    seconds: float

    @property
    def partition_key(self) -> str:
        return partition_key(self.hour)

    @property
    def empty(self) -> bool:
        return self.events_read == 0


@dataclass(frozen=True)
class HourFailure:
    """An hour that could not be ingested, with the error to show the user."""

    hour: dt.datetime
    error: BaseException

    @property
    def partition_key(self) -> str:
        return partition_key(self.hour)


@dataclass
class _Gate:
    """Bounds CPU-bound parsing across the download threads."""

    parse: threading.Semaphore = field(default_factory=lambda: threading.Semaphore(2))


def ingest_hour(
    hour: dt.datetime,
    fetcher: ArchiveFetcher,
    lake_dir: StorePath,
    options: IngestOptions = IngestOptions(),
    gate: _Gate | None = None,
) -> HourReport:
    """Fetch, parse and atomically write one hour; raises with a specific error on bad input."""
    started = time.perf_counter()
    fetched = fetcher.fetch(hour)
    downloaded = time.perf_counter()
    folder = hive_dir(lake_dir / DATASET, hour)
    try:
        if gate is not None:
            gate.parse.acquire()
        try:
            parsed = parse_hour(
                fetched.path,
                work_dir=fetcher.cache_dir / "work",
                max_bad_line_fraction=options.max_bad_line_fraction,
            )
            parse_done = time.perf_counter()
            remove_stale_temp_files(folder)
            path = write_partition(parsed.table, folder, PR_EVENTS_SCHEMA)
        finally:
            if gate is not None:
                gate.parse.release()
    finally:
        if fetched.owned and not options.keep_downloads:
            fetched.path.unlink(missing_ok=True)
    table = parsed.table
    actions = Counter(a for a in table.column("action").to_pylist() if a is not None)
    formats = Counter(table.column("payload_format").to_pylist())
    merged = int(pc.sum(pc.fill_null(table.column("merged"), False).cast("int64")).as_py() or 0)
    return HourReport(
        hour=hour,
        path=path,
        events_read=parsed.events_read,
        pr_events=table.num_rows,
        by_action=dict(sorted(actions.items())),
        merged=merged,
        payload_formats=dict(sorted(formats.items())),
        bad_lines=parsed.bad_lines,
        bytes_downloaded=fetched.size,
        uncompressed_bytes=parsed.uncompressed_bytes,
        download_attempts=fetched.attempts,
        download_seconds=round(downloaded - started, 3),
        parse_seconds=round(parse_done - downloaded, 3),
        seconds=round(time.perf_counter() - started, 3),
    )


def ingest_hours(
    hours: Sequence[dt.datetime],
    fetcher: ArchiveFetcher,
    lake_dir: StorePath,
    options: IngestOptions = IngestOptions(),
) -> Iterator[HourReport | HourFailure]:
    """Ingest many hours, yielding each result as it completes (failures do not stop the rest)."""
    gate = _Gate(parse=threading.Semaphore(options.parse_workers))
    workers = max(1, min(options.max_parallel_downloads, len(hours)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="gharchive") as pool:
        pending: dict[Future[HourReport], dt.datetime] = {
            pool.submit(ingest_hour, hour, fetcher, lake_dir, options, gate): hour for hour in hours
        }
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                hour = pending.pop(future)
                error = future.exception()
                yield HourFailure(hour, error) if error is not None else future.result()
