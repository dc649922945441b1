"""`gharchive_mining_sensor`: requests each published GH Archive hour, in order, exactly once.

A cursor sensor (rather than a schedule built from the partitioned job, or an `on_cron`
automation condition: neither checks publication). The cursor is the partition key of the last
hour it requested (e.g. `2015-01-01-05:00`, readable and editable in the UI). Each tick it
asks `swe_forge_dagster.gharchive.schedule.plan_next_hours` which hours come next and requests
one run of the target job per hour, `partition_key` = `run_key` = the hour key. The decision
rules live in that module (plain Python, unit-tested); this one only adapts them to Dagster:

- publication is checked with `GharchiveResource.fetcher().is_published` (HEAD on
  data.gharchive.org, a stat on a `file://` mirror), the same check the CLI uses;
- a late hour is waited for, never skipped: the tick stops at the first unpublished hour;
- after downtime the backlog is caught up oldest first, at most `max_hours_per_tick` per tick;
- `run_key` = hour key, so even a cursor moved back by hand never runs an hour twice (the daemon
  drops run requests whose run key this sensor already used);
- if the publication check itself fails (archive unreachable, 5xx), the hours confirmed before
  the failure are still requested, and the cursor never passes an unconfirmed hour; a tick that
  confirms nothing fails with the error, so it shows red in the UI and is retried next tick.

The target is the hourly job (`hourly_pipeline_job`: ingest, pre-filter, enrich, triage), so the
downstream hourly assets of each hour follow in the same run.

First start: with no cursor the sensor begins at the newest `first_hours` complete hours (3 by
default), or at `start` when given. Mining history is a job for a UI backfill, not for the sensor.

Default status STOPPED, deliberately: the runs it launches call GitHub (a token is needed) and
the LLM (which costs money), and a fresh `dagster dev` (or a test, or CI without internet) must
not start mining data.gharchive.org on its own. Turn it on in the UI (Automation) or with
`dagster sensor start gharchive_mining_sensor`; a deployment can pass `default_status=RUNNING`.
"""

import datetime as dt
from collections.abc import Callable

import dagster as dg

from swe_forge_dagster.common.dagster_names import HOURLY_PIPELINE_JOB
from swe_forge_dagster.gharchive.hours import parse_partition_key, partition_key
from swe_forge_dagster.gharchive.schedule import describe_wait, parse_cursor, plan_next_hours
from swe_forge_dagster.resources.gharchive import GharchiveResource

SENSOR_NAME = "gharchive_mining_sensor"
DEFAULT_JOB_NAME = HOURLY_PIPELINE_JOB


class PublicationCheckError(Exception):
    """GH Archive could not be asked whether the next hour is published; nothing was requested."""


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def build_mining_sensor(
    job_name: str = DEFAULT_JOB_NAME,
    *,
    partitions_def: dg.TimeWindowPartitionsDefinition,
    name: str = SENSOR_NAME,
    max_hours_per_tick: int = 24,
    first_hours: int = 3,
    start: str | None = None,
    minimum_interval_seconds: int = 300,
    check_timeout_seconds: float = 10.0,
    default_status: dg.DefaultSensorStatus = dg.DefaultSensorStatus.STOPPED,
    clock: Callable[[], dt.datetime] = utc_now,
) -> dg.SensorDefinition:
    """The mining sensor for the job named `job_name`; see the module docstring.

    `partitions_def` is the target's hours (`assets.partitions.build_hourly_partitions` of the same settings):
    the sensor never requests an hour before its first.
    `start` (a partition key) is where a sensor with no cursor begins instead of the newest
    `first_hours` hours. `check_timeout_seconds` bounds each publication check, so a slow archive
    cannot run a tick into Dagster's sensor timeout. `clock` is injectable for tests.
    """
    if max_hours_per_tick < 1 or first_hours < 1:
        raise ValueError("max_hours_per_tick and first_hours must be at least 1")
    start_hour = parse_partition_key(start) if start else None  # a bad key fails at load time
    earliest = partitions_def.start
    # Targeted by name: the Definitions that hold this sensor must hold the job too (they do).

    @dg.sensor(
        name=name,
        minimum_interval_seconds=minimum_interval_seconds,
        default_status=default_status,
        description=(
            "Requests each published GH Archive hour in order, once (run key = hour). Waits for a late "
            f"hour instead of skipping it; catches up after downtime at most {max_hours_per_tick} hours "
            "per tick. Cursor: the last requested hour key."
        ),
        job_name=job_name,
    )
    def mining_sensor(context: dg.SensorEvaluationContext, gharchive: GharchiveResource) -> dg.SensorResult:
        now = clock()
        cursor = parse_cursor(context.cursor)
        fetcher = gharchive.fetcher()
        # A sensor tick must stay short: bound each HEAD well below Dagster's sensor timeout.
        fetcher.timeout_seconds = min(fetcher.timeout_seconds, check_timeout_seconds)
        plan = plan_next_hours(
            cursor,
            now,
            fetcher.is_published,
            earliest=earliest,
            cap=max_hours_per_tick,
            first_hours=first_hours,
            start=start_hour,
        )
        if not plan.hours:
            if plan.error is not None:
                raise PublicationCheckError(describe_wait(plan, now)) from plan.error
            return dg.SensorResult(skip_reason=describe_wait(plan, now), cursor=context.cursor)
        if plan.error is not None:
            context.log.warning(f"stopped early, {describe_wait(plan, now)}; the next tick checks it again")
        elif plan.waiting_for is not None:
            context.log.info(describe_wait(plan, now))
        context.log.info(
            f"requesting {len(plan.hours)} hour(s) {plan.keys[0]} .. {plan.keys[-1]}; "
            f"{plan.backlog} complete hour(s) still to come"
        )
        return dg.SensorResult(  # Dagster tags each run with this sensor's name (`dagster/sensor_name`)
            run_requests=[dg.RunRequest(run_key=key, partition_key=key) for key in plan.keys],
            cursor=partition_key(plan.hours[-1]),
        )

    return mining_sensor
