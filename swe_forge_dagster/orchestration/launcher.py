"""The one in-process launcher: runs of the Dagster jobs, recorded in the persistent instance.

`swe-forge ingest`, `swe-forge mine`, the demo and the tests launch every run through here, so
their runs appear in the UI exactly like UI-launched ones and run the same asset code:

- `materialize_hours`: hourly partitions; contiguous hours go in one run as a partition range
  (the shape a `multi_run` backfill gives), each hour still its own materialization;
- `run_partitions`: one run per partition of a job (a task of `task_job`, an (agent, task) pair of
  `eval_job`), adding the dynamic partitions' keys first;
- `materialize_assets`: unpartitioned assets (`swe_dataset`, `eval_summary`), through the named job that
  selects exactly them (`dataset_job`, `eval_summary_job`), so the UI's runs list names what ran.

In-process runs log to the console at WARNING (the instance's event log keeps everything).
Every run goes through `_execute`: its only tags of ours are the identity of the process running
it (`processes`: the two tags that let a later command see that a `kill -9`ed run is dead and free
its pool slots, `reaper`), claims its pool slots atomically (`slot_claims`: concurrent runs of a SQLite
instance otherwise lose claims), and is watched while it waits for a pool slot (`slot_wait`:
says what it waits for on stderr, and lets Ctrl-C stop the wait). An interrupted run (Ctrl-C,
SIGTERM) raises KeyboardInterrupt here instead of returning a failed result, so no further run
starts.
"""

from __future__ import annotations

import datetime as dt
import sys
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import dagster as dg
from dagster._core.events import RunFailureReason

from swe_forge_dagster.common.dagster_names import GHARCHIVE_JOB
from swe_forge_dagster.gharchive.hours import parse_partition_key, partition_key
from swe_forge_dagster.orchestration.instance import set_pool_limits
from swe_forge_dagster.orchestration.processes import process_identity
from swe_forge_dagster.orchestration.slot_claims import install as install_atomic_slot_claims
from swe_forge_dagster.orchestration.slot_wait import Notify, SlotWaitWatcher

HOUR = dt.timedelta(hours=1)
QUIET = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def to_stderr(message: str) -> None:
    """The default `notify`: a line on stderr (the CLI passes its own console)."""
    print(message, file=sys.stderr, flush=True)


def _interrupted(result: dg.ExecuteInProcessResult) -> bool:
    """Whether the run ended because its process was interrupted (Ctrl-C, SIGTERM)."""
    for event in result.all_events:
        if event.event_type == dg.DagsterEventType.RUN_CANCELED:
            return True
        reason = getattr(event.event_specific_data, "failure_reason", None)
        if event.event_type == dg.DagsterEventType.RUN_FAILURE and reason == RunFailureReason.UNEXPECTED_TERMINATION:
            return True
    return False


def _execute(
    job: dg.JobDefinition, instance: dg.DagsterInstance, notify: Notify, tags: dict[str, str], **kwargs: object
) -> dg.ExecuteInProcessResult:
    """`job.execute_in_process`, tagged with this process's identity and watched while it waits for slots."""
    install_atomic_slot_claims()  # concurrent runs of a SQLite instance would otherwise lose slot claims
    run_id = str(uuid.uuid4())
    with SlotWaitWatcher(instance, run_id, notify) as watcher:
        result = job.execute_in_process(
            instance=instance, run_id=run_id, raise_on_error=False, tags={**tags, **process_identity(run_id)}, **kwargs
        )  # type: ignore[arg-type]
    if watcher.interrupted or _interrupted(result):
        raise KeyboardInterrupt(f"run {run_id} stopped")
    return result


@dataclass
class RunOutcome:
    """One in-process run over a block of hours."""

    run_id: str
    keys: list[str]
    success: bool
    materialized: list[str] = field(default_factory=list)  # hours with at least one asset materialized
    errors: list[str] = field(default_factory=list)
    by_asset: dict[str, list[str]] = field(default_factory=dict)  # asset -> hours it materialized


def _error_text(error: object) -> str:
    """The step error with its causes: Dagster wraps the user's exception as the cause."""
    parts = []
    while error is not None:
        message = str(getattr(error, "message", "")).strip()
        if message and message not in parts:
            parts.append(message)
        error = getattr(error, "cause", None)
    return " <- ".join(parts)


def contiguous_blocks(keys: Sequence[str], max_per_run: int) -> list[list[str]]:
    """Split sorted unique hour keys into runs of consecutive hours, at most `max_per_run` each."""
    hours = sorted({parse_partition_key(k) for k in keys})
    blocks: list[list[dt.datetime]] = []
    for hour in hours:
        if blocks and hour - blocks[-1][-1] == HOUR and len(blocks[-1]) < max_per_run:
            blocks[-1].append(hour)
        else:
            blocks.append([hour])
    return [[partition_key(h) for h in block] for block in blocks]


def hour_range(start: str, end: str) -> list[str]:
    """Every hour key from `start` to `end`, inclusive."""
    first, last = parse_partition_key(start), parse_partition_key(end)
    if last < first:
        raise ValueError(f"empty hour range: {end} is before {start}")
    count = int((last - first) / HOUR) + 1
    return [partition_key(first + i * HOUR) for i in range(count)]


def check_hours(job: dg.JobDefinition, instance: dg.DagsterInstance, keys: Sequence[str]) -> None:
    """ValueError unless every key is an hour of `job`'s partitions."""
    valid = set(job.partitions_def.get_partition_keys(dynamic_partitions_store=instance))
    for key in keys:
        parse_partition_key(key)  # a specific error for a malformed key
    unknown = [k for k in keys if k not in valid]
    if unknown:
        raise ValueError(
            f"not hours of this deployment's partitions: {', '.join(unknown[:5])} "
            "(check SWE_FORGE_START_DATE, and that the hour has ended)"
        )


def published_hours(
    keys: Sequence[str], is_published: Callable[[dt.datetime], bool] | None
) -> tuple[list[RunOutcome], list[str]]:
    """(a skipped outcome per unpublished hour, the published keys).

    An unpublished hour would fail the ingest step of its run and with it every downstream stage
    of the run's other hours: it is left out, and said so.
    """
    if is_published is None:
        return [], list(keys)
    missing = [k for k in dict.fromkeys(keys) if not is_published(parse_partition_key(k))]
    skipped = [RunOutcome("", [k], False, errors=[f"hour {k} is not published yet: retry later"]) for k in missing]
    return skipped, [k for k in keys if k not in missing]


def materialize_hours(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    keys: Sequence[str],
    *,
    job_name: str = GHARCHIVE_JOB,
    max_per_run: int = 24,
    log_level: str = "INFO",
    is_published: Callable[[dt.datetime], bool] | None = None,
    notify: Notify = to_stderr,
) -> list[RunOutcome]:
    """Run the hourly asset for `keys` in-process; never raises for a failed hour (but does when interrupted)."""
    set_pool_limits(instance)
    job = defs.resolve_job_def(job_name)
    check_hours(job, instance, keys)
    outcomes, keys = published_hours(keys, is_published)
    for block in contiguous_blocks(keys, max_per_run):
        tags = {"dagster/asset_partition_range_start": block[0], "dagster/asset_partition_range_end": block[-1]}
        result = _execute(
            job,
            instance,
            notify,
            tags,
            run_config={"loggers": {"console": {"config": {"log_level": log_level}}}},
        )
        # From the instance, not the result: hours recorded before a partial failure count too.
        records = instance.all_logs(result.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
        by_asset: dict[str, set[str]] = {}
        for record in records:
            if record.dagster_event:
                materialization = record.dagster_event.event_specific_data.materialization
                by_asset.setdefault(materialization.asset_key.to_user_string(), set()).add(materialization.partition)
        materialized = sorted(set().union(*by_asset.values())) if by_asset else []
        errors = [
            _error_text(e.event_specific_data.error)
            for e in result.all_events
            if e.is_step_failure and e.event_specific_data and e.event_specific_data.error
        ]
        outcomes.append(
            RunOutcome(
                result.run_id,
                block,
                result.success,
                materialized,
                errors,
                {asset: sorted(hours) for asset, hours in by_asset.items()},
            )
        )
    return outcomes


def run_partitions(
    defs: dg.Definitions, instance: dg.DagsterInstance, job_name: str, keys: Sequence[str], notify: Notify = to_stderr
) -> dict[str, bool]:
    """One in-process run of `job_name` per partition key (a task, or a `MultiPartitionKey` of an agent and a
    task), the keys of its dynamic partitions added first: key -> success."""
    job = defs.resolve_job_def(job_name)
    _add_dynamic_keys(job.partitions_def, keys, instance)
    outcomes = {}
    for key in keys:
        result = _execute(job, instance, notify, {}, partition_key=key, run_config=QUIET)
        outcomes[str(key)] = result.success
    return outcomes


def _add_dynamic_keys(
    partitions: dg.PartitionsDefinition | None, keys: Sequence[str], instance: dg.DagsterInstance
) -> None:
    """Add `keys` to the dynamic partitions they belong to: the job's own, or each dynamic dimension's."""
    if isinstance(partitions, dg.DynamicPartitionsDefinition) and partitions.name and keys:
        instance.add_dynamic_partitions(partitions.name, list(keys))
    if isinstance(partitions, dg.MultiPartitionsDefinition):
        parsed = [partitions.get_partition_key_from_str(str(key)).keys_by_dimension for key in keys]  # "a|b" too
        for dimension in partitions.partitions_defs:
            named = dimension.partitions_def
            if isinstance(named, dg.DynamicPartitionsDefinition) and named.name:
                instance.add_dynamic_partitions(named.name, sorted({key[dimension.name] for key in parsed}))


def materialize_assets(
    defs: dg.Definitions, instance: dg.DagsterInstance, asset_names: Sequence[str], notify: Notify = to_stderr
) -> bool:
    """Materialize unpartitioned assets in-process (one run); whether it succeeded.

    Through the definitions' job that selects exactly these assets (`dataset_job`, `eval_summary_job`), else
    a job named after them: never Dagster's `__ephemeral_asset_job__`, which the runs list cannot tell apart.
    """
    job = _job_selecting(defs, set(asset_names))
    return _execute(job, instance, notify, {}, run_config=QUIET).success


def _job_selecting(defs: dg.Definitions, names: set[str]) -> dg.JobDefinition:
    """The defined job whose assets are exactly `names`, else one built and named after them."""
    for job_def in defs.jobs or []:
        job = defs.resolve_job_def(job_def.name)
        if {key.to_user_string() for key in job.asset_layer.executable_asset_keys} == names:
            return job
    name = "materialize_" + "_".join(sorted(names))
    assets = [defs.resolve_assets_def(asset) for asset in sorted(names)]
    return dg.Definitions(assets=assets, jobs=[dg.define_asset_job(name)]).resolve_job_def(name)
