"""A folder's identity by its content, the same in every checkout of it: for naming an agent in results.

An agent run from `./agents/mine` here and from `/home/ci/agents/mine` on another machine is the same agent when its
files are the same, and another agent when one byte differs: the host path says neither. The digest covers each
file's path relative to the folder and its bytes, in sorted order (symlinks by their target text, not followed);
caches and version-control folders (`__pycache__`, `.git`, `node_modules`, `.venv`) are left out.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

SKIPPED = {"__pycache__", ".git", ".hg", ".svn", "node_modules", ".venv", ".mypy_cache", ".pytest_cache"}


@functools.lru_cache(maxsize=64)
def folder_digest(folder: Path) -> str:
    """The sha256 of the folder's files (12 hex digits are shown; the whole digest is returned)."""
    digest = hashlib.sha256()
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED)
        for name in sorted(files):
            path = Path(root, name)
            relative = path.relative_to(folder).as_posix()
            digest.update(relative.encode() + b"\0")
            if path.is_symlink():
                digest.update(b"link:" + os.readlink(path).encode())
            else:
                with path.open("rb") as handle:
                    for block in iter(lambda handle=handle: handle.read(1 << 20), b""):
                        digest.update(block)
            digest.update(b"\0")
    return digest.hexdigest()
