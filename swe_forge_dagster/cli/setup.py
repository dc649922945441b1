"""`swe-forge setup`: create SWE_FORGE_HOME and the persistent Dagster instance, with its pool limits.

`swe-forge setup --buildx` instead installs the `docker buildx` plugin that SWE-bench 5's `swebench eval` builds
with (`common.buildx`; Debian bookworm's docker.io lacks it) and touches nothing else, so it can run before any
setting exists, as root or as the user. Exit 0 when `docker buildx version` works afterwards, else one `error:`
line and exit 1.
"""

from __future__ import annotations

import os
from typing import Annotated

import typer

from swe_forge_dagster.cli.common import out, say
from swe_forge_dagster.common.terminal import inert
from swe_forge_dagster.settings import get_settings


def setup(
    buildx: Annotated[
        bool,
        typer.Option(
            "--buildx",
            help="Only install the docker buildx plugin swebench eval builds with (pinned, from the Debian mirror "
            "SWE_FORGE_DEBIAN_MIRROR; into $DOCKER_CONFIG/cli-plugins, the system directory as root, else "
            "~/.docker/cli-plugins); nothing when docker buildx already works.",
        ),
    ] = False,
) -> None:
    """Create SWE_FORGE_HOME and the persistent Dagster instance, and set the pool limits; with --buildx, only
    install the docker buildx plugin that swebench eval needs."""
    if buildx:
        _setup_buildx()
        return
    from swe_forge_dagster.orchestration.instance import POOL_LIMITS, open_instance

    settings = get_settings()
    instance = open_instance(settings)
    out.print(f"SWE_FORGE_HOME  {settings.home_abs}")
    out.print(f"DAGSTER_HOME    {os.environ['DAGSTER_HOME']}")
    for pool, limit in POOL_LIMITS.items():
        out.print(f"pool {pool:<20} {instance.event_log_storage.get_concurrency_info(pool).slot_count}/{limit}")


def _setup_buildx() -> None:
    """Install buildx unless it works, then prove it with `docker buildx version`: a plugin written where this
    docker CLI does not look (or one that does not run) is a failure, not a success message."""
    import shutil

    from swe_forge_dagster.common.buildx import BuildxInstallError, buildx_version, install_buildx

    if shutil.which("docker") is None:
        say("error:", "red", "no docker CLI on PATH: install Docker first (Debian: apt-get install docker.io)")
        raise typer.Exit(1)
    if (version := buildx_version()) is not None:
        out.print(inert(f"buildx     {version}"))
        return
    try:
        plugin = install_buildx(ca_bundle=get_settings().ca_bundle)
    except (BuildxInstallError, OSError) as exc:
        say("error:", "red", f"cannot install docker buildx: {exc}")
        raise typer.Exit(1) from None
    if (version := buildx_version()) is None:
        say("error:", "red", f"installed {plugin}, but `docker buildx version` still fails")
        raise typer.Exit(1)
    out.print(inert(f"installed  {plugin}"))
    out.print(inert(f"buildx     {version}"))
