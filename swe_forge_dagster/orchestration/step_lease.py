"""A step in flight is held by the delivery that runs it: a second delivery of its message waits, never runs beside it.

RabbitMQ hands an unacknowledged message out again whenever the connection that took it closes: a host killed, and
also a broker restart or a network blip while the worker that took it carries on. In the last two, the first delivery
still runs its step container; the step's record shows an attempt that started and has not ended, which is exactly
what a dead host's step looks like, so the record alone (`step_once.already_done`) cannot tell the two apart.

The holder can: the worker that runs a step holds a lease on it in the run storage's key-value table (the deployment's
Postgres, which every host reaches), and beats it every `BEAT_SECONDS` while the container runs. A delivery that finds
the lease beating waits, reading the record meanwhile: once the first delivery ends, the record answers it (the step
succeeded, or its attempt ended) or, for a new attempt, it runs. A lease that stops beating for `STALE_SECONDS`
(measured on the waiter's own clock, from the last change it saw, so hosts' clocks need not agree) is a dead host's,
and the waiter takes the step over. Taking is write, settle, read back: of two deliveries that take at once, the last
write wins and the other goes back to waiting.
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

LOG = logging.getLogger(__name__)
KEY_PREFIX = "swe-forge/step-lease/"
BEAT_SECONDS = 5.0
STALE_SECONDS = 30.0
"""Six beats missed: a holder whose writes to Postgres stall that long is taken for dead."""
POLL_SECONDS = 1.0
SETTLE_SECONDS = 1.0
"""Between a taker's write and its read back: longer than two writes' round trips, so the later taker is seen."""
Answer = TypeVar("Answer")


def lease_key(run_id: str, step_keys: Sequence[str]) -> str:
    return f"{KEY_PREFIX}{run_id}/{','.join(sorted(step_keys))}"


def read_holder(instance: dg.DagsterInstance, key: str) -> dict | None:
    """The delivery holding `key` now (its token, host and beat), or None when nobody does."""
    raw = instance.run_storage.get_cursor_values({key}).get(key)
    try:
        held = json.loads(raw) if raw else None
    except ValueError:
        return None
    return held if isinstance(held, dict) and held.get("token") else None


@dataclass
class StepLease:
    """One delivery's hold on its step: written, then beaten by a thread until `release`."""

    instance: dg.DagsterInstance
    key: str
    host: str
    beat_seconds: float = BEAT_SECONDS
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    beats: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def write(self) -> None:
        record = {"token": self.token, "host": self.host, "beat": self.beats}
        self.instance.run_storage.set_cursor_values({self.key: json.dumps(record)})

    def holds(self) -> bool:
        return (read_holder(self.instance, self.key) or {}).get("token") == self.token

    def start_beating(self) -> None:
        self._thread = threading.Thread(target=self._beat, name=f"lease {self.key}", daemon=True)
        self._thread.start()

    def _beat(self) -> None:
        while not self._stop.wait(self.beat_seconds):
            if not self.holds():  # taken over after a stall: the step now runs elsewhere too; say so, stop beating
                LOG.warning("%s: the lease on %s was taken by another delivery while this one ran", self.host, self.key)
                return
            self.beats += 1
            self.write()

    def release(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.holds():
            self.instance.run_storage.set_cursor_values({self.key: ""})

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
    settle_seconds: float = SETTLE_SECONDS,
    beat_seconds: float = BEAT_SECONDS,
) -> Waited[Answer]:
    """Wait while another delivery holds the step and beats, asking the record (`answered`) meanwhile; return its
    answer, or the lease once this delivery holds it (beating: run the step, then release it)."""
    key = lease_key(run_id, step_keys)
    started = time.monotonic()
    waited = Waited[Answer]()
    seen: dict | None = None
    changed_at = started
    while True:
        if (answer := answered()) is not None:
            waited.answer = answer
            break
        holder = read_holder(instance, key)
        now = time.monotonic()
        if holder is not None and holder != seen:
            seen, changed_at = holder, now
            if holder["host"] not in waited.waited_for:
                waited.waited_for.append(holder["host"])
        if holder is None or now - changed_at >= stale_seconds:
            if holder is not None:
                LOG.warning("%s: the lease on %s stopped beating (%s): taking the step over", host, key, holder)
            lease = StepLease(instance, key, host, beat_seconds)
            lease.write()
            time.sleep(settle_seconds)
            if lease.holds():
                lease.start_beating()
                waited.lease = lease
                break
            seen, changed_at = None, time.monotonic()  # another delivery took it at the same moment: wait for it
        time.sleep(poll_seconds)
    waited.waited_seconds = time.monotonic() - started
    return waited
