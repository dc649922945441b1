"""Runs whose process is gone are failed and give back their pool slots; a run waiting for a slot says why.

Real processes (a `sleep` killed with SIGKILL), a real Dagster instance, real in-process runs
through the launcher. The end-to-end check with `swe-forge ingest` and `kill -9` is in
test_killed_ingest_runs.py.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
import pytest
from dagster._core.test_utils import create_run_for_test

from swe_forge_dagster.orchestration import launcher
from swe_forge_dagster.orchestration.processes import (
    HOST_TAG,
    PROCESS_TAG,
    identity_fields,
    identity_tags,
    process_identity,
    why_gone,
)
from swe_forge_dagster.orchestration.reaper import reap_dead_runs

POOL = "test_pool"


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that existed and was killed with SIGKILL (and reaped by its parent)."""
    proc = subprocess.Popen(["sleep", "60"])
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return proc.pid


def started_run(instance: dg.DagsterInstance, tags: dict[str, str], run_id: str | None = None) -> str:
    run_id = run_id or str(uuid.uuid4())
    create_run_for_test(instance, run_id=run_id, status=dg.DagsterRunStatus.STARTED, tags=tags)
    return run_id


def hold_slot(instance: dg.DagsterInstance, run_id: str, step: str = "step") -> None:
    assert instance.event_log_storage.claim_concurrency_slot(POOL, run_id, step).is_claimed


def holders(instance: dg.DagsterInstance) -> list[str]:
    return [slot.run_id for slot in instance.event_log_storage.get_concurrency_info(POOL).claimed_slots]


def failure_message(instance: dg.DagsterInstance, run_id: str) -> str:
    (record,) = instance.all_logs(run_id, of_type=dg.DagsterEventType.RUN_FAILURE)
    return record.dagster_event.message or ""


def test_a_process_is_gone_when_killed_restarted_or_its_pid_reused(dead_pid: int) -> None:
    run = "r1"
    me = process_identity(run)
    fields = identity_fields(me)
    assert set(me) == {HOST_TAG, PROCESS_TAG}  # two tags in all
    assert me[HOST_TAG] and fields["start"] and fields["boot"] and fields["run"] == run
    assert why_gone(me, run) is None  # this very process
    killed = process_identity(run, pid=dead_pid)
    assert f"the process running this run (pid {dead_pid} on host {me[HOST_TAG]}) is gone" in why_gone(killed, run)
    older = identity_tags(me[HOST_TAG], {**fields, "start": "1"})  # our pid, an older process's start
    assert "another process" in why_gone(older, run)
    assert "restarted" in why_gone(identity_tags(me[HOST_TAG], {**fields, "boot": "another-boot"}), run)
    # Never judged here: another host's run, a re-execution that inherited the tags, an untagged run.
    assert why_gone({**killed, HOST_TAG: "elsewhere"}, run) is None
    assert why_gone(killed, "a-re-execution") is None
    assert why_gone({}, run) is None


def test_a_zombie_is_gone() -> None:
    proc = subprocess.Popen(["sleep", "60"])
    try:
        tags = process_identity("r", pid=proc.pid)
        assert why_gone(tags, "r") is None
        os.kill(proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while why_gone(tags, "r") is None and time.monotonic() < deadline:  # killed, not yet waited for
            time.sleep(0.05)
        assert why_gone(tags, "r") is not None
    finally:
        proc.kill()
        proc.wait()


def test_reaping_fails_dead_runs_frees_their_slots_and_leaves_the_rest(
    instance: dg.DagsterInstance, dead_pid: int
) -> None:
    instance.event_log_storage.set_concurrency_slots(POOL, 5)
    dead = started_run(instance, {})
    instance.add_run_tags(dead, process_identity(dead, pid=dead_pid))
    alive = started_run(instance, {})
    instance.add_run_tags(alive, process_identity(alive))
    other_host = started_run(instance, {})
    instance.add_run_tags(other_host, {**process_identity(other_host, pid=dead_pid), HOST_TAG: "elsewhere"})
    reexecution = started_run(instance, process_identity(dead, pid=dead_pid))  # tags copied from `dead`
    untagged = started_run(instance, {})
    for run_id in (dead, alive, other_host, reexecution, untagged):
        hold_slot(instance, run_id)

    (reaped,) = reap_dead_runs(instance)

    assert reaped.run_id == dead and reaped.freed == {POOL: 1} and "is gone" in reaped.describe()
    assert instance.get_run_by_id(dead).status == dg.DagsterRunStatus.FAILURE
    assert f"(pid {dead_pid} on host" in failure_message(instance, dead)
    assert instance.get_run_by_id(dead).tags["dagster/max_retries"] == "0"  # the daemon won't re-run it
    assert sorted(holders(instance)) == sorted([alive, other_host, reexecution, untagged])
    for run_id in (alive, other_host, reexecution, untagged):
        assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.STARTED
    assert reap_dead_runs(instance) == []  # idempotent


def test_slots_of_ended_runs_are_freed_after_a_grace_period(instance: dg.DagsterInstance) -> None:
    """A run failed from outside (e.g. in the UI) keeps its slots in Dagster until its daemon frees them."""
    instance.event_log_storage.set_concurrency_slots(POOL, 2)
    ended = started_run(instance, {})
    hold_slot(instance, ended)
    instance.report_run_failed(instance.get_run_by_id(ended), "marked failed by hand")
    assert reap_dead_runs(instance) == [] and holders(instance) == [ended]  # within the grace period
    (freed,) = reap_dead_runs(instance, finished_grace_seconds=0)
    assert freed.run_id == ended and not freed.reason and holders(instance) == []


@contextmanager
def safety_net(instance: dg.DagsterInstance, holder: str, seconds: float = 30) -> Iterator[None]:
    """Free `holder`'s slot after `seconds` if the block is still running: a broken fix fails, never hangs."""
    done = threading.Event()

    def free_unless_done() -> None:
        if not done.wait(seconds):
            instance.event_log_storage.free_concurrency_slots_for_run(holder)

    helper = threading.Thread(target=free_unless_done)
    helper.start()
    try:
        yield
    finally:
        done.set()
        helper.join()


@dg.asset(pool=POOL)
def pooled() -> int:
    return 1


@pytest.fixture
def one_slot(instance: dg.DagsterInstance) -> Iterator[dg.Definitions]:
    instance.event_log_storage.set_concurrency_slots(POOL, 1)
    yield dg.Definitions(assets=[pooled])


def test_launched_runs_carry_their_process_identity(instance: dg.DagsterInstance, one_slot: dg.Definitions) -> None:
    assert launcher.materialize_assets(one_slot, instance, ["pooled"])
    (run,) = instance.get_runs()
    assert identity_fields(dict(run.tags))["run"] == run.run_id and why_gone(dict(run.tags), run.run_id) is None
    assert holders(instance) == []


def test_a_waiting_run_says_what_holds_its_pool(instance: dg.DagsterInstance, one_slot: dg.Definitions) -> None:
    holder = started_run(instance, {})
    instance.add_run_tags(holder, process_identity(holder))  # alive: this process
    hold_slot(instance, holder)
    messages: list[str] = []

    def release_once_told() -> None:
        deadline = time.monotonic() + 30
        while not messages and time.monotonic() < deadline:
            time.sleep(0.1)
        instance.event_log_storage.free_concurrency_slots_for_run(holder)

    releaser = threading.Thread(target=release_once_told)
    releaser.start()
    started = time.monotonic()
    assert launcher.materialize_assets(one_slot, instance, ["pooled"], notify=messages.append)
    releaser.join()
    assert 5 <= time.monotonic() - started < 20
    assert len(messages) == 1, messages
    assert f"for a slot in pool '{POOL}': 1/1 slots held by run(s) {holder[:8]}" in messages[0]
    assert "Ctrl-C stops this run" in messages[0]


def test_a_waiting_run_frees_the_slot_of_a_holder_that_died(
    instance: dg.DagsterInstance, one_slot: dg.Definitions, dead_pid: int
) -> None:
    """A holder killed after this command reaped at start: the wait itself finds it dead."""
    holder = started_run(instance, {})
    instance.add_run_tags(holder, process_identity(holder, pid=dead_pid))
    hold_slot(instance, holder)
    messages: list[str] = []
    started = time.monotonic()
    with safety_net(instance, holder):
        assert launcher.materialize_assets(one_slot, instance, ["pooled"], notify=messages.append)
    assert time.monotonic() - started < 15  # the watcher looks every 2 s; without it: for ever
    assert instance.get_run_by_id(holder).status == dg.DagsterRunStatus.FAILURE
    assert any(m.startswith(f"marked run {holder}") and f"1 in pool {POOL}" in m for m in messages), messages


def test_ctrl_c_stops_a_run_waiting_for_a_slot(instance: dg.DagsterInstance, one_slot: dg.Definitions) -> None:
    holder = started_run(instance, {})
    instance.add_run_tags(holder, process_identity(holder))
    hold_slot(instance, holder)

    threading.Timer(2, os.kill, (os.getpid(), signal.SIGINT)).start()  # recorded by Dagster, acted on by the watcher
    started = time.monotonic()
    with safety_net(instance, holder), pytest.raises(KeyboardInterrupt):
        launcher.materialize_assets(one_slot, instance, ["pooled"], notify=lambda _: None)
    assert time.monotonic() - started < 10
    run = next(r for r in instance.get_runs() if r.run_id != holder)
    assert run.status == dg.DagsterRunStatus.CANCELED
    assert holders(instance) == [holder]  # its own queued claim withdrawn, the holder's slot untouched
    assert [step.run_id for step in instance.event_log_storage.get_concurrency_info(POOL).pending_steps] == [holder]
