"""How `--help` reads when piped or pasted: option names whole, no type shown for a flag.

Typer draws help with rich, at the terminal's width, and 80 columns when the output is not a terminal, which cuts long
option names (`--keep-contai…`) in a file, a pager or an agent's tool output; a wider page keeps them whole, unless
the user gives a width (`COLUMNS` or `TERMINAL_WIDTH`), which rich then obeys. Typer 0.29 also shows a type for every
option, `<bool>` for an on/off flag, which takes no value; a flag's type is left out.
"""

from __future__ import annotations

import os
import sys

import typer.rich_utils
from click import Context
from typer.core import TyperOption

PIPED_WIDTH = 120


def configure_help() -> None:
    """Apply both, once, before the app draws any help."""
    told = os.environ.get("TERMINAL_WIDTH") or os.environ.get("COLUMNS")  # rich obeys both: the user's width wins
    if typer.rich_utils.MAX_WIDTH is None and not told and not sys.stdout.isatty():
        typer.rich_utils.MAX_WIDTH = PIPED_WIDTH
    if getattr(TyperOption.display_type_rich, "__wrapped_for_flags__", False):
        return
    shown = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: Context) -> str | None:
        return None if self.is_flag else shown(self, ctx)

    display_type_rich.__wrapped_for_flags__ = True  # type: ignore[attr-defined]
    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
