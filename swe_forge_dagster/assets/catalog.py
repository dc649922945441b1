"""`catalog`: the DuckDB file of views over the lake, for any DuckDB client.

The only step that opens the catalog file for writing (pool `duckdb_catalog`, limit 1); ingest
never touches it. `swe-forge sql` refreshes the same views on demand. Built after the hourly
assets of the settings' hours (`build_catalog`), on all of their partitions.
"""

from collections.abc import Sequence

import dagster as dg

from swe_forge_dagster.assets.steps import step_options
from swe_forge_dagster.common.dagster_names import CATALOG_STAGE, DUCKDB_CATALOG_POOL
from swe_forge_dagster.resources import LakeResource
from swe_forge_dagster.wiring.catalog import refresh_catalog


def build_catalog(hourly_assets: Sequence[dg.AssetsDefinition]) -> dg.AssetsDefinition:
    """`catalog` after every partition of `hourly_assets` (the lake datasets it has views of)."""

    @dg.asset(
        deps=[dg.AssetDep(asset, partition_mapping=dg.AllPartitionMapping()) for asset in hourly_assets],
        **step_options(CATALOG_STAGE, DUCKDB_CATALOG_POOL),
        kinds={"duckdb"},
        group_name="catalog",
    )
    def catalog(context: dg.AssetExecutionContext, lake: LakeResource) -> dg.MaterializeResult:
        """Views (`gharchive_pr_events`, …) over the Parquet lake, in `SWE_FORGE_HOME/catalog.duckdb`."""
        views = refresh_catalog(lake.catalog_path, lake.lake_dir, warn=context.log.warning)
        context.log.info(f"catalog {lake.catalog_path}: views {', '.join(views)}")
        return dg.MaterializeResult(
            metadata={"path": dg.MetadataValue.path(str(lake.catalog_path)), "views": dg.MetadataValue.json(views)}
        )

    return catalog
