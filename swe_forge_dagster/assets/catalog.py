"""`catalog`: the DuckDB file of views over the lake, for any DuckDB client.

The only step that opens the catalog file for writing (pool `duckdb_catalog`, limit 1); ingest
never touches it. `swe-forge sql` refreshes the same views on demand.
"""

import dagster as dg

from swe_forge_dagster.assets.candidates import enriched_prs, pr_candidates
from swe_forge_dagster.assets.gharchive import gharchive_pr_events
from swe_forge_dagster.assets.triage import classified_prs
from swe_forge_dagster.resources import LakeResource
from swe_forge_dagster.wiring.catalog import refresh_catalog


@dg.asset(
    deps=[
        dg.AssetDep(asset, partition_mapping=dg.AllPartitionMapping())
        for asset in (gharchive_pr_events, pr_candidates, enriched_prs, classified_prs)
    ],
    pool="duckdb_catalog",
    op_tags={"swe_forge/stage": "catalog"},
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
