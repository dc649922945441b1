"""GH Archive hours: partition keys, file names and source locations.

Partition keys keep Dagster's default hourly format (`2015-01-01-00:00`) forever: changing it
orphans history. GH Archive names files without zero-padding the hour (`2015-01-01-0.json.gz`).
"""

from __future__ import annotations

import datetime as dt

from swe_forge_dagster.common.store import StorePath

PARTITION_KEY_FORMAT = "%Y-%m-%d-%H:%M"


class InvalidHourError(ValueError):
    """A partition key or hour string that does not name a GH Archive hour."""


def parse_partition_key(key: str) -> dt.datetime:
    """`2015-01-01-00:00` -> aware UTC datetime; a clear error for anything else."""
    try:
        hour = dt.datetime.strptime(key, PARTITION_KEY_FORMAT).replace(tzinfo=dt.UTC)
    except (TypeError, ValueError):
        raise InvalidHourError(
            f"invalid hour partition key {key!r}: expected YYYY-MM-DD-HH:00, e.g. 2015-01-01-00:00"
        ) from None
    if hour.minute != 0:
        raise InvalidHourError(f"invalid hour partition key {key!r}: minutes must be 00")
    return hour


def partition_key(hour: dt.datetime) -> str:
    return hour.astimezone(dt.UTC).strftime(PARTITION_KEY_FORMAT)


def archive_file_name(hour: dt.datetime) -> str:
    """GH Archive's file name: the hour is not zero-padded."""
    hour = hour.astimezone(dt.UTC)
    return f"{hour:%Y-%m-%d}-{hour.hour}.json.gz"


def archive_url(base_url: str, hour: dt.datetime) -> str:
    return f"{base_url.rstrip('/')}/{archive_file_name(hour)}"


def hive_dir(dataset_root: StorePath, hour: dt.datetime) -> StorePath:
    """The lake folder of one hour: `<root>/dt=YYYY-MM-DD/hour=HH`."""
    hour = hour.astimezone(dt.UTC)
    return dataset_root / f"dt={hour:%Y-%m-%d}" / f"hour={hour:%H}"
