"""What the commands share: the two consoles, labelled messages and the usage-error exit.

Exit codes across commands: 0 success, 1 the work failed, 2 bad usage (each command's module
docstring names its own extra codes).

Messages carry text from outside (paths, ids, exception text that quotes a file or a repository),
so `say` prints it as plain text (`common.terminal`): markup in it is shown, never obeyed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.text import Text

from swe_forge_dagster.common.store import StorePath
from swe_forge_dagster.common.terminal import inert

EXIT_USAGE = 2


def _console(stderr: bool) -> Console:
    """A console that wraps at the terminal's width, and not at all when its stream is a file or a pipe: a command,
    a path or an error message copied from a log must be one line, as printed (`COLUMNS` still decides if set)."""
    stream = sys.stderr if stderr else sys.stdout
    try:
        terminal = bool(stream and stream.isatty())
    except (AttributeError, ValueError):  # no stream (a detached service) or a closed one
        terminal = False
    piped = not terminal and "COLUMNS" not in os.environ
    return Console(stderr=stderr, width=NO_WRAP if piped else None, soft_wrap=piped)


NO_WRAP = 10_000
err = _console(stderr=True)
out = _console(stderr=False)


def say(label: str, style: str, message: object, console: Console = err) -> None:
    """`label` in `style`, then `message` as inert text (`error:`, `warning:`, ...; its later lines indented)."""
    console.print(Text.assemble((label, style), " ", inert(message, multiline=True)), highlight=False)


def usage_error(message: str) -> typer.Exit:
    """Print `message` as an error and return the exit for bad usage (`raise usage_error(...)`)."""
    say("error:", "red", message)
    return typer.Exit(EXIT_USAGE)


def refresh_catalog_or_warn(catalog_path: Path, lake_dir: StorePath) -> None:
    """Refresh the DuckDB catalog's views; another process holding the file is a warning, not a failure."""
    from swe_forge_dagster.wiring.catalog import refresh_catalog_or_warning

    if warning := refresh_catalog_or_warning(catalog_path, lake_dir):
        say("warning:", "yellow", warning)


def input_dir(given: Path | None) -> Path:
    """`--input` of validate/export (default: the output directory of mining); exit 2 when it is missing."""
    from swe_forge_dagster.settings import get_settings

    path = (given or get_settings().output_dir).expanduser().resolve()
    if not path.is_dir():
        raise usage_error(f"input directory {path} does not exist")
    return path
