"""The GH Archive hour, loopback-twin fixtures and helpers the ArchiveFetcher test modules share.

The fixtures are registered under their short names (`mirror`, `server`, `sleeps`); conftest.py
registers them for every test module (`pytest_plugins`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from swe_forge_dagster.demo.worlds.gharchive_world import write_hour
from swe_forge_dagster.gharchive.download import ArchiveFetcher, FetchedHour
from tests.support.gharchive_server import GharchiveServer

HOUR = dt.datetime(2015, 1, 1, 5, tzinfo=dt.UTC)
NAME = "2015-01-01-5.json.gz"  # GH Archive does not zero-pad the hour


class SleepLog:
    """A `sleep=` stand-in that records the requested waits instead of sleeping."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture(name="mirror")
def mirror_fixture(tmp_path: Path) -> Path:
    root = tmp_path / "mirror"
    write_hour(root, HOUR, events=300, seed=7)
    return root


@pytest.fixture(name="server")
def server_fixture(mirror: Path) -> Iterator[GharchiveServer]:
    with GharchiveServer(mirror) as twin:
        yield twin


@pytest.fixture(name="sleeps")
def sleeps_fixture() -> SleepLog:
    return SleepLog()


def fetcher_for(base_url: str, cache: Path, sleeps: SleepLog, **kwargs: object) -> ArchiveFetcher:
    options: dict[str, object] = {"max_attempts": 3, "timeout_seconds": 5.0, "sleep": sleeps}
    options.update(kwargs)
    return ArchiveFetcher(base_url, cache, **options)  # type: ignore[arg-type]


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
