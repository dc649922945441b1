"""Tree archives extract safely on every Python 3.11: with tarfile's "data" filter where it exists, and with
`backports.tarfile`'s filter plus stricter archive checks on Debian bookworm's 3.11.2 (the project image's
Python), which has no `filter=`."""

from __future__ import annotations

import contextlib
import io
import tarfile
from pathlib import Path

import pytest

from swe_forge_dagster.execution.tar_safety import UnsafeArchiveError, safe_extract


def _force_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """Take the path bookworm's 3.11.2 takes (the backport is installed on Pythons before 3.12 only)."""
    pytest.importorskip("backports.tarfile")
    monkeypatch.setattr("swe_forge_dagster.execution.tar_safety.HAS_DATA_FILTER", False)


def _archive(path: Path, *members: tuple[str, str | None, str | None]) -> Path:
    """(name, file text or None, symlink target or None) per member."""
    with tarfile.open(path, "w") as tar:
        for name, text, link in members:
            info = tarfile.TarInfo(name)
            if link is not None:
                info.type, info.linkname = tarfile.SYMTYPE, link
                tar.addfile(info)
            else:
                data = (text or "").encode()
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("filter_available", [True, False], ids=["python-filter", "bookworm-3.11.2"])
def test_a_tree_extracts_and_escapes_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filter_available: bool
) -> None:
    if not filter_available:
        pytest.importorskip("backports.tarfile")
        monkeypatch.delattr(tarfile, "data_filter", raising=False)
    good = _archive(
        tmp_path / "good.tar",
        ("tree/a.py", "x = 1\n", None),
        ("tree/pkg/b.py", "", None),
        ("tree/link", None, "pkg/b.py"),
    )
    with tarfile.open(good) as tar:
        safe_extract(tar, tmp_path / "out")
    assert (tmp_path / "out/tree/a.py").read_text() == "x = 1\n" and (tmp_path / "out/tree/link").is_symlink()
    for n, bad in enumerate(
        [("../evil.py", "x", None), ("tree/etc", None, "/etc"), ("tree/up", None, "../../outside")]
    ):
        archive = _archive(tmp_path / f"bad{n}.tar", bad)
        with tarfile.open(archive) as tar, pytest.raises(tarfile.TarError):
            safe_extract(tar, tmp_path / f"bad{n}")
    assert not (tmp_path / "evil.py").exists() and not (tmp_path / "outside").exists()
    name = f"/tmp/swe-forge-abs-{tmp_path.name}.py"  # the filter strips the slash, the fallback refuses: never at /
    with tarfile.open(_archive(tmp_path / "abs.tar", (name, "x", None))) as tar, contextlib.suppress(tarfile.TarError):
        safe_extract(tar, tmp_path / "abs")
    assert not Path(name).exists()
    assert issubclass(UnsafeArchiveError, tarfile.TarError)


def _chain_archive(path: Path) -> Path:
    """`d/`, `d/l -> ..`, `d/l/x -> ..`, `d/l/x/escaped.txt`: each link is inside when judged against
    the folder before extraction, but after the first two the file lands in the destination's parent."""
    with tarfile.open(path, "w") as tar:
        folder = tarfile.TarInfo("d")
        folder.type, folder.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(folder)
        for name in ("d/l", "d/l/x"):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, ".."
            tar.addfile(info)
        data = b"escaped\n"
        info = tarfile.TarInfo("d/l/x/escaped.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("filter_available", [True, False], ids=["python-filter", "bookworm-3.11.2"])
def test_chained_symlinks_cannot_escape(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, filter_available: bool
) -> None:
    if not filter_available:  # the real extraction, forced onto the fallback that bookworm's 3.11.2 takes
        _force_fallback(monkeypatch)
    elif not hasattr(tarfile, "data_filter"):
        pytest.skip("this Python has no tarfile.data_filter")
    box = tmp_path / "box"
    dest = box / "a" / "out"
    dest.mkdir(parents=True)
    with tarfile.open(_chain_archive(tmp_path / "chain.tar")) as tar, pytest.raises(tarfile.TarError):
        safe_extract(tar, dest)
    assert not [p for p in box.rglob("escaped.txt")], "a file escaped the destination"
    assert not (tmp_path / "escaped.txt").exists()


def test_fallback_refuses_links_through_links_and_stray_hardlinks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _force_fallback(monkeypatch)
    cases = {
        "through-link": [("t/sub", None, "."), ("t/sub/f.py", "x", None)],
        "twice": [("t/f.py", "x", None), ("t/f.py", "y", None)],
        "sibling-up": [("t/a/up", None, "../../..")],
    }
    for label, members in cases.items():
        with tarfile.open(_archive(tmp_path / f"{label}.tar", *members)) as tar, pytest.raises(UnsafeArchiveError):
            safe_extract(tar, tmp_path / label)
    with tarfile.open(tmp_path / "hard.tar", "w") as tar:
        info = tarfile.TarInfo("t/h")
        info.type, info.linkname = tarfile.LNKTYPE, "t/missing"
        tar.addfile(info)
    with tarfile.open(tmp_path / "hard.tar") as tar, pytest.raises(UnsafeArchiveError):
        safe_extract(tar, tmp_path / "hard")


def test_fallback_reads_a_compressed_archive_again_and_refuses_devices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _force_fallback(monkeypatch)
    data = b"x = 1\n"
    with tarfile.open(tmp_path / "tree.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo("tree/a.py")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with tarfile.open(tmp_path / "tree.tar.gz") as tar:
        safe_extract(tar, tmp_path / "out")
    assert (tmp_path / "out/tree/a.py").read_bytes() == data
    with tarfile.open(tmp_path / "fifo.tar", "w") as tar:
        info = tarfile.TarInfo("tree/pipe")
        info.type = tarfile.FIFOTYPE
        tar.addfile(info)
    with tarfile.open(tmp_path / "fifo.tar") as tar, pytest.raises(UnsafeArchiveError):
        safe_extract(tar, tmp_path / "fifo")
    assert not (tmp_path / "fifo/tree/pipe").exists()


def test_fallback_removes_a_symlink_a_later_member_redirected_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`p -> q/..` is inside when made (q is not there yet); `q -> .` then makes p the destination's parent."""
    _force_fallback(monkeypatch)
    archive = _archive(tmp_path / "redirect.tar", ("p", None, "q/.."), ("q", None, "."))
    with tarfile.open(archive) as tar, pytest.raises(UnsafeArchiveError, match="resolving outside"):
        safe_extract(tar, tmp_path / "out")
    assert not (tmp_path / "out/p").is_symlink()
