"""The lake (Parquet under `SWE_FORGE_HOME/lake`) and its DuckDB catalog file."""

from __future__ import annotations

from pathlib import Path

import dagster as dg


class LakeResource(dg.ConfigurableResource):
    """Where datasets live; every asset writes its own Parquet under `lake_dir`."""

    home: str

    @property
    def home_dir(self) -> Path:
        return Path(self.home).expanduser().resolve()

    @property
    def lake_dir(self) -> Path:
        return self.home_dir / "lake"

    @property
    def catalog_path(self) -> Path:
        return self.home_dir / "catalog.duckdb"

    @property
    def cache_dir(self) -> Path:
        return self.home_dir / "cache"
