"""`swe-forge demo`: the pipeline on the bundled demo world. Exit 0 when every stage delivered."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from swe_forge_dagster.cli.common import err, out
from swe_forge_dagster.settings import get_settings


def demo(
    home: Annotated[Path | None, typer.Option(help="where the demo lives (default: $SWE_FORGE_HOME/demo)")] = None,
) -> None:
    """Run the pipeline on the bundled demo world: no keys, no network."""
    from swe_forge_dagster.demo.run import run_demo

    settings = get_settings()
    demo_home = (home or settings.home_abs / "demo").resolve()
    raise typer.Exit(run_demo(settings, demo_home, out, err))
