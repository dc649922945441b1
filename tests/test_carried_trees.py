"""A task repository's `repo.tar` stands in for its base commit in the repository cache (issue 39, item 1).

Our harness, `validate` and the gym reading a task repository must build from the tree each task carries, with no
git URL that reaches anything. The carried tree becomes a commit of the cache that every reader of the cache
resolves the base sha to: the same files byte for byte (an executable bit, a symlink, an ignored file, CRLF line
ends under a `.gitattributes` that would convert them), the base commit's date (what an era-true install resolves
as of) and the release tags the export recorded. A commit that was not carried is still fetched from the remote.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from swe_forge_dagster.execution.carried_trees import CarriedTree, carry_tree
from swe_forge_dagster.execution.repo_box import fetch_base, write_tree_archive
from swe_forge_dagster.execution.repo_cache import RepoCache, RepoCacheError

WHEN = "2021-05-13T20:35:12+00:00"


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, env=env)
    return proc.stdout.strip()


def upstream(tmp_path: Path) -> tuple[str, str]:
    """A remote `o/p` of two commits, the first tagged `v1.2.0`; (the first's sha, the second's)."""
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / ".gitattributes").write_text("*.txt text eol=lf\n")
    (work / ".gitignore").write_text("build/\n")
    (work / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (work / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (work / "run.sh").chmod(0o755)
    (work / "link").symlink_to("run.sh")
    (work / "build").mkdir()
    (work / "build" / "kept.py").write_text("x = 1\n")
    env = {"GIT_AUTHOR_DATE": WHEN, "GIT_COMMITTER_DATE": WHEN, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    git(work, "add", "-A", "-f", ".", env=env)
    blob = git(work, "hash-object", "-w", "--no-filters", "crlf.txt")  # CRLF in the blob, as old commits have it
    git(work, "update-index", "--cacheinfo", f"100644,{blob},crlf.txt")
    git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c1", env=env)
    git(work, "tag", "v1.2.0")
    first = git(work, "rev-parse", "HEAD")
    (work / "later.py").write_text("y = 2\n")
    git(work, "add", "later.py")
    git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "c2")
    git(tmp_path, "clone", "-q", "--bare", str(work), str(tmp_path / "remotes" / "o" / "p.git"))
    return first, git(work, "rev-parse", "HEAD")


def members(archive: Path) -> dict[str, tuple[int, bytes, str]]:
    """Each member of a tree archive: (mode, content, link target)."""
    with tarfile.open(archive) as tar:
        return {
            m.name: (m.mode, tar.extractfile(m).read() if m.isfile() else b"", m.linkname)  # type: ignore[union-attr]
            for m in tar.getmembers()
            if not m.isdir() and m.name != "pax_global_header"
        }


def test_a_carried_tree_stands_in_for_its_base_commit_in_every_reader_of_the_cache(tmp_path: Path) -> None:
    first, second = upstream(tmp_path)
    origin = RepoCache(tmp_path / "origin-cache", f"file://{tmp_path}/remotes/{{repo}}.git")
    fetch_base(origin, "o/p", first)
    archive = write_tree_archive(origin, "o/p", first, tmp_path / "repo.tar")

    offline = RepoCache(tmp_path / "cache", "file:///nonexistent/{repo}.git")  # reaches nothing
    carried = CarriedTree(archive=str(archive), tags=origin.release_tags("o/p", first))
    fetch_base(offline, "o/p", first, carried)
    assert offline.has("o/p", first) and offline.clones == 0
    again = write_tree_archive(offline, "o/p", first, tmp_path / "again.tar")
    assert members(again) == members(archive)
    assert members(archive)[".swe-forge-tree/crlf.txt"][1] == b"one\r\ntwo\r\n"  # not converted on the way in
    assert members(archive)[".swe-forge-tree/link"][2] == "run.sh"
    assert offline.show_file("o/p", first, "build/kept.py") == b"x = 1\n"  # ignored, but in the tree
    assert "run.sh" in offline.list_files("o/p", first)
    assert offline.committed_at("o/p", first) == datetime.fromisoformat(WHEN).astimezone(UTC)
    assert offline.release_tags("o/p", first) == ("v1.2.0", "1.2.0")
    assert offline.release_version("o/p", first) == "1.2.0"
    with offline.worktree("o/p", first) as tree:
        assert (tree / "run.sh").stat().st_mode & 0o111 and (tree / "link").is_symlink()
    assert carry_tree(offline, "o/p", first, archive) == offline.resolve("o/p", first)  # once only

    with pytest.raises(RepoCacheError):  # not carried, and the remote reaches nothing
        fetch_base(offline, "o/p", second)
    offline.url_template = f"file://{tmp_path}/remotes/{{repo}}.git"
    fetch_base(offline, "o/p", second)  # the empty repository made for the carried tree fetches as a clone does
    assert offline.show_file("o/p", second, "later.py") == b"y = 2\n"
    assert offline.resolve("o/p", second) == second


def test_an_archive_that_is_not_a_tree_escapes_its_folder_or_holds_a_git_folder_is_refused(tmp_path: Path) -> None:
    cache = RepoCache(tmp_path / "cache", "file:///nonexistent/{repo}.git")
    sha = "a" * 40
    bad = tmp_path / "not.tar"
    bad.write_bytes(b"not a tar")
    with pytest.raises(RepoCacheError, match="not a readable tree archive"):
        carry_tree(cache, "o/p", sha, bad)
    escaping = tmp_path / "escaping.tar"
    with tarfile.open(escaping, "w") as tar:
        info = tarfile.TarInfo("../outside.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"bad"))
    with pytest.raises(RepoCacheError, match="not a readable tree archive"):
        carry_tree(cache, "o/p", sha, escaping)
    assert not (tmp_path / "outside.txt").exists() and not cache.has("o/p", sha)
    with_git = tmp_path / "with-git.tar"  # a repository's own config would run commands when git adds the tree
    with tarfile.open(with_git, "w") as tar:
        config = b"[core]\n\tfsmonitor = touch " + str(tmp_path / "PWNED").encode() + b"\n"
        info = tarfile.TarInfo("tree/.git/config")
        info.size = len(config)
        tar.addfile(info, io.BytesIO(config))
    with pytest.raises(RepoCacheError, match=r"holds a \.git folder"):
        carry_tree(cache, "o/p", sha, with_git)
    assert not (tmp_path / "PWNED").exists()
