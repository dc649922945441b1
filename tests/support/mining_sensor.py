"""The hour helpers and the GH Archive twin the mining-sensor test modules share.

`at(hour)` and `key(hour)` name hours of 2015-01-01 (or another January day); the `archive` fixture
(registered for every module by conftest.py's `pytest_plugins`) is a loopback twin whose hours are published by
writing their files.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest

from swe_forge_dagster.demo.worlds.gharchive_world import write_hour
from swe_forge_dagster.gharchive.hours import archive_file_name, partition_key
from swe_forge_dagster.gharchive.schedule import HOUR
from tests.support.gharchive_server import GharchiveServer


def at(hour: int, minute: int = 0, day: int = 1) -> dt.datetime:
    return dt.datetime(2015, 1, day, tzinfo=dt.UTC) + dt.timedelta(hours=hour, minutes=minute)


def key(hour: int, day: int = 1) -> str:
    return partition_key(at(hour, day=day))


class Archive:
    """The GH Archive twin plus its folder: publishing an hour is writing its file."""

    def __init__(self, root: Path, server: GharchiveServer) -> None:
        self.root = root
        self.server = server

    def publish(self, *hours: dt.datetime) -> None:
        for hour in hours:
            write_hour(self.root, hour, events=2)

    def publish_range(self, first: dt.datetime, last: dt.datetime) -> None:
        hour = first
        while hour <= last:
            self.publish(hour)
            hour += HOUR

    def heads(self, hour: dt.datetime) -> int:
        return self.server.count(archive_file_name(hour), "HEAD")


@pytest.fixture(name="archive")
def archive_fixture(tmp_path: Path) -> Iterator[Archive]:
    root = tmp_path / "mirror"
    root.mkdir()
    with GharchiveServer(root) as server:
        yield Archive(root, server)
