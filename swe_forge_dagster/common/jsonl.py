"""Durable appends of whole lines to a shared JSONL file.

Several processes append to the same ledgers; an exclusive `flock` makes each append atomic
with respect to the others. A crash (or a full disk) can still leave a torn last line; the next
append then starts with a newline, so the torn fragment stays a lone bad line that readers skip
instead of swallowing the first record written after it.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


def append_lines(path: Path, data: bytes, fsync: bool = False) -> None:
    """Append `data` (whole lines, each ending in a newline) under an exclusive lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the lock
