"""The catalog over the declared datasets: what the CLI, the assets, the sensors and the demo call.

`lake.catalog` does the work for any registry of datasets; these are the same functions bound to the
project's registry (`wiring.datasets.DATASETS`), with the signatures callers have always used.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from swe_forge_dagster.common.store import StorePath
from swe_forge_dagster.lake import catalog
from swe_forge_dagster.lake.catalog import CatalogBusyError, CatalogWarning, QueryError, Warn
from swe_forge_dagster.wiring.datasets import DATASETS

__all__ = [
    "DATASETS",
    "CatalogBusyError",
    "CatalogWarning",
    "QueryError",
    "query",
    "refresh_catalog",
    "refresh_catalog_or_warning",
]


def refresh_catalog(
    catalog_path: Path, lake_dir: StorePath, lock_timeout: float = 30.0, warn: Warn | None = None
) -> list[str]:
    """(Re)create every declared view in the catalog file (`lake.catalog.refresh_catalog`)."""
    return catalog.refresh_catalog(catalog_path, lake_dir, DATASETS, lock_timeout, warn)


def query(lake_dir: StorePath, sql: str, warn: Warn | None = None) -> pa.Table:
    """Run `sql` against fresh views of every declared dataset (`lake.catalog.query`)."""
    return catalog.query(lake_dir, sql, DATASETS, warn)


def refresh_catalog_or_warning(catalog_path: Path, lake_dir: StorePath) -> str | None:
    """Refresh the views, a busy file or an unreadable shared database being a warning (returned)."""
    return catalog.refresh_catalog_or_warning(catalog_path, lake_dir, DATASETS)
