"""Atomic Parquet writes into the lake's hive layout.

A partition is written to a hidden temporary file in its own folder and renamed over the final
name, so readers (DuckDB globs, `swe-forge sql` during an ingest) see the old file or the new one,
never half of one; a re-materialization replaces a partition rather than adding rows. On any
failure (disk full included) the temporary file is removed and the old partition is untouched.
On an object store (`common.store`) the partition is one PUT of the whole file: the same guarantee.
"""

from __future__ import annotations

import errno
import os
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from swe_forge_dagster.common.store import StorePath, is_remote, parquet_bytes, write_bytes_atomic

PART_FILE = "part-0.parquet"


class LakeWriteError(OSError):
    """Writing a partition failed; nothing of it was left behind."""


def write_partition(table: pa.Table, folder: StorePath, schema: pa.Schema | None = None) -> StorePath:
    """Write `table` as `folder/part-0.parquet` atomically; returns the final path."""
    final = folder / PART_FILE
    if schema is not None:
        table = table.cast(schema)
    if is_remote(folder):
        try:
            write_bytes_atomic(final, parquet_bytes(table))
        except OSError as exc:
            raise LakeWriteError(exc.errno or errno.EIO, f"could not write {final}: {exc}") from exc
        return final
    assert isinstance(folder, Path)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{PART_FILE}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp"
    try:
        pq.write_table(table, tmp, compression="zstd", row_group_size=64_000)
        with open(tmp, "rb") as handle:
            os.fsync(handle.fileno())
        tmp.replace(final)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        if exc.errno == errno.ENOSPC or "No space left" in str(exc):
            raise LakeWriteError(
                errno.ENOSPC, f"disk full while writing {final}; the previous partition (if any) is intact"
            ) from exc
        raise LakeWriteError(exc.errno or errno.EIO, f"could not write {final}: {exc}") from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return final


def _writer_alive(temp: Path) -> bool:
    """Is the process that is writing `temp` (its pid is in the name) still running?"""
    try:
        pid = int(temp.name.rsplit(".", 2)[-2].split("-")[0])
        os.kill(pid, 0)
    except (ValueError, IndexError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def remove_stale_temp_files(folder: StorePath) -> int:
    """Delete temporary files that crashed writers left in `folder` (never a live writer's; an object store
    has none: an interrupted PUT leaves nothing)."""
    removed = 0
    if isinstance(folder, Path) and folder.is_dir():
        for path in folder.glob(f".{PART_FILE}.*.tmp"):
            if not _writer_alive(path):
                path.unlink(missing_ok=True)
                removed += 1
    return removed
