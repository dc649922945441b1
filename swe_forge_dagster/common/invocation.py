"""How to run `swe-forge` again from where the user is, so a printed next step runs as printed.

From a fresh clone the command is not on PATH: the clone's wrapper `./swe-forge` is (it creates the environment on
first use), or the environment's own script. So a next step names `swe-forge` only when that name runs this very
installation, `./swe-forge` when the current folder is the clone, and the script's absolute path otherwise; and
every value in it is shell-quoted.
"""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

CLONE = Path(__file__).resolve().parents[2]
"""The folder that holds this package: a clone when it has the `swe-forge` wrapper."""


def swe_forge_command() -> str:
    """`swe-forge`, `./swe-forge` or the absolute path of the environment's script, whichever runs this one."""
    script = Path(sys.executable).with_name("swe-forge")
    found = shutil.which("swe-forge")
    if found and Path(found).resolve() == script.resolve():
        return "swe-forge"
    wrapper = CLONE / "swe-forge"
    if wrapper.is_file() and Path.cwd().resolve() == CLONE:
        return "./swe-forge"
    return shlex.quote(str(wrapper if wrapper.is_file() else script))


def next_step(*args: str, home: Path | str | None = None) -> str:
    """A command line to paste: `[SWE_FORGE_HOME=<home>] <swe-forge> <args>`, each part quoted for the shell."""
    prefix = f"SWE_FORGE_HOME={shlex.quote(str(home))} " if home is not None else ""
    return prefix + " ".join([swe_forge_command(), *(shlex.quote(arg) for arg in args)])
