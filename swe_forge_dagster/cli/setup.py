"""`swe-forge setup`: create SWE_FORGE_HOME and the persistent Dagster instance, with its pool limits."""

from __future__ import annotations

import os

from swe_forge_dagster.cli.common import out
from swe_forge_dagster.settings import get_settings


def setup() -> None:
    """Create SWE_FORGE_HOME and the persistent Dagster instance, and set the pool limits."""
    from swe_forge_dagster.orchestration.instance import POOL_LIMITS, open_instance

    settings = get_settings()
    instance = open_instance(settings)
    out.print(f"SWE_FORGE_HOME  {settings.home_abs}")
    out.print(f"DAGSTER_HOME    {os.environ['DAGSTER_HOME']}")
    for pool, limit in POOL_LIMITS.items():
        out.print(f"pool {pool:<20} {instance.event_log_storage.get_concurrency_info(pool).slot_count}/{limit}")
