"""The whole asset graph of one `Settings`: assets, asset checks and jobs, with the hourly ones over its hours.

`definitions.build_definitions(settings)` builds it (and the sensors, over the same hourly partitions), so
everything that depends on a setting (the first hour, `SWE_FORGE_START_DATE`) follows the settings given,
not the environment's at import time. What depends on no setting (the task and agent partitions, the
harness assets, `swe_dataset`) is defined once at import in its own module.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import dagster as dg

from swe_forge_dagster.assets.catalog import build_catalog
from swe_forge_dagster.assets.checks import build_asset_checks
from swe_forge_dagster.assets.harness import HARNESS_ASSETS
from swe_forge_dagster.assets.hourly import HourlyAssets, build_hourly_assets
from swe_forge_dagster.assets.jobs import build_jobs
from swe_forge_dagster.assets.partitions import build_hourly_partitions
from swe_forge_dagster.assets.tasks import build_task_stage_assets, swe_dataset
from swe_forge_dagster.settings import Settings


@dataclass(frozen=True)
class AssetGraph:
    """What `dg.Definitions` takes from the assets package, for one `Settings`."""

    hourly: HourlyAssets
    assets: list[dg.AssetsDefinition]
    asset_checks: list[dg.AssetChecksDefinition]
    jobs: list[dg.UnresolvedAssetJobDefinition]

    @property
    def hourly_partitions(self) -> dg.HourlyPartitionsDefinition:
        """The settings' hours: the hourly assets' partitions, and the mining sensor's earliest hour."""
        return self.hourly.partitions


def build_asset_graph(settings: Settings) -> AssetGraph:
    """Every asset, asset check and job, the hourly ones over `settings`' hours."""
    # Our own use of Dagster's beta and preview features (`backfill_policy`, partitioned asset checks) warns at
    # each definition: silenced for our definitions only, so a user's code in the same process still hears of its own.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        warnings.simplefilter("ignore", dg.PreviewWarning)
        hourly = build_hourly_assets(build_hourly_partitions(settings))
        catalog = build_catalog(hourly.assets)
        task_stages = build_task_stage_assets(hourly.classified)
        return AssetGraph(
            hourly=hourly,
            assets=[*hourly.assets, catalog, *task_stages, swe_dataset, *HARNESS_ASSETS],
            asset_checks=build_asset_checks(hourly.partitions, hourly.events),
            jobs=build_jobs(hourly, catalog, task_stages),
        )
