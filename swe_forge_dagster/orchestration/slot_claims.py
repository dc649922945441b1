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

Why a patch and not a storage class named in dagster.yaml (public configuration, as
`postgres_storage.py` is for Postgres): such a subclass would still override the same private
methods of the same private class, so it would not take away the dependence on Dagster's
internals; and it would only reach instances whose dagster.yaml names it (not the dagster.yaml a
user already has or edited, not the instances tests and tools open from a folder), failing
silently where it is missing. So the patch stays here, in this one module, behind a tripwire:
`PATCHED_DAGSTER_CODE` records the hash of the source of each Dagster method the patch replaces
or relies on, as in the pinned Dagster, and `tests/test_slot_claims.py` fails with what to
re-check when an upgrade changes any of them (`dagster_code_drift`).
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Sequence
from typing import Any

_INSTALLED = "_swe_forge_atomic_slot_claims"

# The Dagster release the patch was written against and checked on.
PATCHED_DAGSTER_VERSION = "1.13.27"

# SHA-256 of `inspect.getsource` of each method of `SqlEventLogStorage` that `install` replaces
# (`_claim_concurrency_slot`, `assign_pending_steps`) or whose contract it relies on
# (`claim_concurrency_slot` calls `_claim_concurrency_slot` for an assigned step and turns BLOCKED
# into a claim to retry), in the pinned Dagster.
PATCHED_DAGSTER_CODE: dict[str, str] = {
    "_claim_concurrency_slot": "7628812bbe08bc3e6ec3416a46b7f61f03c379ff47ac06d366f99dbbb4a93a72",
    "assign_pending_steps": "d7d5d9f84bd42141b2fb47c7b1d651eceba5c1f6f87d2583291ba95965456188",
    "claim_concurrency_slot": "cbfe2436f7e3b1e6da78e385c187c1b88c2e998a0d5f80ff6a54dee3efd5e03b",
}

_STORAGE_CLASSES = ("SqliteEventLogStorage", "ConsolidatedSqliteEventLogStorage")


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


# What `install` puts on the SQLite storage classes, by method name.
_REPLACEMENTS = {"_claim_concurrency_slot": _claim_concurrency_slot, "assign_pending_steps": _assign_pending_steps}


def install() -> None:
    """Make slot claims and assignments atomic on Dagster's SQLite event log storages (idempotent).

    What each class defined itself under the replaced names is kept in `_INSTALLED`, so that
    `dagster_code_drift` still sees an override a later Dagster adds there.
    """
    from dagster._core.storage.event_log import sqlite as sqlite_storages

    for name in _STORAGE_CLASSES:
        cls = getattr(sqlite_storages, name, None)
        if cls is None or _INSTALLED in cls.__dict__:
            continue
        replaced = {method: cls.__dict__.get(method) for method in _REPLACEMENTS}
        for method, replacement in _REPLACEMENTS.items():
            setattr(cls, method, replacement)
        setattr(cls, _INSTALLED, replaced)


def dagster_code_drift() -> list[str]:
    """What in the installed Dagster differs from the code the patch was written against (empty: none).

    Each entry names a patched or relied-on method whose source hash changed, or a SQLite storage
    class that is gone or that no longer inherits these methods from `SqlEventLogStorage` (the
    patch would then replace, or miss, code it was never checked against).
    """
    from dagster._core.storage.event_log import sqlite as sqlite_storages
    from dagster._core.storage.event_log.sql_event_log import SqlEventLogStorage

    drift = []
    for method, recorded in PATCHED_DAGSTER_CODE.items():
        original = SqlEventLogStorage.__dict__.get(method)
        source = inspect.getsource(original) if original is not None else ""
        if hashlib.sha256(source.encode()).hexdigest() != recorded:
            drift.append(f"SqlEventLogStorage.{method} changed (or is gone) since Dagster {PATCHED_DAGSTER_VERSION}")
    for name in _STORAGE_CLASSES:
        cls = getattr(sqlite_storages, name, None)
        if cls is None:
            drift.append(f"{name} is gone from dagster._core.storage.event_log.sqlite")
            continue
        for method in PATCHED_DAGSTER_CODE:
            owner = next((k for k in cls.__mro__ if _defines(k, method)), None)
            if owner is not SqlEventLogStorage:
                where = owner.__qualname__ if owner else "no class"
                drift.append(f"{name}.{method} is now defined by {where}, not SqlEventLogStorage")
    return drift


def _defines(cls: type, method: str) -> bool:
    """Whether Dagster's own code for `method` is in `cls` (seen through `install`'s replacement)."""
    if method in cls.__dict__.get(_INSTALLED, {}):
        return cls.__dict__[_INSTALLED][method] is not None
    return method in cls.__dict__
