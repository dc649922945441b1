"""The lease a host's worker holds on a step while it runs it (`orchestration/step_lease.py`): a second delivery
waits while the lease beats, takes a lease that stopped beating (a dead host's), and of two deliveries that take at
once only one runs. Real parts: a Dagster instance on disk (its run storage's key-value table, as on Postgres)."""

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from swe_forge_dagster.orchestration.step_lease import StepLease, lease_key, read_holder, take

FAST = {"poll_seconds": 0.1, "settle_seconds": 0.3, "beat_seconds": 0.2}


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test(temp_dir=str(tmp_path)) as found:
        yield found


def test_a_lease_that_stops_beating_is_taken_over_and_a_released_one_at_once(instance: dg.DagsterInstance) -> None:
    dead = StepLease(instance, lease_key("run-1", ["build"]), "host-a")
    dead.write()  # its host died: no beat follows
    waited = take(instance, "run-1", ["build"], "host-b", lambda: None, stale_seconds=1.5, **FAST)
    assert waited.lease is not None and waited.waited_for == ["host-a"] and waited.waited_seconds >= 1.5
    assert read_holder(instance, waited.lease.key)["host"] == "host-b"
    waited.lease.release()
    assert read_holder(instance, waited.lease.key) is None
    again = take(instance, "run-1", ["build"], "host-c", lambda: None, stale_seconds=1.5, **FAST)
    assert again.lease is not None and again.waited_for == [] and again.waited_seconds < 1.0
    again.lease.release()


def test_a_beating_lease_is_waited_for_until_the_record_answers(instance: dg.DagsterInstance) -> None:
    with StepLease(instance, lease_key("run-2", ["test"]), "host-a", beat_seconds=0.2) as held:
        held.write()
        held.start_beating()
        ended_at = time.monotonic() + 2.0
        waited = take(
            instance,
            "run-2",
            ["test"],
            "host-b",
            lambda: "succeeded" if time.monotonic() >= ended_at else None,
            stale_seconds=1.0,  # shorter than the wait: only the beats keep host-b waiting
            **FAST,
        )
        assert (waited.answer, waited.lease, waited.waited_for) == ("succeeded", None, ["host-a"])
        assert held.holds()


def test_of_two_deliveries_taking_at_once_one_runs_and_the_other_waits_for_it(instance: dg.DagsterInstance) -> None:
    running: list[str] = []
    overlaps: list[list[str]] = []

    def deliver(host: str) -> None:
        waited = take(instance, "run-3", ["build", "test"], host, lambda: None, stale_seconds=5, **FAST)
        assert waited.lease is not None
        with waited.lease:
            running.append(host)
            overlaps.append(list(running))
            time.sleep(1.0)
            running.remove(host)

    threads = [threading.Thread(target=deliver, args=(host,)) for host in ("host-a", "host-b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(len(seen) for seen in overlaps) == [1, 1], overlaps  # each ran alone
