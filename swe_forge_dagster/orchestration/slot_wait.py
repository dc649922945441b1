"""Watch an in-process run while it waits for a pool slot: say what it waits for, let Ctrl-C stop it.

Dagster 1.13's in-process executor waits for a pool slot in a loop on the run's thread. That
loop (a) prints nothing, so a run blocked by slots that will never come back looks hung, and
(b) never looks at interrupts: execution installs a SIGINT handler that only records the
signal, to be raised at the next step's user code, which a step waiting for a slot never
reaches, so Ctrl-C is swallowed for as long as the wait lasts. (The loop also never sleeps:
`InstanceConcurrencyContext.interval_to_next_pending_claim_check` returns `min(0, …)`, so a
waiting run spins on one CPU core.)

`SlotWaitWatcher` runs beside the execution, on a side thread that only reads the instance:
- after `after_seconds` of waiting it calls `notify` with the pool, its limit, and the runs
  holding its slots (again when the holders change, and every 30 s);
- while waiting it asks `reap_dead_runs` about those holders, so slots of a process killed after
  this command started come back without another command;
- on Ctrl-C during a wait (Dagster's recorded-interrupt flag is set and the run is still
  waiting) it marks the run CANCELING and raises KeyboardInterrupt in the executing thread.
  Dagster's run loop treats that like an interrupt of a step: the run ends CANCELED and its
  queued claims are withdrawn; `interrupted` tells the launcher to stop.

Ctrl-C during a step's own code needs none of this: Dagster raises it there itself.
"""

from __future__ import annotations

import contextlib
import ctypes
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

import dagster as dg
from dagster._utils.interrupts import check_captured_interrupt, pop_captured_interrupt

from swe_forge_dagster.orchestration.reaper import reap_dead_runs

Notify = Callable[[str], None]
REPEAT_SECONDS = 30.0


@dataclass(frozen=True)
class SlotWait:
    """One step of the watched run waiting for a slot of `pool`."""

    pool: str
    step_key: str
    since: float  # when the step asked for a slot (epoch seconds)
    limit: int
    holders: tuple[tuple[str, str], ...]  # (run id, step key) holding the pool's slots
    queued: int  # steps of any run waiting for this pool

    def describe(self, run_id: str, now: float) -> str:
        runs = list(dict.fromkeys(run for run, _ in self.holders))
        shown = ", ".join(run[:8] for run in runs[:10]) + (f" and {len(runs) - 10} more" if len(runs) > 10 else "")
        return (
            f"run {run_id[:8]}: step {self.step_key} has waited {now - self.since:.0f}s for a slot in pool "
            f"{self.pool!r}: {len(self.holders)}/{self.limit} slots held by run(s) {shown or 'none'}; "
            f"{self.queued} step(s) queued for it. Ctrl-C stops this run. Slots of a run whose process was "
            "killed are freed when it is seen dead (any swe-forge command does this); the UI's Concurrency "
            "page frees them by hand."
        )


def waits_of(instance: dg.DagsterInstance, run_id: str) -> list[SlotWait]:
    """The steps of `run_id` queued for a pool slot they do not hold yet."""
    storage = instance.event_log_storage
    waits = []
    for pool, info in storage.get_concurrency_infos(sorted(storage.get_concurrency_keys())).items():
        claimed = {(slot.run_id, slot.step_key) for slot in info.claimed_slots}
        for step in info.pending_steps:
            if step.run_id == run_id and (run_id, step.step_key) not in claimed:
                holders = tuple(sorted(claimed))
                waits.append(
                    SlotWait(
                        pool,
                        step.step_key,
                        step.enqueued_timestamp.timestamp(),
                        info.limit or 0,
                        holders,
                        len(info.pending_steps) - len(claimed),
                    )
                )
    return waits


def _raise_in_thread(thread_id: int, error: type[BaseException]) -> None:
    """Raise `error` in another thread at its next Python instruction (CPython's async exception)."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread_id), ctypes.py_object(error))


class SlotWaitWatcher:
    """`with SlotWaitWatcher(instance, run_id, notify): job.execute_in_process(run_id=run_id, ...)`."""

    def __init__(
        self,
        instance: dg.DagsterInstance,
        run_id: str,
        notify: Notify,
        after_seconds: float = 5.0,
        poll_seconds: float = 2.0,
    ) -> None:
        self.instance = instance
        self.run_id = run_id
        self.notify = notify
        self.after_seconds = after_seconds
        self.poll_seconds = poll_seconds
        self.interrupted = False
        self._stop = threading.Event()
        self._target = threading.get_ident()
        self._thread = threading.Thread(target=self._watch, name=f"slot-wait-{run_id[:8]}", daemon=True)
        self._told: dict[tuple[str, str], tuple[float, frozenset[str]]] = {}

    def __enter__(self) -> SlotWaitWatcher:
        self._target = threading.get_ident()
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _watch(self) -> None:
        last_look = next_look = 0.0
        while not self._stop.wait(0.1):
            # A recorded Ctrl-C is looked at within 0.5 s; Dagster raises it itself unless the run waits.
            interrupt = check_captured_interrupt()
            now = time.monotonic()
            if now < (min(next_look, last_look + 0.5) if interrupt else next_look):
                continue
            last_look, next_look = now, now + self.poll_seconds
            try:
                waits = waits_of(self.instance, self.run_id)
                if interrupt and waits and not self._stop.is_set():
                    self._interrupt(waits[0])
                    return
                self._report(waits)
            except Exception as exc:  # a watcher failure must never fail the run
                next_look = time.monotonic() + 30
                with contextlib.suppress(Exception):
                    self.notify(f"run {self.run_id[:8]}: cannot inspect pool slots: {type(exc).__name__}: {exc}")

    def _report(self, waits: list[SlotWait]) -> None:
        now = time.time()
        for wait in waits:
            holders = frozenset(run for run, _ in wait.holders)
            reaped = reap_dead_runs(self.instance, holders)
            for dead in reaped:
                self.notify(dead.describe())
            if reaped or len(wait.holders) < wait.limit or now - wait.since < self.after_seconds:
                continue  # a slot is (or was just made) free: the wait is about to end
            told_at, told_holders = self._told.get((wait.pool, wait.step_key), (0.0, None))
            if told_holders != holders or now - told_at >= REPEAT_SECONDS:
                self._told[(wait.pool, wait.step_key)] = (now, holders)
                self.notify(wait.describe(self.run_id, now))

    def _interrupt(self, wait: SlotWait) -> None:
        pop_captured_interrupt()  # handled here: Dagster must not raise it a second time later
        self.interrupted = True
        run = self.instance.get_run_by_id(self.run_id)
        if run is not None and not run.is_finished:
            message = f"interrupted (Ctrl-C) while waiting for a slot in pool {wait.pool!r}"
            self.instance.report_run_canceling(run, message)
        _raise_in_thread(self._target, KeyboardInterrupt)
