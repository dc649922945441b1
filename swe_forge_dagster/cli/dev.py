"""`swe-forge dev`: `dagster dev` on the persistent instance (extra arguments are passed through)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import typer

from swe_forge_dagster.cli.common import err
from swe_forge_dagster.settings import get_settings


def dev(ctx: typer.Context) -> None:
    """`dagster dev` on the persistent instance (extra arguments are passed through)."""
    from swe_forge_dagster.orchestration.instance import open_instance

    settings = get_settings()
    open_instance(settings)  # DAGSTER_HOME, pool limits, and runs of killed processes failed first
    target = ["-w", "workspace.yaml"] if Path("workspace.yaml").is_file() else ["-m", "swe_forge_dagster.definitions"]
    dagster = shutil.which("dagster") or str(Path(sys.executable).with_name("dagster"))
    err.print(f"DAGSTER_HOME={os.environ['DAGSTER_HOME']} dagster dev {' '.join(target + ctx.args)}")
    os.execv(dagster, [dagster, "dev", *target, *ctx.args])
