"""The hourly mining sensor, against a real GH Archive twin on loopback, under a controlled clock.

Hours are "published" by writing them into the twin's folder as the test's clock advances; the
sensor checks publication with real HEAD requests through `GharchiveResource`. Each tick is
evaluated the way the daemon evaluates it (`SensorDefinition.evaluate_tick` with the
Definitions, so run requests are resolved against the job's partitions), and the cursor is
carried from tick to tick as the daemon carries it. The plan itself (`plan_next_hours`, without
Dagster or HTTP) is tested here too; the run through the real sensor daemon is in
test_mining_sensor_daemon.py.
"""

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
import pytest

from swe_forge_dagster.assets.gharchive import build_gharchive_pr_events
from swe_forge_dagster.assets.partitions import build_hourly_partitions
from swe_forge_dagster.common.dagster_names import HOURLY_PIPELINE_JOB
from swe_forge_dagster.gharchive.download import DownloadError
from swe_forge_dagster.gharchive.hours import archive_file_name, partition_key
from swe_forge_dagster.gharchive.schedule import HOUR, last_complete_hour, parse_cursor, plan_next_hours
from swe_forge_dagster.resources import GharchiveResource, LakeResource
from swe_forge_dagster.sensors.mining import PublicationCheckError, build_mining_sensor
from swe_forge_dagster.settings import Settings
from tests.support.mining_sensor import (
    Archive,
    at,
    key,
)

DAY = dt.datetime(2015, 1, 1, tzinfo=dt.UTC)
HOURS = build_hourly_partitions(Settings(SWE_FORGE_START_DATE=f"{DAY:%Y-%m-%d}"))


class Clock:
    """The sensor's `clock=`: a time the test moves."""

    def __init__(self, now: dt.datetime) -> None:
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += dt.timedelta(**delta)


@dataclass
class Tick:
    keys: list[str]
    skip: str | None
    cursor: str | None


@dataclass
class SensorHarness:
    """Evaluates ticks like the daemon: resolved run requests, cursor carried between ticks."""

    sensor: dg.SensorDefinition
    definitions: dg.Definitions
    resources: dict[str, dg.ConfigurableResource]
    instance: dg.DagsterInstance
    cursor: str | None = None
    requested: list[str] = field(default_factory=list)
    ticks: list[Tick] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.repository = self.definitions.get_repository_def()

    def tick(self) -> Tick:
        context = dg.build_sensor_context(
            instance=self.instance,
            cursor=self.cursor,
            repository_def=self.repository,
            resources=self.resources,
            sensor_name=self.sensor.name,
        )
        data = self.sensor.evaluate_tick(context)
        keys = []
        for request in data.run_requests:
            assert request.run_key == request.partition_key, "run key must be the hour, so it dedupes"
            assert request.tags["dagster/partition"] == request.partition_key
            keys.append(request.partition_key)
        self.cursor = data.cursor
        self.requested.extend(keys)
        result = Tick(keys, data.skip_message, data.cursor)
        self.ticks.append(result)
        return result


HarnessFactory = Callable[..., SensorHarness]


@pytest.fixture
def make_harness(archive: Archive, tmp_path: Path, instance: dg.DagsterInstance) -> HarnessFactory:
    def make(clock: Clock, cursor: str | None = None, **options: object) -> SensorHarness:
        events = build_gharchive_pr_events(HOURS)
        job = dg.define_asset_job(HOURLY_PIPELINE_JOB, selection=[events])
        sensor = build_mining_sensor(job.name, partitions_def=HOURS, clock=clock, **options)  # type: ignore[arg-type]
        home = str(tmp_path / "home")
        resources: dict[str, dg.ConfigurableResource] = {
            "gharchive": GharchiveResource(base_url=archive.server.url, home=home, timeout_seconds=5),
            "lake": LakeResource(home=home),
        }
        definitions = dg.Definitions(assets=[events], jobs=[job], sensors=[sensor], resources=resources)
        return SensorHarness(sensor, definitions, resources, instance, cursor=cursor)

    return make


# ########################
# ##### the acceptance criteria
# ########################


def test_a_late_hour_is_waited_for_then_requested_once(archive: Archive, make_harness: HarnessFactory) -> None:
    clock = Clock(at(6, 10))
    archive.publish(at(3), at(5))  # 04:00 is late; 05:00 is already out
    sensor = make_harness(clock, cursor=key(2))

    first = sensor.tick()
    assert first.keys == [key(3)] and first.cursor == key(3)

    clock.advance(minutes=5)
    waiting = sensor.tick()  # 05:00 is published, but 04:00 comes first: nothing, and no skip
    assert waiting.keys == [] and waiting.cursor == key(3)
    assert waiting.skip is not None and f"waiting for hour {key(4)}" in waiting.skip

    clock.advance(hours=2)  # 04:00 is now hours late: still waited for, never skipped
    assert sensor.tick().keys == [] and sensor.cursor == key(3)

    archive.publish(at(4))
    clock.advance(minutes=5)
    appeared = sensor.tick()  # by now 06:00 and 07:00 have ended too, unpublished
    assert appeared.keys == [key(4), key(5)] and appeared.cursor == key(5)
    assert sensor.tick().keys == []
    archive.publish(at(6), at(7))
    assert sensor.tick().keys == [key(6), key(7)]

    assert sensor.requested == [key(h) for h in range(3, 8)]
    assert len(set(sensor.requested)) == len(sensor.requested)
    # 05:00 was not even looked at while 04:00 was missing
    assert archive.heads(at(5)) == 1 and archive.heads(at(4)) == 4


def test_thirty_hours_of_downtime_are_caught_up_in_capped_ticks_in_order(
    archive: Archive,
    make_harness: HarnessFactory,
) -> None:
    clock = Clock(at(1, 5, day=2))
    archive.publish(at(0, day=2))
    sensor = make_harness(clock, cursor=key(23))  # last requested: 2015-01-01-23:00
    assert sensor.tick().keys == [key(0, day=2)]

    # The daemon is down for 30 hours; GH Archive keeps publishing.
    clock.advance(hours=30)
    down = [at(0, day=2) + (i + 1) * HOUR for i in range(30)]
    archive.publish(*down)
    assert last_complete_hour(clock.now) == down[-1]

    ticks = [sensor.tick(), sensor.tick(), sensor.tick()]
    assert [len(t.keys) for t in ticks] == [24, 6, 0]  # the default cap is 24 hours per tick
    assert ticks[0].keys + ticks[1].keys == [partition_key(h) for h in down]
    assert ticks[0].cursor == partition_key(down[23]) and ticks[1].cursor == partition_key(down[-1])
    assert ticks[2].skip is not None and ticks[2].skip.startswith("up to date")
    assert len(set(sensor.requested)) == len(sensor.requested) == 31


def test_a_smaller_cap_drains_the_backlog_in_more_ticks(archive: Archive, make_harness: HarnessFactory) -> None:
    clock = Clock(at(11, 30))
    archive.publish_range(at(0), at(10))
    sensor = make_harness(clock, cursor=key(0), max_hours_per_tick=4)
    assert [sensor.tick().keys for _ in range(4)] == [
        [key(1), key(2), key(3), key(4)],
        [key(5), key(6), key(7), key(8)],
        [key(9), key(10)],
        [],
    ]


def test_no_hour_is_requested_twice_over_two_days_of_irregular_publishing(
    archive: Archive,
    make_harness: HarnessFactory,
) -> None:
    """Ticks every 30 min for 50 hours; hours appear 5 min to 4 h after they end, some out of order."""
    rng = random.Random(7)
    hours = [at(0) + i * HOUR for i in range(48)]
    lag = {
        h: dt.timedelta(minutes=rng.choice([5, 10, 20, 45]) if rng.random() > 0.15 else rng.randint(90, 240))
        for h in hours
    }
    clock = Clock(at(0, 1))
    sensor = make_harness(clock, cursor=None, start=key(0), max_hours_per_tick=6)
    published: set[dt.datetime] = set()
    while clock.now < at(2, day=3):
        for hour in hours:
            if hour not in published and clock.now >= hour + HOUR + lag[hour]:
                archive.publish(hour)
                published.add(hour)
        requested_before = set(sensor.requested)
        tick = sensor.tick()
        assert not requested_before & set(tick.keys), f"requested again: {requested_before & set(tick.keys)}"
        # never ahead of publication, never past a gap
        assert all(parse_cursor(k) in published for k in tick.keys)
        clock.advance(minutes=30)
    assert sensor.requested == [partition_key(h) for h in hours]  # all, in order, each once
    assert any(lag[h] > dt.timedelta(hours=1) for h in hours)  # the world did have late hours


def test_a_failing_publication_check_never_advances_the_cursor(archive: Archive, make_harness: HarnessFactory) -> None:
    clock = Clock(at(4, 10))
    archive.publish_range(at(0), at(3))
    sensor = make_harness(clock, cursor=key(0))

    # The archive answers 503 for 02:00: 01:00 was confirmed and is requested; 02:00 is not guessed.
    archive.server.fail_next(archive_file_name(at(2)), 503)
    partial = sensor.tick()
    assert partial.keys == [key(1)] and partial.cursor == key(1)

    # The archive is unreachable: the tick fails (red in the UI) and the cursor stays put.
    archive.server.shutdown()
    with pytest.raises(PublicationCheckError, match=f"could not check whether hour {key(2)}") as failure:
        sensor.tick()
    assert isinstance(failure.value.__cause__, DownloadError)
    assert sensor.cursor == key(1) and sensor.requested == [key(1)]


def test_the_archive_back_after_an_outage_resumes_where_it_stopped(
    archive: Archive,
    make_harness: HarnessFactory,
) -> None:
    clock = Clock(at(4, 10))
    archive.publish_range(at(0), at(3))
    sensor = make_harness(clock, cursor=key(0))
    archive.server.fail_next(archive_file_name(at(1)), 502, times=2)
    for _ in range(2):
        with pytest.raises(PublicationCheckError):
            sensor.tick()
        assert sensor.cursor == key(0)
    assert sensor.tick().keys == [key(1), key(2), key(3)]


# ########################
# ##### first start, configuration
# ########################


def test_first_start_takes_the_newest_complete_hours(archive: Archive, make_harness: HarnessFactory) -> None:
    clock = Clock(at(10, 20))
    archive.publish_range(at(0), at(9))
    sensor = make_harness(clock)  # no cursor: the newest 3 complete hours (07, 08, 09)
    assert sensor.tick().keys == [key(7), key(8), key(9)]
    assert archive.heads(at(6)) == 0  # history is for backfills: not even checked


def test_first_start_from_a_configured_hour(archive: Archive, make_harness: HarnessFactory) -> None:
    clock = Clock(at(10, 20))
    archive.publish_range(at(0), at(9))
    sensor = make_harness(clock, start=key(2), first_hours=1)
    assert sensor.tick().keys == [key(h) for h in range(2, 10)]


def test_first_start_waits_for_the_newest_hour_when_it_is_not_out_yet(
    archive: Archive,
    make_harness: HarnessFactory,
) -> None:
    clock = Clock(at(10, 2))
    archive.publish_range(at(0), at(8))
    sensor = make_harness(clock, first_hours=1)
    tick = sensor.tick()
    assert tick.keys == [] and tick.cursor is None and f"waiting for hour {key(9)}" in (tick.skip or "")
    archive.publish(at(9))
    assert sensor.tick().keys == [key(9)]


def test_the_sensor_definition() -> None:
    sensor = build_mining_sensor(partitions_def=HOURS)
    assert sensor.name == "gharchive_mining_sensor"
    assert sensor.job_name == HOURLY_PIPELINE_JOB
    assert sensor.default_status == dg.DefaultSensorStatus.STOPPED
    assert sensor.required_resource_keys == {"gharchive"}
    assert sensor.minimum_interval_seconds == 300
    with pytest.raises(ValueError, match="invalid hour partition key"):
        build_mining_sensor(HOURLY_PIPELINE_JOB, partitions_def=HOURS, start="2015-01-01")
    with pytest.raises(ValueError, match="at least 1"):
        build_mining_sensor(HOURLY_PIPELINE_JOB, partitions_def=HOURS, max_hours_per_tick=0)


def test_a_mangled_cursor_fails_the_tick_instead_of_guessing(archive: Archive, make_harness: HarnessFactory) -> None:
    sensor = make_harness(Clock(at(5)), cursor="2015-01-01T03")
    with pytest.raises(ValueError, match="invalid hour partition key"):
        sensor.tick()


# ########################
# ##### the plan, without Dagster or HTTP
# ########################


def published_until(last: dt.datetime) -> Callable[[dt.datetime], bool]:
    return lambda hour: hour <= last


@pytest.mark.parametrize(
    ("now", "expected_last"),
    [(at(6), at(5)), (at(6, 59), at(5)), (at(7), at(6)), (at(0, 30, day=2), at(23))],
)
def test_only_ended_hours_are_candidates(now: dt.datetime, expected_last: dt.datetime) -> None:
    plan = plan_next_hours(at(0), now, published_until(at(23, day=3)), earliest=DAY, cap=100)
    assert plan.hours[-1] == expected_last and plan.backlog == 0


def test_plan_edges() -> None:
    everything = published_until(at(0, day=9))
    # cursor already at the newest complete hour, or ahead of the clock: nothing to do
    assert plan_next_hours(at(5), at(6, 30), everything, earliest=DAY).hours == []
    assert plan_next_hours(at(9), at(6, 30), everything, earliest=DAY).cursor == at(9)
    # nothing before the first partition, even on a first start right after it
    assert plan_next_hours(None, at(1, 10), everything, earliest=DAY, first_hours=5).hours == [at(0)]
    # a naive clock is UTC
    assert plan_next_hours(at(0), at(3).replace(tzinfo=None), everything, earliest=DAY).hours == [at(1), at(2)]
    # the backlog counts what the cap left behind
    plan = plan_next_hours(at(0), at(12), everything, earliest=DAY, cap=5)
    assert len(plan.hours) == 5 and plan.backlog == 6 and plan.next_hour == at(6)
    with pytest.raises(ValueError, match="cap"):
        plan_next_hours(None, at(3), everything, earliest=DAY, cap=0)


def test_plan_stops_at_the_first_failed_check() -> None:
    def flaky(hour: dt.datetime) -> bool:
        if hour == at(3):
            raise OSError("connection reset")
        return True

    plan = plan_next_hours(at(0), at(8), flaky, earliest=DAY)
    assert plan.hours == [at(1), at(2)] and plan.cursor == at(2)
    assert isinstance(plan.error, OSError) and plan.failed_at == at(3) and plan.waiting_for is None


def test_sensor_keys_are_partitions_of_the_hourly_assets() -> None:
    plan = plan_next_hours(None, at(5, 5), published_until(at(9)), earliest=HOURS.start)
    valid = set(HOURS.get_partition_keys(current_time=at(5, 5)))
    assert plan.keys and set(plan.keys) <= valid and plan.keys[-1] == max(valid)
