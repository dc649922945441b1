"""Fail the runs whose process is gone, and give back the pool slots they hold.

A run executed in-process (the `swe-forge` commands, the demo) ends its own run and frees its
own slots; when its process is killed with `kill -9` it can do neither, so the run stays STARTED
and its slots stay claimed: every later step of that pool waits for ever. Dagster's daemon
cannot see this (an in-process run has no run worker to health-check), so `open_instance` calls
`reap_dead_runs` at the start of every command, and a run waiting for a slot calls it for the
runs holding that pool (`slot_wait`).

What is reaped, and why it is safe:
- unfinished runs whose identity tags (`processes`) say they ran on this host and whose process
  no longer exists: marked FAILURE with the reason, their slots and queued claims freed. Runs of
  other hosts, runs without the tags (UI- and daemon-launched runs) and re-executions that
  inherited the tags are never touched;
- finished runs still holding slots (marked failed or canceled from outside, e.g. in the UI):
  their slots are freed after a grace period, as Dagster's daemon does with
  `free_slots_after_run_end_seconds` (a step process of a multiprocess run may outlive its run
  briefly).

A reaped run is not retried by Dagster's run-retry daemon (`dagster/max_retries` set to 0 first):
the command that was killed is the user's to run again, not the daemon's to repeat elsewhere.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import dagster as dg
from dagster._core.events import JobFailureData, RunFailureReason

from swe_forge_dagster.orchestration.processes import HOST_TAG, hostname, why_gone

# Statuses of a run that has not ended (QUEUED/NOT_STARTED: a process killed before the run began).
UNFINISHED = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]
FINISHED = [dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED]
FINISHED_GRACE_SECONDS = 60.0
NO_RETRY = {"dagster/max_retries": "0"}


@dataclass(frozen=True)
class ReapedRun:
    """A run whose slots were freed; `reason` is set when it was also marked failed here."""

    run_id: str
    job_name: str
    reason: str = ""
    freed: dict[str, int] = field(default_factory=dict)  # pool -> slots it held

    def describe(self) -> str:
        slots = ", ".join(f"{n} in pool {pool}" for pool, n in sorted(self.freed.items())) or "none"
        what = (
            f"marked run {self.run_id} ({self.job_name}) failed: {self.reason}"
            if self.reason
            else (f"run {self.run_id} ({self.job_name}) had ended")
        )
        return f"{what}; freed its slots: {slots}"


def slots_by_run(instance: dg.DagsterInstance) -> tuple[dict[str, Counter[str]], set[str]]:
    """Claimed slots per run (run id -> pool -> count), and every run with a claim or a queued step."""
    storage = instance.event_log_storage
    if not storage.supports_global_concurrency_limits:
        return {}, set()
    held: dict[str, Counter[str]] = defaultdict(Counter)
    involved: set[str] = set()
    for pool, info in storage.get_concurrency_infos(sorted(storage.get_concurrency_keys())).items():
        for slot in info.claimed_slots:
            held[slot.run_id][pool] += 1
            involved.add(slot.run_id)
        involved.update(step.run_id for step in info.pending_steps)
    return dict(held), involved


def reap_dead_runs(
    instance: dg.DagsterInstance,
    run_ids: Iterable[str] | None = None,
    finished_grace_seconds: float = FINISHED_GRACE_SECONDS,
) -> list[ReapedRun]:
    """Fail this host's runs whose process is gone and free their slots (all runs, or `run_ids`)."""
    wanted = None if run_ids is None else sorted(set(run_ids))
    if wanted == []:
        return []
    held, involved = slots_by_run(instance)
    reaped = []
    records = instance.get_run_records(
        filters=dg.RunsFilter(run_ids=wanted, statuses=UNFINISHED, tags={HOST_TAG: hostname()})
    )
    for record in records:
        run = record.dagster_run
        reason = why_gone(dict(run.tags), run.run_id)
        if reason is None:
            continue
        current = instance.get_run_by_id(run.run_id)
        if current is None or current.is_finished:  # another command reaped it meanwhile
            continue
        instance.add_run_tags(run.run_id, NO_RETRY)
        instance.report_run_failed(
            current, reason, JobFailureData(error=None, failure_reason=RunFailureReason.UNEXPECTED_TERMINATION)
        )
        instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
        reaped.append(ReapedRun(run.run_id, run.job_name, reason, dict(held.get(run.run_id, {}))))
    done = {r.run_id for r in reaped}
    leftovers = sorted(involved - done if wanted is None else (involved & set(wanted)) - done)
    reaped += _free_slots_of_ended_runs(instance, leftovers, held, finished_grace_seconds)
    return reaped


def _free_slots_of_ended_runs(
    instance: dg.DagsterInstance, run_ids: list[str], held: dict[str, Counter[str]], grace_seconds: float
) -> list[ReapedRun]:
    """Free the claims of runs that ended (or were deleted) more than `grace_seconds` ago."""
    if not run_ids:
        return []
    freed = []
    records = {r.dagster_run.run_id: r for r in instance.get_run_records(filters=dg.RunsFilter(run_ids=run_ids))}
    now = time.time()
    for run_id in run_ids:
        record = records.get(run_id)
        if record is not None and (
            record.dagster_run.status not in FINISHED or (record.end_time or now) > now - grace_seconds
        ):
            continue
        instance.event_log_storage.free_concurrency_slots_for_run(run_id)
        if held.get(run_id):
            job = record.dagster_run.job_name if record else "deleted run"
            freed.append(ReapedRun(run_id, job, "", dict(held[run_id])))
    return freed
