"""The `swe-forge` command line: one module per command, `app` registers them, `common` is shared."""

from swe_forge_dagster.cli.app import app, main

__all__ = ["app", "main"]
