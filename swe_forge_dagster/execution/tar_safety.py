"""Extracting an archive of repository files without letting it write outside its folder.

`tarfile`'s "data" filter does exactly this, but it exists only from Python 3.11.4 (and 3.12);
Debian bookworm's Python, which the project image (deploy/Dockerfile) and the base image ship, is
3.11.2, where `extractall(filter=...)` is a TypeError. There `_extract_checked` applies stricter
rules, judged on the archive as it defines itself (not on the folder before extraction, which
misses links the archive creates first): no absolute names, no `..`, no device or fifo members, no
name given twice, no member whose parent path goes through a symlink of the archive, no symlink
whose target is absolute or leaves the folder from the link's own directory, no hardlink to
anything but an earlier regular file; after extraction every symlink must resolve inside the folder.
The archives come from `git archive` of untrusted repositories, so a symlink such as `docs -> /etc`,
or a chain such as `d/l -> ..`, `d/l/x -> ..`, `d/l/x/escaped.txt`, must fail, not be followed.
"""

from __future__ import annotations

import os
import posixpath
import tarfile
from pathlib import Path

HAS_DATA_FILTER = hasattr(tarfile, "data_filter")


class UnsafeArchiveError(tarfile.TarError):
    """A member would be written, or would point, outside the destination."""


def safe_extract(tar: tarfile.TarFile, dest: Path) -> None:
    """Extract `tar` into `dest` under the "data" filter's rules, on every Python 3.11."""
    if HAS_DATA_FILTER and hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
        return
    _extract_checked(tar, dest)


def _extract_checked(tar: tarfile.TarFile, dest: Path) -> None:
    """The fallback for Pythons without the "data" filter: check the whole archive, then extract."""
    members = tar.getmembers()
    symlinks: set[str] = set()
    files: set[str] = set()
    seen: set[str] = set()
    for member in members:
        name = _normal(member.name)
        if name in seen:
            raise UnsafeArchiveError(f"{member.name!r} appears twice in the archive")
        seen.add(name)
        parts = name.split("/")
        for i in range(1, len(parts)):
            if "/".join(parts[:i]) in symlinks:
                raise UnsafeArchiveError(f"{member.name!r} goes through a symlink of the archive")
        if member.isdev() or member.isfifo():
            raise UnsafeArchiveError(f"{member.name!r} is a device or fifo")
        if member.issym():
            _link_target_inside(member, posixpath.dirname(name))
            symlinks.add(name)
        elif member.islnk():
            target = _link_target_inside(member, "")  # a hardlink's name is relative to the archive root
            if target not in files:
                raise UnsafeArchiveError(f"{member.name!r} is a hardlink to {member.linkname!r}, not an earlier file")
        elif member.isfile():
            files.add(name)
    root = os.path.realpath(dest)
    for member in members:  # the folder may exist already: nothing in it may lead out either
        if not _inside(root, os.path.join(root, posixpath.dirname(_normal(member.name)))):
            raise UnsafeArchiveError(f"{member.name!r} would be written outside the destination")
    tar.extractall(dest, members=members)
    escaping = [n for n in sorted(symlinks) if not _inside(root, os.path.join(root, n))]
    for name in escaping:  # a chain of in-archive links can still point out: remove it, then refuse
        os.unlink(os.path.join(root, name))
    if escaping:
        raise UnsafeArchiveError(f"symlinks resolving outside the destination: {escaping}")


def _normal(name: str) -> str:
    if name.startswith("/") or os.path.isabs(name):
        raise UnsafeArchiveError(f"{name!r} is an absolute name")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise UnsafeArchiveError(f"{name!r} would be written outside the destination")
    return "/".join(parts)


def _link_target_inside(member: tarfile.TarInfo, base: str) -> str:
    link = member.linkname
    target = posixpath.normpath(posixpath.join(base, link)) if link else ""
    if not link or link.startswith("/") or os.path.isabs(link) or target == ".." or target.startswith("../"):
        raise UnsafeArchiveError(f"{member.name!r} links outside the destination ({link!r})")
    return target


def _inside(root: str, path: str) -> bool:
    return os.path.commonpath([root, os.path.realpath(path)]) == root
