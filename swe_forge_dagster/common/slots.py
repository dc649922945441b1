"""A counting semaphore shared by every process on the machine, built on `flock`.

Dagster pools cap *steps* across runs, but one step may download many hours at once; this caps
the requests themselves across all runs. `flock` locks die with their process, so a crashed
run never leaks a slot. They hold on one machine; with the shared database, `common.slots_postgres`
holds them across machines.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Protocol


class SlotTimeoutError(TimeoutError):
    """No slot became free in time."""


class RequestSlots(Protocol):
    """What the clients hold around each request: these flock slots (one machine), or the shared database's
    (`common.slots_postgres`, every machine); `wiring.shared_state` chooses by the setting."""

    name: str
    limit: int

    def hold(self, timeout: float | None = None) -> AbstractContextManager[int]: ...


class Slots:
    """`limit` slots named `name` under `lock_dir`; `with slots.hold(): ...` takes one."""

    def __init__(self, lock_dir: Path, name: str, limit: int, poll_seconds: float = 0.05) -> None:
        if limit < 1:
            raise ValueError(f"slot limit for {name!r} must be >= 1, got {limit}")
        self.dir = Path(lock_dir) / name
        self.name = name
        self.limit = limit
        self.poll_seconds = poll_seconds
        self._local = threading.BoundedSemaphore(limit)

    @contextmanager
    def hold(self, timeout: float | None = None) -> Iterator[int]:
        """Hold one slot; yields its index. Threads queue in-process before touching files."""
        deadline = None if timeout is None else time.monotonic() + timeout
        acquired = self._local.acquire() if timeout is None else self._local.acquire(timeout=timeout)
        if not acquired:
            raise SlotTimeoutError(f"no free {self.name} slot within {timeout}s")
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            fd, index = self._acquire_file(deadline)
            try:
                yield index
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)
        finally:
            self._local.release()

    def _acquire_file(self, deadline: float | None) -> tuple[int, int]:
        start = os.getpid() % self.limit  # spread processes over the slots
        while True:
            for offset in range(self.limit):
                index = (start + offset) % self.limit
                fd = os.open(self.dir / f"slot-{index}.lock", os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    os.close(fd)
                    continue
                return fd, index
            if deadline is not None and time.monotonic() > deadline:
                raise SlotTimeoutError(f"no free {self.name} slot (all {self.limit} held by other processes)")
            time.sleep(self.poll_seconds)
