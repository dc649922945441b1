"""Extracting an archive of repository files without letting it write outside its folder.

`tarfile`'s "data" filter does exactly this, but it exists only from Python 3.11.4 (and 3.12);
Debian bookworm's Python, which the project image (deploy/Dockerfile) and the base image ship, is
3.11.2, where `extractall(filter=...)` is a TypeError. There the same rules are checked here before
extracting: no absolute names, no `..`, no device or fifo members, and no link pointing out of
the folder. The archives come from `git archive` of untrusted repositories, so a symlink such as
`docs -> /etc` must fail the extraction, not be followed.
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path


class UnsafeArchiveError(tarfile.TarError):
    """A member would be written, or would point, outside the destination."""


def safe_extract(tar: tarfile.TarFile, dest: Path) -> None:
    """Extract `tar` into `dest` under the "data" filter's rules, on every Python 3.11."""
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
        return
    root = os.path.realpath(dest)
    members = tar.getmembers()
    for member in members:
        _check(member, root)
    tar.extractall(dest, members=members)


def _inside(root: str, path: str) -> bool:
    return os.path.commonpath([root, os.path.realpath(path)]) == root


def _check(member: tarfile.TarInfo, root: str) -> None:
    name = member.name
    if os.path.isabs(name) or ".." in Path(name).parts or not _inside(root, os.path.join(root, name)):
        raise UnsafeArchiveError(f"{name!r} would be written outside the destination")
    if member.isdev() or member.isfifo():
        raise UnsafeArchiveError(f"{name!r} is a device or fifo")
    if member.issym():
        target = os.path.join(root, os.path.dirname(name), member.linkname)
        if os.path.isabs(member.linkname) or not _inside(root, target):
            raise UnsafeArchiveError(f"{name!r} links outside the destination ({member.linkname!r})")
    if member.islnk() and (os.path.isabs(member.linkname) or not _inside(root, os.path.join(root, member.linkname))):
        raise UnsafeArchiveError(f"{name!r} links outside the destination ({member.linkname!r})")
