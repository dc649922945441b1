"""Pool slot claims that cannot be lost when several processes claim at once on a SQLite instance.

Dagster 1.13's SQL event log storage claims a slot in two statements: it selects a free slot row
(`step_key IS NULL ... FOR UPDATE SKIP LOCKED`) and then updates that row by id alone. SQLite
ignores `FOR UPDATE`, and pysqlite opens the write transaction only at the UPDATE, so two
processes can select the same free row; both updates succeed (the second waits for the first's
commit, then overwrites it) and both claims return CLAIMED. The loser runs its step holding no
slot row: the pool shows fewer slots held than steps running, and one slot row stays free
although every run holding the pool is in its step. Eight `swe-forge ingest` started together
lost 1 to 6 of their 8 claims in every one of 15 trials of a bare reproduction (8 processes
claiming at the same instant), and the acceptance test `tests/test_killed_ingest_runs.py`
waited for ever for "8/8 slots held". Assigning queued steps (`assign_pending_steps`) has the
same select-then-update-by-id shape: two processes freeing slots at once could both assign the
same queued step, leaving a slot free and the next step queued until another slot is freed.

`install` replaces both, on the SQLite storages only, with one conditional UPDATE each whose
row is chosen in a subquery of the same statement: SQLite runs a statement under its write
lock, so a row already claimed (assigned) cannot be taken again. A claim that finds no free row
returns BLOCKED, and Dagster's executor asks again, as it does for any blocked claim. Postgres
and MySQL storages are left alone (their row locks make the original safe).

Every process that claims slots must run `install`: the CLI and launcher do (in `open_instance`
and before each in-process run), and so does loading the code location (`definitions.defs`), which
is how the run workers of daemon- and UI-launched runs get it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

_INSTALLED = "_swe_forge_atomic_slot_claims"


def _claim_concurrency_slot(self: Any, concurrency_key: str, run_id: str, step_key: str) -> Any:
    """Claim a free slot row of `concurrency_key` for the step, in one statement (CLAIMED or BLOCKED)."""
    import sqlalchemy as db
    from dagster._core.storage.event_log.schema import ConcurrencySlotsTable as Slots
    from dagster._core.storage.sqlalchemy_compat import db_scalar_subquery, db_select
    from dagster._utils.concurrency import ConcurrencySlotStatus

    free = db.and_(Slots.c.concurrency_key == concurrency_key, Slots.c.step_key.is_(None), Slots.c.deleted.is_(False))
    first_free = db_scalar_subquery(db_select([Slots.c.id]).where(free).order_by(Slots.c.id).limit(1))
    claim = Slots.update().where(Slots.c.id == first_free, Slots.c.step_key.is_(None))
    with self.index_connection() as conn:
        claimed = conn.execute(claim.values(run_id=run_id, step_key=step_key)).rowcount
    return ConcurrencySlotStatus.CLAIMED if claimed else ConcurrencySlotStatus.BLOCKED


def _assign_pending_steps(self: Any, concurrency_keys: Sequence[str]) -> None:
    """Assign the first queued step of each pool (priority, then age), in one statement per pool."""
    import sqlalchemy as db
    from dagster._core.storage.event_log.schema import PendingStepsTable as Pending
    from dagster._core.storage.sqlalchemy_compat import db_scalar_subquery, db_select

    if not concurrency_keys:
        return
    with self.index_connection() as conn:
        for key in concurrency_keys:
            queued = db.and_(Pending.c.concurrency_key == key, Pending.c.assigned_timestamp.is_(None))
            order = (Pending.c.priority.desc(), Pending.c.create_timestamp.asc())
            first = db_scalar_subquery(db_select([Pending.c.id]).where(queued).order_by(*order).limit(1))
            assign = Pending.update().where(Pending.c.id == first, Pending.c.assigned_timestamp.is_(None))
            conn.execute(assign.values(assigned_timestamp=db.func.now()))


def install() -> None:
    """Make slot claims and assignments atomic on Dagster's SQLite event log storages (idempotent)."""
    from dagster._core.storage.event_log import sqlite as sqlite_storages

    for name in ("SqliteEventLogStorage", "ConsolidatedSqliteEventLogStorage"):
        cls = getattr(sqlite_storages, name, None)
        if cls is None or cls.__dict__.get(_INSTALLED):
            continue
        cls._claim_concurrency_slot = _claim_concurrency_slot
        cls.assign_pending_steps = _assign_pending_steps
        setattr(cls, _INSTALLED, True)
