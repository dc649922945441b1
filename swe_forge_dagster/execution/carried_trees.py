"""Trees a task carries (a task repository's `repo.tar`), put into the repository cache in place of a clone.

Why: a SWE-bench 5 task repository we export carries each task's base tree (`repo.tar`, a `git archive` of the base
commit), so `swebench eval` grades it with no network. Our own harness, `validate` and the gym read the same
directory and must do as well, offline and with no git URL. The cache is where every stage takes its trees from
(`write_tree_archive`, worktrees, `show_file`, the environment build), so the carried tree becomes a commit of the
cache. Git cannot give it the base commit's sha (a sha hashes the history too), so it stands in for it under
`refs/swe-forge/carried/<sha>`, which `RepoCache.resolve` follows when the commit itself is not there. It is dated as
the archive's files are (git archive dates every file with its commit's time: what an era-true install resolves as
of), and its message lists the release tags the export recorded (what `RepoCache.release_tags` gives for it).
"""

from __future__ import annotations

import os
import subprocess
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict

from swe_forge_dagster.execution.repo_cache import CARRIED_PREFIX, CARRIED_TAG, RepoCache, RepoCacheError

GIT_TIMEOUT_S = 600
RAW_ATTRIBUTES = "* -text -ident -filter -working-tree-encoding\n"
"""Outranks the tree's own `.gitattributes`: every file is stored byte for byte as the archive holds it."""


class CarriedTree(BaseModel):
    """The base tree a task carries: a `git archive` of its base commit, and the release tags that commit had."""

    model_config = ConfigDict(frozen=True)

    archive: str
    tags: tuple[str, ...] = ()


def carry_tree(cache: RepoCache, repo: str, sha: str, archive: Path, tags: Sequence[str] = ()) -> str:
    """Put the tree of `archive` into the cache as the stand-in for commit `sha` of `repo` (nothing to do when the
    cache has the commit or a stand-in already); the commit the cache now resolves `sha` to. RepoCacheError when the
    archive is not a readable tar of a tree."""
    if not cache.has(repo, sha):
        path = _bare_repository(cache, repo)
        with tempfile.TemporaryDirectory(prefix="swe-forge-carried-") as tmp:
            tree, stamp = _unpack(archive, Path(tmp) / "tree")
            commit = _commit(cache, tree, sha, stamp, tags)
            with cache.lock(repo):
                fetch = ["-c", "gc.auto=0", "fetch", "--quiet", "--no-tags", str(tree)]
                _git(cache, [*fetch, f"+{commit}:{CARRIED_PREFIX}{sha}"], path)
    return cache.resolve(repo, sha)


def _bare_repository(cache: RepoCache, repo: str) -> Path:
    """The cache's repository for `repo`, made empty (no remote, nothing cloned) when there is none yet: a later
    fetch of a commit that was not carried sets its remote then."""
    path = cache.path(repo)
    with cache.lock(repo):
        if not (path / "HEAD").is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.carry-"))
            staging.chmod(0o755)
            _git(cache, ["init", "--quiet", "--bare", str(staging)], path.parent)
            os.rename(staging, path)
    return path


def _unpack(archive: Path, dest: Path) -> tuple[Path, int]:
    """The tree unpacked under `dest` (a `git archive` puts it under one top folder: that folder), and its files'
        time. The "tar" filter refuses members that would land outside `dest` or carry device files; a `.git` folder is
    refused too (a repository's own config there would run commands when git adds the tree)."""
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()
            if any(".git" in PurePosixPath(member.name).parts for member in members):  # git archive writes none
                raise RepoCacheError(f"{archive} holds a .git folder, which no tree of a commit has")
            tar.extractall(dest, filter="tar")
    except (OSError, tarfile.TarError) as exc:
        raise RepoCacheError(f"{archive} is not a readable tree archive: {exc}") from exc
    stamp = max((member.mtime for member in members if member.isfile()), default=0)
    entries = list(dest.iterdir()) if dest.is_dir() else []
    root = entries[0] if len(entries) == 1 and entries[0].is_dir() else dest
    if not root.is_dir():
        raise RepoCacheError(f"{archive} holds no tree")
    return root, int(stamp)


def _commit(cache: RepoCache, tree: Path, sha: str, stamp: int, tags: Sequence[str]) -> str:
    """A commit of every file under `tree` (ignored ones too: the archive is the commit's tree exactly), made in a
    throwaway repository there and dated `stamp`."""
    date = f"@{stamp} +0000"
    env = {**cache._env, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}  # the cache's isolated git setup
    who = ["-c", "user.name=swe-forge", "-c", "user.email=swe-forge@localhost"]
    safe = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"]  # nothing of the tree's ever runs
    _git(cache, ["init", "--quiet", "."], tree, env)
    (tree / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (tree / ".git" / "info" / "attributes").write_text(RAW_ATTRIBUTES, encoding="utf-8")
    _git(cache, [*safe, "add", "--all", "--force", "."], tree, env)
    tree_id = _git(cache, ["write-tree"], tree, env)
    message = "\n".join([f"the tree of {sha}, carried in", "", *(f"{CARRIED_TAG}{tag}" for tag in tags)])
    return _git(cache, [*who, "commit-tree", tree_id, "-m", message], tree, env)


def _git(cache: RepoCache, args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """Run git with the cache's isolated environment; its stdout, or RepoCacheError with git's own words."""
    Path(cache._env["HOME"]).mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [cache.git, *args],
        cwd=cwd,
        env=env or cache._env,
        capture_output=True,
        text=True,
        timeout=GIT_TIMEOUT_S,
        check=False,
    )
    if proc.returncode != 0:
        raise RepoCacheError(f"cannot carry a tree in (git {args[0]})", proc.stderr)
    return proc.stdout.strip()
