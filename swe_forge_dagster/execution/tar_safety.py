"""Extracting an archive of repository files without letting it write outside its folder.

`tarfile`'s "data" filter does exactly this, but it exists only from Python 3.11.4 (and 3.12);
Debian bookworm's Python, which the project image (deploy/Dockerfile) and the base image ship, is
3.11.2, where `extractall(filter=...)` is a TypeError. There the archive is read again with
`backports.tarfile` (CPython's own later tarfile, data filter included: absolute names, `..`,
devices and fifos, links out of the folder are refused member by member, judged on the folder as
extraction proceeds), after `_check_archive` applies stricter rules judged on the archive as it
defines itself: no name given twice, no member whose parent path goes through a symlink of the
archive, no hardlink to anything but an earlier regular file. After extraction every symlink must
still resolve inside the folder (a later link can redirect an earlier one that was inside when made).
The archives come from `git archive` of untrusted repositories, so a symlink such as `docs -> /etc`,
or a chain such as `d/l -> ..`, `d/l/x -> ..`, `d/l/x/escaped.txt`, must fail, not be followed.
"""

from __future__ import annotations

import os
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
    _extract_with_backport(tar, dest)


def _extract_with_backport(tar: tarfile.TarFile, dest: Path) -> None:
    """The fallback for Pythons without the "data" filter: check the whole archive, then extract it
    through `backports.tarfile`'s data filter, then refuse symlinks a later member redirected out."""
    from backports import tarfile as backport  # installed only where CPython may lack the filter (< 3.12)

    if tar.fileobj is None:
        raise tarfile.ReadError("the archive has no file to read again")
    tar.fileobj.seek(0)  # a compressed archive's fileobj is its decompressing reader
    with backport.open(fileobj=tar.fileobj) as again:
        members = again.getmembers()
        symlinks = _check_archive(members)
        try:
            again.extractall(dest, members=members, filter="data")
        except backport.TarError as error:  # its errors are not the standard library's TarError
            raise UnsafeArchiveError(str(error)) from error
    root = os.path.realpath(dest)
    escaping = [n for n in sorted(symlinks) if not _inside(root, os.path.join(root, n))]
    for name in escaping:  # a chain of in-archive links can still point out: remove it, then refuse
        os.unlink(os.path.join(root, name))
    if escaping:
        raise UnsafeArchiveError(f"symlinks resolving outside the destination: {escaping}")


def _check_archive(members: list[tarfile.TarInfo]) -> set[str]:
    """Refuse what the data filter allows but a source tree never holds; return the symlinks' names."""
    symlinks: set[str] = set()
    files: set[str] = set()
    seen: set[str] = set()
    for member in members:
        name = _normal(member.name)
        if name in seen:
            raise UnsafeArchiveError(f"{member.name!r} appears twice in the archive")
        seen.add(name)
        parts = name.split("/")
        if any("/".join(parts[:i]) in symlinks for i in range(1, len(parts))):
            raise UnsafeArchiveError(f"{member.name!r} goes through a symlink of the archive")
        if member.issym():
            symlinks.add(name)
        elif member.islnk():
            if _normal(member.linkname) not in files:  # a hardlink's name is relative to the archive root
                raise UnsafeArchiveError(f"{member.name!r} is a hardlink to {member.linkname!r}, not an earlier file")
        elif member.isfile():
            files.add(name)
    return symlinks


def _normal(name: str) -> str:
    """`name` without `.` and empty parts; absolute names and `..` are refused outright."""
    if name.startswith("/") or os.path.isabs(name):
        raise UnsafeArchiveError(f"{name!r} is an absolute name")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise UnsafeArchiveError(f"{name!r} would be written outside the destination")
    return "/".join(parts)


def _inside(root: str, path: str) -> bool:
    return os.path.commonpath([root, os.path.realpath(path)]) == root
