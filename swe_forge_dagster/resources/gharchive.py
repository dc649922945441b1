"""GH Archive access: the source URL, retry and concurrency limits of downloads."""

from __future__ import annotations

import dagster as dg
from pydantic import Field

from swe_forge_dagster.common.dagster_names import GHARCHIVE_DOWNLOAD_POOL
from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.gharchive.download import ArchiveFetcher
from swe_forge_dagster.gharchive.ingest import IngestOptions
from swe_forge_dagster.wiring.shared_state import request_slots


class GharchiveResource(dg.ConfigurableResource):
    """Builds the fetcher; `max_parallel_downloads` is also a cap across runs: machine-wide, or across every
    machine sharing the database when `SWE_FORGE_POSTGRES_URL` is set (`wiring.shared_state`)."""

    base_url: str = Field(description="https://data.gharchive.org or file:///mirror/dir")
    home: str = Field(description="SWE_FORGE_HOME: downloads are staged under its cache/")
    max_parallel_downloads: int = Field(default=8, ge=1, le=64)
    max_attempts: int = Field(default=5, ge=1)
    timeout_seconds: float = Field(default=120.0, gt=0)
    backoff_initial_seconds: float = Field(default=1.0, ge=0)
    max_bad_line_fraction: float = Field(default=0.01, ge=0, le=1)
    keep_downloads: bool = Field(default=False, description="keep downloaded .json.gz files in the cache")

    def fetcher(self) -> ArchiveFetcher:
        home = HomeLayout.of(self.home)
        return ArchiveFetcher(
            self.base_url,
            home.cache,
            timeout_seconds=self.timeout_seconds,
            max_attempts=self.max_attempts,
            backoff_initial=self.backoff_initial_seconds,
            slots=request_slots(home, GHARCHIVE_DOWNLOAD_POOL, self.max_parallel_downloads),
        )

    def options(self) -> IngestOptions:
        return IngestOptions(
            max_parallel_downloads=self.max_parallel_downloads,
            max_bad_line_fraction=self.max_bad_line_fraction,
            keep_downloads=self.keep_downloads,
        )
