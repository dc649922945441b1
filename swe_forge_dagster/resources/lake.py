"""The lake (Parquet under `SWE_FORGE_HOME/lake`) and its DuckDB catalog file."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from swe_forge_dagster.common.home import HomeLayout


class LakeResource(dg.ConfigurableResource):
    """Where datasets live; every asset writes its own Parquet under `lake_dir`."""

    home: str

    @property
    def lake_dir(self) -> Path:
        return HomeLayout.of(self.home).lake

    @property
    def catalog_path(self) -> Path:
        return HomeLayout.of(self.home).catalog
