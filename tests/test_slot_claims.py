"""Pool slots claimed by processes at the same instant on a SQLite instance are all recorded.

Dagster 1.13's own claim (select a free slot row, then update it by id) let two processes take
the same row: both were told CLAIMED, one slot row stayed free (8 processes: 1 to 6 claims lost
in every trial). `orchestration.slot_claims` claims in one conditional UPDATE.

That module patches Dagster's private SQLite storage, so a tripwire here fails loudly when the
pinned Dagster changes the code the patch replaces or relies on.
"""

from __future__ import annotations

import multiprocessing
import time
import uuid
from pathlib import Path

import dagster as dg
from dagster._core.instance.ref import InstanceRef

from swe_forge_dagster.orchestration.slot_claims import PATCHED_DAGSTER_VERSION, dagster_code_drift, install

POOL = "p"
LIMIT = 8


def claim_once(home: str, at: float, results: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    install()
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(home)) as instance:
        run_id = str(uuid.uuid4())
        time.sleep(max(0.0, at - time.time()))
        results.put((run_id, instance.event_log_storage.claim_concurrency_slot(POOL, run_id, "step").is_claimed))


def claim_together(home: Path, processes: int) -> tuple[set[str], set[str]]:
    """Runs told CLAIMED, and runs holding a slot row, after `processes` claims at one instant."""
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    at = time.time() + 1.0
    procs = [context.Process(target=claim_once, args=(str(home), at, results)) for _ in range(processes)]
    for proc in procs:
        proc.start()
    told = [results.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
        held = {slot.run_id for slot in instance.event_log_storage.get_concurrency_info(POOL).claimed_slots}
    return {run for run, claimed in told if claimed}, held


def test_simultaneous_claims_each_hold_their_own_slot(tmp_path: Path) -> None:
    for trial in range(2):
        home = tmp_path / f"home-{trial}"
        home.mkdir()
        with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home))) as instance:
            instance.event_log_storage.set_concurrency_slots(POOL, LIMIT)
        told, held = claim_together(home, LIMIT + 2)
        assert len(told) == LIMIT and told == held, (trial, len(told), len(held))


def test_the_patched_dagster_code_is_the_code_the_patch_was_checked_against() -> None:
    install()  # as every process does: the tripwire must see through the patch
    drift = dagster_code_drift()
    assert not drift, (
        f"Dagster {dg.__version__} changed the slot-claim code that orchestration/slot_claims.py patches "
        f"(written against {PATCHED_DAGSTER_VERSION}):\n  " + "\n  ".join(drift) + "\n"
        "Re-check in dagster/_core/storage/event_log/sql_event_log.py: does the claim still select a free slot "
        "row and then update it by id (racy on SQLite), and does assign_pending_steps still select then update "
        "by id? If Dagster now claims atomically, delete slot_claims.py and its install() calls; otherwise "
        "port the one-statement UPDATEs to the new code, run this module's race test, and record the new "
        "hashes and version in PATCHED_DAGSTER_CODE / PATCHED_DAGSTER_VERSION."
    )
