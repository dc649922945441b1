"""A folder's identity by its content, the same in every checkout of it: for naming an agent in results.

An agent run from `./agents/mine` here and from `/home/ci/agents/mine` on another machine is the same agent when its
files are the same, and another agent when one byte differs: the host path says neither. The digest covers each
file's path relative to the folder and its bytes, in sorted order (symlinks by their target text, not followed).
Folders are left out by their shape alone, with no list of any tool's names: hidden ones (`.git`, `.venv`,
`.pytest_cache`: version control, environments, caches) and dunder ones (`__pycache__`: an interpreter's caches).
Every other folder counts, installed dependencies included: an agent run with other or edited dependencies is
another agent.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path


def skipped(folder: str) -> bool:
    """Whether a folder of that name is left out of the digest: hidden (`.git`) or dunder (`__pycache__`)."""
    return folder.startswith(".") or (len(folder) > 4 and folder.startswith("__") and folder.endswith("__"))


def folder_digest(folder: Path) -> str:
    """The sha256 of the folder's files (12 hex digits are shown; the whole digest is returned).

    Files are read again only when their list, sizes or modification times changed since the last call: a long-lived
    process (the UI's code server, a harness over many tasks) sees an edited agent as the other agent it is.
    """
    files = _files(folder)
    signature = tuple((relative, *_stat(path)) for relative, path in files)
    return _digest(folder, signature)


def _files(folder: Path) -> list[tuple[str, Path]]:
    found = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not skipped(d))
        for name in sorted(names):
            path = Path(root, name)
            found.append((path.relative_to(folder).as_posix(), path))
    return found


def _stat(path: Path) -> tuple[int, int]:
    info = path.lstat()
    return info.st_mtime_ns, info.st_size


@functools.lru_cache(maxsize=64)
def _digest(folder: Path, signature: tuple[tuple[str, int, int], ...]) -> str:
    digest = hashlib.sha256()
    for relative, _, _ in signature:
        path = folder / relative
        digest.update(relative.encode() + b"\0")
        if path.is_symlink():
            digest.update(b"link:" + os.readlink(path).encode())
        else:
            with path.open("rb") as handle:
                for block in iter(lambda handle=handle: handle.read(1 << 20), b""):
                    digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()
