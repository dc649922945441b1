"""The lease a host's worker holds on a step while it runs it (`orchestration/step_lease.py`): a second delivery
waits while the lease beats, takes a lease that stopped beating (a dead host's), and of two deliveries that take at
once only one runs; a holder that stalled learns it lost the lease, and its release leaves the new holder's row.

Real parts: a Dagster instance's run storage, on disk (SQLite) and on Debian's Postgres (the deployment's), each with
its key-value table; the conditional writes are that database's."""

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from swe_forge_dagster.orchestration import step_lease
from swe_forge_dagster.orchestration.instance import instance_yaml
from swe_forge_dagster.orchestration.step_lease import StepLease, lease_key, parse, read_raw, take

FAST = {"poll_seconds": 0.1, "beat_seconds": 0.2}


@pytest.fixture(params=["sqlite", "postgres"])
def instance(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator:
    if request.param == "sqlite":
        with dg.instance_for_test(temp_dir=str(tmp_path)) as found:
            yield found
        return
    monkeypatch.setenv("SWE_FORGE_POSTGRES_URL", request.getfixturevalue("postgres_db"))
    (tmp_path / "dagster.yaml").write_text(instance_yaml(postgres=True))
    with dg.DagsterInstance.from_config(str(tmp_path)) as found:
        yield found


def holder_host(instance: dg.DagsterInstance, key: str) -> str | None:
    return (parse(read_raw(instance, key)) or {}).get("host")


def test_a_lease_that_stops_beating_is_taken_over_and_a_released_one_at_once(instance: dg.DagsterInstance) -> None:
    dead = StepLease(instance, lease_key("run-1", ["build"]), "host-a")
    assert dead.take(None)  # its host died: no beat follows
    waited = take(instance, "run-1", ["build"], "host-b", lambda: None, stale_seconds=1.5, **FAST)
    assert waited.lease is not None and waited.waited_for == ["host-a"] and waited.waited_seconds >= 1.5
    assert holder_host(instance, waited.lease.key) == "host-b"
    dead.release()  # host-a's late release leaves host-b's lease alone
    assert holder_host(instance, waited.lease.key) == "host-b"
    waited.lease.release()
    assert read_raw(instance, waited.lease.key) is None  # released: the row is gone
    again = take(instance, "run-1", ["build"], "host-c", lambda: None, stale_seconds=1.5, **FAST)
    assert again.lease is not None and again.waited_for == [] and again.waited_seconds < 1.0
    again.lease.release()


def test_a_beating_lease_is_waited_for_until_the_record_answers(instance: dg.DagsterInstance) -> None:
    with StepLease(instance, lease_key("run-2", ["test"]), "host-a", beat_seconds=0.2) as held:
        assert held.take(None)
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
        assert held.holds() and held.beats >= 5 and not held.lost


def test_of_two_takers_that_read_the_same_row_one_writes_and_a_stalled_holder_learns_it_lost(
    instance: dg.DagsterInstance,
) -> None:
    key = lease_key("run-3", ["build", "test"])
    first, second = StepLease(instance, key, "host-a", 0.2), StepLease(instance, key, "host-b", 0.2)
    assert first.take(None) and not second.take(None)  # both read "nobody": one insert only
    stale = read_raw(instance, key)
    assert second.take(stale) and not StepLease(instance, key, "host-c").take(stale)  # one takeover of a stale row
    first.start_beating()  # host-a comes back from its stall: its next beat finds the row is host-b's
    time.sleep(1.0)
    first.release()
    assert first.lost and holder_host(instance, key) == "host-b"
    second.release()


def test_two_deliveries_at_once_run_one_after_the_other(instance: dg.DagsterInstance) -> None:
    running: list[str] = []
    overlaps: list[list[str]] = []

    def deliver(host: str) -> None:
        waited = take(instance, "run-4", ["build"], host, lambda: None, stale_seconds=5, **FAST)
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


def test_a_beat_that_fails_is_tried_again_and_the_lease_stays(
    instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The database away for one beat (its write raises): the next beat goes on; the lease is neither lost nor
    stale."""
    real = step_lease.compare_and_set
    failures = iter([True])

    def once_away(*args: object) -> bool:
        if next(failures, False):
            raise ConnectionError("the database is away")
        return real(*args)  # type: ignore[arg-type]

    with StepLease(instance, lease_key("run-5", ["test"]), "host-a", beat_seconds=0.2) as held:
        assert held.take(None)
        monkeypatch.setattr(step_lease, "compare_and_set", once_away)
        held.start_beating()
        time.sleep(1.2)
        assert held.holds() and held.beats >= 2 and not held.lost
