"""Where `uv` is, for installing a pinned tool into an environment of its own (the local model's engine,
mini-swe-agent's virtual environment).

`scripts/bootstrap` puts uv beside the project's environment (`.uv-tool/bin/uv`) when it is not on PATH, so both are
looked at. uv trusts the system's certificate store only with `UV_NATIVE_TLS` (a proxy's CA is added there)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path


def uv_binary() -> str | None:
    """uv on PATH, else the one `scripts/bootstrap` installed beside this environment; None when neither is."""
    beside = Path(sys.prefix).parent / ".uv-tool" / "bin" / "uv"
    return shutil.which("uv") or (str(beside) if beside.is_file() else None)


def uv_environment() -> dict[str, str]:
    """The process environment for a uv command: the system's certificates trusted unless the user said otherwise."""
    return {"UV_NATIVE_TLS": "1", **os.environ}
