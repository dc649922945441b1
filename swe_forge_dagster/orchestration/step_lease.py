"""A step in flight is held by the delivery that runs it: a second delivery of its message waits, never runs beside it.

RabbitMQ hands an unacknowledged message out again whenever the connection that took it closes: a host killed, and
also a broker restart or a network blip while the worker that took it carries on. In the last two, the first delivery
still runs its step container; the step's record shows an attempt that started and has not ended, which is exactly
what a dead host's step looks like, so the record alone (`step_once.already_done`) cannot tell the two apart.

The holder can: the worker that runs a step holds a lease on it, a row of the run storage's key-value table (the
deployment's Postgres, which every host reaches), and beats it every `BEAT_SECONDS` while the container runs. A
delivery that finds the lease beating waits, reading the record meanwhile: once the first delivery ends, the record
answers it (the step succeeded, or its attempt ended) or, for a new attempt, it runs. A lease that stops beating for
`STALE_SECONDS` is a dead host's, and the waiter takes the step over; the time is measured on the waiter's own clock
from the last change it saw (hosts' clocks need not agree), so even a lease dead for hours costs a newcomer that long.

Every write is a compare-and-set on the row (`INSERT` of a row nobody holds, `UPDATE ... WHERE value = <what was
read>`, `DELETE ... WHERE value = <mine>`): of two deliveries that take at once exactly one row write succeeds, a
holder that stalled past `STALE_SECONDS` learns at its next beat that it lost the lease, and its release never erases
the lease of the delivery that took over. Dagster's own `set_cursor_values` is an upsert with no such condition.
"""

from __future__ import annotations

import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import dagster as dg
from dagster._core.storage.runs.schema import KeyValueStoreTable
from dagster._core.storage.runs.sql_run_storage import SqlRunStorage
from sqlalchemy import exc as db_exc

LOG = logging.getLogger(__name__)
KEY_PREFIX = "swe-forge/step-lease/"
BEAT_SECONDS = 5.0
STALE_SECONDS = 30.0
"""Six beats missed: a holder whose writes to Postgres fail or stall that long is taken for dead."""
POLL_SECONDS = 2.0
"""How often a waiting delivery reads the record and the lease (each read is one query of the run's step events)."""
Answer = TypeVar("Answer")


def sql_storage(instance: dg.DagsterInstance) -> SqlRunStorage:
    """The SQL run storage under the instance: `storage: postgres:` wraps it (`LegacyRunStorage._storage`)."""
    storage = instance.run_storage
    inner = getattr(getattr(storage, "_storage", None), "run_storage", None)
    storage = inner if inner is not None else storage
    if not isinstance(storage, SqlRunStorage):
        raise TypeError(f"a step lease needs a SQL run storage (Postgres, SQLite), not {type(storage).__name__}")
    return storage


def lease_key(run_id: str, step_keys: Sequence[str]) -> str:
    return f"{KEY_PREFIX}{run_id}/{','.join(sorted(step_keys))}"


def read_raw(instance: dg.DagsterInstance, key: str) -> str | None:
    return sql_storage(instance).get_cursor_values({key}).get(key)


def parse(raw: str | None) -> dict | None:
    """The holder a row names (its token, host and beat), or None when the row names nobody."""
    try:
        held = json.loads(raw) if raw else None
    except ValueError:
        return None
    return held if isinstance(held, dict) and held.get("token") else None


def compare_and_set(instance: dg.DagsterInstance, key: str, expected: str | None, new: str | None) -> bool:
    """Write `new` (None: delete the row) only if the row still holds `expected` (None: no row). True if written."""
    table = KeyValueStoreTable
    with sql_storage(instance).connect() as conn:
        if expected is None:
            try:
                conn.execute(table.insert().values(key=key, value=new))
            except db_exc.IntegrityError:
                return False
            return True
        matching = (table.c.key == key) & (table.c.value == expected)
        statement = table.delete().where(matching) if new is None else table.update().where(matching).values(value=new)
        return conn.execute(statement).rowcount == 1


@dataclass
class StepLease:
    """One delivery's hold on its step: taken, then beaten by a thread until `release`."""

    instance: dg.DagsterInstance
    key: str
    host: str
    beat_seconds: float = BEAT_SECONDS
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    beats: int = 0
    lost: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def value(self, beats: int | None = None) -> str:
        return json.dumps({"token": self.token, "host": self.host, "beat": self.beats if beats is None else beats})

    def take(self, expected: str | None) -> bool:
        """Hold the lease if its row still reads `expected` (None: no row): one conditional write."""
        return compare_and_set(self.instance, self.key, expected, self.value())

    def holds(self) -> bool:
        return (parse(read_raw(self.instance, self.key)) or {}).get("token") == self.token

    def start_beating(self) -> None:
        self._thread = threading.Thread(target=self._beat, name=f"lease {self.key}", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(self.beat_seconds):
            try:
                if compare_and_set(self.instance, self.key, self.value(), self.value(self.beats + 1)):
                    self.beats += 1
                    continue
            except Exception:  # Postgres away for a while: keep trying; the lease goes stale only if it stays away
                LOG.exception("%s: could not beat the lease on %s", self.host, self.key)
                continue
            self.lost = True  # taken over after a stall: the step may now run elsewhere too
            LOG.warning("%s: the lease on %s was taken by another delivery while this one ran", self.host, self.key)
            return

    def release(self) -> None:
        """Stop beating and delete the row if it is still this delivery's; never raises (the step's result stands)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.beat_seconds + 30)
        try:
            compare_and_set(self.instance, self.key, self.value(), None)
        except Exception:
            LOG.exception("%s: could not release the lease on %s (it goes stale)", self.host, self.key)

    def __enter__(self) -> StepLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@dataclass
class Waited(Generic[Answer]):
    """What a delivery got: the record's answer (`answer`), or the lease (`lease`), and whom it waited for."""

    answer: Answer | None = None
    lease: StepLease | None = None
    waited_for: list[str] = field(default_factory=list)
    waited_seconds: float = 0.0


def take(
    instance: dg.DagsterInstance,
    run_id: str,
    step_keys: Sequence[str],
    host: str,
    answered: Callable[[], Answer | None],
    *,
    stale_seconds: float = STALE_SECONDS,
    poll_seconds: float = POLL_SECONDS,
    beat_seconds: float = BEAT_SECONDS,
) -> Waited[Answer]:
    """Wait while another delivery holds the step and beats, asking the record (`answered`) meanwhile; return its
    answer, or the lease once this delivery holds it (beating: run the step, then release it). A database error
    while waiting is retried at the next poll, not raised: the step is still to be answered or run."""
    key = lease_key(run_id, step_keys)
    started = time.monotonic()
    waited = Waited[Answer]()
    seen: str | None = None
    changed_at = started
    while True:
        try:
            if (answer := answered()) is not None:
                waited.answer = answer
                break
            raw = read_raw(instance, key)
            holder = parse(raw)
            now = time.monotonic()
            if raw != seen:
                seen, changed_at = raw, now
                if holder is not None and holder.get("host") not in waited.waited_for:
                    waited.waited_for.append(str(holder.get("host")))
            if holder is None or now - changed_at >= stale_seconds:
                if holder is not None:
                    LOG.warning("%s: the lease on %s stopped beating (%s): taking the step over", host, key, holder)
                lease = StepLease(instance, key, host, beat_seconds)
                if lease.take(raw):
                    lease.start_beating()
                    waited.lease = lease
                    break
                continue  # another delivery wrote first: read what it wrote, and wait for it
        except Exception:
            LOG.exception("%s: reading the record or the lease of %s failed; trying again", host, key)
        time.sleep(poll_seconds)
    waited.waited_seconds = time.monotonic() - started
    return waited
