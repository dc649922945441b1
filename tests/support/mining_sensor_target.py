"""A code location for the mining-sensor daemon test (loaded by a real code server subprocess).

The clock and the archive URL come from the environment the test sets before the code server
starts: `SWE_FORGE_TEST_CLOCK_FILE` holds the current time (ISO 8601), rewritten as the test goes.
"""

import datetime as dt
import os
from pathlib import Path

os.environ.setdefault("SWE_FORGE_START_DATE", "2015-01-01")

import dagster as dg

from swe_forge_dagster.assets.gharchive import build_gharchive_pr_events
from swe_forge_dagster.assets.partitions import build_hourly_partitions
from swe_forge_dagster.common.dagster_names import HOURLY_PIPELINE_JOB
from swe_forge_dagster.resources import GharchiveResource, LakeResource
from swe_forge_dagster.sensors.mining import build_mining_sensor
from swe_forge_dagster.settings import get_settings


def file_clock() -> dt.datetime:
    return dt.datetime.fromisoformat(Path(os.environ["SWE_FORGE_TEST_CLOCK_FILE"]).read_text().strip())


HOME = os.environ["SWE_FORGE_HOME"]
hours = build_hourly_partitions(get_settings())
gharchive_pr_events = build_gharchive_pr_events(hours)
hourly_pipeline_job = dg.define_asset_job(HOURLY_PIPELINE_JOB, selection=[gharchive_pr_events])

defs = dg.Definitions(
    assets=[gharchive_pr_events],
    jobs=[hourly_pipeline_job],
    sensors=[
        build_mining_sensor(
            hourly_pipeline_job.name,
            partitions_def=hours,
            clock=file_clock,
            minimum_interval_seconds=1,  # the test decides when ticks happen
            max_hours_per_tick=4,
            start="2015-01-01-00:00",
            default_status=dg.DefaultSensorStatus.RUNNING,
        )
    ],
    resources={
        "gharchive": GharchiveResource(base_url=os.environ["SWE_FORGE_GHARCHIVE_URL"], home=HOME),
        "lake": LakeResource(home=HOME),
    },
)
