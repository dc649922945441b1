"""Request slots shared by every machine on the shared Postgres: `pg_try_advisory_lock`, one per slot.

The flock slots (`common.slots`) cap requests on one machine; N machines would send N times the
limit. Here slot `i` of `name` is the session advisory lock (hash of name, i) in the shared database.
It is released when the request ends, and by the server itself when the session ends: a process that
dies (killed, crashed) closes its socket and its slots are free at once; a machine that vanishes is
detected by TCP keepalives (`common.postgres`) within about a minute.

One `PostgresSlots` holds one connection of its own (never the shared pool: a pooled connection could
be handed to another thread while its session holds a lock), and its threads take their locks on it in
turn. A session may take the same advisory lock twice (they stack), so the object remembers which
slots its threads hold and never tries those. Threads queue on a local semaphore first, as with flock.
If that connection is lost (a restarted server), the locks went with it: the next hold reconnects, on a
new session generation; a thread that took its slot on an older generation releases nothing (its index
may have been taken again on the new session, by another thread).
"""

from __future__ import annotations

import random
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg2
import psycopg2.extensions

from swe_forge_dagster.common.postgres import Database
from swe_forge_dagster.common.slots import SlotTimeoutError


def slot_namespace(name: str) -> int:
    """The first advisory-lock key of the slots named `name` (a signed 32-bit hash; the slot index is the second)."""
    value = zlib.crc32(f"swe-forge-slots:{name}".encode())
    return value - 2**32 if value >= 2**31 else value


class PostgresSlots:
    """`limit` slots named `name`, shared by every process on every machine using `db`; like `common.slots.Slots`."""

    def __init__(
        self, db: Database, name: str, limit: int, poll_seconds: float = 0.05, max_poll_seconds: float = 0.25
    ) -> None:
        if limit < 1:
            raise ValueError(f"slot limit for {name!r} must be >= 1, got {limit}")
        self.db = db
        self.name = name
        self.limit = limit
        self.poll_seconds = poll_seconds
        self.max_poll_seconds = max_poll_seconds
        self.namespace = slot_namespace(name)
        self._local = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()  # guards the connection and `_held`
        self._connection: psycopg2.extensions.connection | None = None
        self._held: set[int] = set()
        self._generation = 0  # which session `_held` is about: a slot taken on an older one went with it

    def __repr__(self) -> str:
        return f"PostgresSlots({self.name!r}, {self.limit}, {self.db.where})"

    @contextmanager
    def hold(self, timeout: float | None = None) -> Iterator[int]:
        """Hold one slot; yields its index. Raises `SlotTimeoutError` when none is free within `timeout`."""
        deadline = None if timeout is None else time.monotonic() + timeout
        acquired = self._local.acquire() if timeout is None else self._local.acquire(timeout=timeout)
        if not acquired:
            raise SlotTimeoutError(f"no free {self.name} slot within {timeout}s")
        try:
            index, generation = self._acquire(deadline)
            try:
                yield index
            finally:
                self._release(index, generation)
        finally:
            self._local.release()

    def _acquire(self, deadline: float | None) -> tuple[int, int]:
        """A free slot: its index and the generation of the session holding it."""
        wait = self.poll_seconds
        while True:
            with self._lock:
                index = self._try_free_slot()
                generation = self._generation
            if index is not None:
                return index, generation
            if deadline is not None and time.monotonic() > deadline:
                raise SlotTimeoutError(f"no free {self.name} slot (all {self.limit} held on the shared database)")
            time.sleep(wait * random.uniform(0.5, 1.5))
            wait = min(wait * 1.5, self.max_poll_seconds)

    def _try_free_slot(self) -> int | None:
        """One pass over the slots this process does not hold (caller holds `_lock`); the one locked, or None."""
        for attempt in range(2):  # the kept connection may have died with a restarted server: then a new one
            if self._connection is None or self._connection.closed:
                self._drop_connection()
                self._connection = self.db.connect()  # a new session (generation) holds nothing
            start = random.randrange(self.limit)  # spread the processes over the slots
            try:
                with self._connection.cursor() as cursor:
                    for offset in range(self.limit):
                        index = (start + offset) % self.limit
                        if index in self._held:
                            continue
                        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", (self.namespace, index))
                        if cursor.fetchone()[0]:
                            self._held.add(index)
                            return index
                return None
            except psycopg2.Error as exc:
                self._drop_connection()
                if attempt == 1:
                    raise self.db.error(f"taking a {self.name} slot", exc) from None
        return None

    def _release(self, index: int, generation: int) -> None:
        with self._lock:
            if generation != self._generation or index not in self._held or self._connection is None:
                # the session that held it is gone, and the lock with it; the same index may now be another
                # thread's, taken on the new session: unlocking it would free that thread's slot
                return
            self._held.discard(index)
            try:
                with self._connection.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s, %s)", (self.namespace, index))
            except psycopg2.Error:
                self._drop_connection()  # ending the session releases every lock it held

    def _drop_connection(self) -> None:
        if self._connection is not None:
            self._connection.close()
        self._connection, self._held = None, set()
        self._generation += 1

    def close(self) -> None:
        """End the session (any slot still held is released by the server)."""
        with self._lock:
            self._drop_connection()
