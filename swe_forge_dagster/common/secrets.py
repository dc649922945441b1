"""Secrets by name: the process environment first, then `.env` in the working directory.

Resources never hold secret values in their config (the UI shows config); they hold the name
of the variable and read the value when a run starts. Settings read `.env` too, so a token put
there must work the same way here.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from dotenv import dotenv_values


def secret_from_env(names: Sequence[str], dotenv_path: Path = Path(".env")) -> str | None:
    for name in names:
        if os.environ.get(name):
            return os.environ[name]
    if dotenv_path.is_file():
        values = dotenv_values(dotenv_path)
        for name in names:
            if values.get(name):
                return values[name]
    return None
