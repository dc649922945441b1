"""The repo cache on the git world: one partial clone per repo, cheap fetches, clean worktrees.

Everything runs against local bare remotes (`file://`), never the network.
"""

from __future__ import annotations

import multiprocessing
import os
import re
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from swe_forge_dagster.demo.worlds.git_world import GitWorld, WorldPR, build_git_world
from swe_forge_dagster.execution.repo_cache import RepoCache, RepoCacheError

TINYCALC = "acme-labs/tinycalc"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> GitWorld:
    return build_git_world(tmp_path_factory.mktemp("git-world"))


@pytest.fixture
def pr(world: GitWorld) -> WorldPR:
    return world.pr(TINYCALC, 12)


@pytest.fixture
def cache(world: GitWorld, tmp_path: Path) -> RepoCache:
    return RepoCache(tmp_path / "cache", world.url_template)


def git(cwd: Path, *args: str, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(cwd), GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
    return subprocess.run(["git", *args], cwd=cwd, env=env, input=stdin, capture_output=True, text=True, check=check)


def tree_files(root: Path) -> dict[str, bytes]:
    """Every file of a checkout except git's own `.git` link."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != ".git"}


def patch_paths(patch: str) -> set[str]:
    return {path for pair in re.findall(r"^diff --git a/(\S+) b/(\S+)$", patch, re.M) for path in pair}


def test_ensure_makes_one_bare_partial_clone(cache: RepoCache, pr: WorldPR) -> None:
    path = cache.ensure(TINYCALC)
    assert path == cache.root / "acme-labs" / "tinycalc.git"
    assert git(path, "rev-parse", "--is-bare-repository").stdout.strip() == "true"
    assert git(path, "config", "remote.origin.partialclonefilter").stdout.strip() == "blob:none"
    missing = [
        line for line in git(path, "rev-list", "--objects", "--all", "--missing=print").stdout.split() if line[0] == "?"
    ]
    assert missing, "blobs are fetched lazily, not at clone time"
    inode = path.stat().st_ino
    assert cache.ensure(TINYCALC) == path and cache.clones == 1 and path.stat().st_ino == inode
    assert RepoCache(cache.root, cache.url_template).ensure(TINYCALC) == path  # another instance reuses it too
    assert not list(path.parent.glob(".*clone-*"))


def test_fetch_refs_and_shas_once(world: GitWorld, cache: RepoCache, pr: WorldPR) -> None:
    cache.fetch(TINYCALC, [f"refs/pull/{pr.number}/head", pr.merge_commit_sha, pr.base_sha])
    assert cache.resolve(TINYCALC, f"refs/pull/{pr.number}/head") == pr.head_sha
    assert cache.resolve(TINYCALC, pr.merge_commit_sha) == pr.merge_commit_sha
    # Already present: nothing reaches the remote, so even an unreachable one is fine.
    offline = RepoCache(cache.root, "file:///nonexistent/{repo}.git")
    offline.fetch(TINYCALC, [f"refs/pull/{pr.number}/head", pr.merge_commit_sha, pr.base_sha, "main"])
    with pytest.raises(RepoCacheError, match="cannot fetch"):
        offline.fetch(TINYCALC, [f"refs/pull/{pr.number}/head"], refresh=True)
    cache.fetch(TINYCALC, ["refs/pull/15/head"])  # the repo's next PR only adds its own ref
    assert cache.resolve(TINYCALC, "refs/pull/15/head") == world.pr(TINYCALC, 15).head_sha


def test_the_remote_is_asked_only_for_what_is_missing(world: GitWorld, tmp_path: Path, pr: WorldPR) -> None:
    """A wrapper git logs every upload-pack the cache starts: each one is a trip to the remote."""
    log = tmp_path / "git.log"
    wrapper = tmp_path / "git-wrapper"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec git "$@"\n')
    wrapper.chmod(0o755)
    cache = RepoCache(tmp_path / "cache", world.url_template, git=str(wrapper))

    def trips() -> int:
        return sum(line.endswith("upload-pack " + str(world.remote(TINYCALC))) for line in log.read_text().splitlines())

    cache.fetch(TINYCALC, [f"refs/pull/{pr.number}/head", pr.merge_commit_sha])
    assert trips() == 2  # the clone, then one fetch for both
    cache.fetch(TINYCALC, [pr.base_sha, pr.head_sha, pr.merge_commit_sha, f"refs/pull/{pr.number}/head"])
    with pytest.raises(RepoCacheError, match="fetch it first"):
        cache.resolve(TINYCALC, "f" * 40)  # a missing commit is not fetched lazily (with all its history)
    assert cache.merge_base(TINYCALC, pr.base_sha, pr.head_sha) == pr.base_sha
    assert trips() == 2
    with cache.worktree(TINYCALC, pr.head_sha):
        assert trips() == 3  # the checkout's blobs, in one batch
    with cache.worktree(TINYCALC, pr.head_sha):
        assert trips() == 3  # and never again


def test_merge_base_is_the_prs_base(cache: RepoCache, pr: WorldPR) -> None:
    cache.fetch(TINYCALC, [f"refs/pull/{pr.number}/head", pr.merge_commit_sha])
    assert cache.merge_base(TINYCALC, pr.base_sha, pr.head_sha) == pr.base_sha
    assert cache.merge_base(TINYCALC, pr.merge_commit_sha, pr.head_sha) == pr.head_sha


def test_worktrees_hold_the_expected_files(cache: RepoCache, pr: WorldPR) -> None:
    cache.fetch(TINYCALC, [pr.head_sha, pr.merge_commit_sha])
    with cache.worktree(TINYCALC, pr.base_sha) as base, cache.worktree(TINYCALC, pr.head_sha) as head:
        assert base != head and base.parent.parent == cache.root / "worktrees"
        assert tree_files(base) == pr.base_tree
        assert tree_files(head) == pr.head_tree
        assert git(head, "rev-parse", "HEAD").stdout.strip() == pr.head_sha
    with cache.worktree(TINYCALC, pr.merge_commit_sha) as merge:
        assert tree_files(merge) == pr.head_tree
    assert not list((cache.root / "worktrees").iterdir())


def test_concurrent_worktrees_of_one_repo(cache: RepoCache, pr: WorldPR) -> None:
    cache.fetch(TINYCALC, [pr.head_sha])
    barrier = threading.Barrier(4)
    errors: list[BaseException] = []

    def check(sha: str, expected: dict[str, bytes]) -> None:
        try:
            barrier.wait()
            with cache.worktree(TINYCALC, sha) as tree:
                assert tree_files(tree) == expected
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    jobs = [(pr.base_sha, pr.base_tree), (pr.head_sha, pr.head_tree)] * 2
    threads = [threading.Thread(target=check, args=job) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert not list((cache.root / "worktrees").iterdir())
    assert git(cache.path(TINYCALC), "worktree", "list", "--porcelain").stdout.count("worktree ") == 1


def test_worktree_is_removed_after_an_error(cache: RepoCache, pr: WorldPR) -> None:
    seen: list[Path] = []
    with pytest.raises(RuntimeError, match="boom"), cache.worktree(TINYCALC, pr.base_sha) as tree:
        seen.append(tree)
        (tree / "scratch.txt").write_text("left behind?")
        raise RuntimeError("boom")
    assert not seen[0].exists() and not list((cache.root / "worktrees").iterdir())
    listing = git(cache.path(TINYCALC), "worktree", "list", "--porcelain").stdout
    assert listing.count("worktree ") == 1  # only the bare repository itself
    assert not (cache.path(TINYCALC) / "worktrees").exists() or not list((cache.path(TINYCALC) / "worktrees").iterdir())


def test_diff_touches_exactly_the_prs_files(cache: RepoCache, pr: WorldPR) -> None:
    cache.fetch(TINYCALC, [pr.head_sha])
    assert patch_paths(cache.diff(TINYCALC, pr.base_sha, pr.head_sha)) == set(pr.file_paths)
    assert patch_paths(cache.diff(TINYCALC, pr.base_sha, pr.head_sha, paths=pr.test_files)) == set(pr.test_files)
    assert cache.diff(TINYCALC, pr.base_sha, pr.base_sha) == ""


def test_binary_diff_applies(cache: RepoCache, pr: WorldPR, tmp_path: Path) -> None:
    cache.fetch(TINYCALC, [pr.head_sha])
    patch = cache.diff(TINYCALC, pr.base_sha, pr.head_sha)
    assert "GIT binary patch" in patch and re.search(r"^index 0{40}\.\.[0-9a-f]{40}$", patch, re.M)
    text_only = cache.diff(TINYCALC, pr.base_sha, pr.head_sha, binary=False)
    assert "Binary files /dev/null and b/docs/rounding.png differ" in text_only
    with cache.worktree(TINYCALC, pr.base_sha) as tree:
        git(tree, "apply", "--check", "-", stdin=patch)
        git(tree, "apply", "-", stdin=patch)
        assert tree_files(tree) == pr.head_tree
    # Where the blob is not at hand (a plain copy of the base tree, as in a task's container), only
    # the --binary patch carries the PNG.
    plain = tmp_path / "plain"
    for path, content in pr.base_tree.items():
        (plain / path).parent.mkdir(parents=True, exist_ok=True)
        (plain / path).write_bytes(content)
    assert git(plain, "apply", "--check", "-", stdin=text_only, check=False).returncode != 0
    git(plain, "apply", "-", stdin=patch)
    assert tree_files(plain) == pr.head_tree


def test_show_file(cache: RepoCache, pr: WorldPR) -> None:
    cache.fetch(TINYCALC, [pr.head_sha])
    assert cache.show_file(TINYCALC, pr.base_sha, "tinycalc/rounding.py") == pr.base_tree["tinycalc/rounding.py"]
    assert cache.show_file(TINYCALC, pr.head_sha, "docs/rounding.png") == pr.head_tree["docs/rounding.png"]
    assert cache.show_file(TINYCALC, pr.base_sha, "docs/rounding.png") is None
    assert cache.show_file(TINYCALC, pr.base_sha, "tinycalc") is None  # a directory is not a file
    assert cache.show_file(TINYCALC, pr.base_sha, "tinycalc/*.py") is None  # paths are literal, not globs


def test_concurrent_ensure_from_threads_clones_once(world: GitWorld, tmp_path: Path) -> None:
    caches = [RepoCache(tmp_path / "cache", world.url_template) for _ in range(4)]
    barrier = threading.Barrier(len(caches))
    paths: list[Path] = []

    def ensure(cache: RepoCache) -> None:
        barrier.wait()
        paths.append(cache.ensure(TINYCALC))

    threads = [threading.Thread(target=ensure, args=(cache,)) for cache in caches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(paths)) == 1 and len(paths) == 4
    assert sum(cache.clones for cache in caches) == 1


def ensure_in_process(root: str, url_template: str, barrier: Any, results: Any) -> None:
    """A spawned process's turn (module level, so spawn can import it): wait, ensure, report clones."""
    cache = RepoCache(Path(root), url_template)
    barrier.wait()
    cache.ensure(TINYCALC)
    results.put(cache.clones)


def test_concurrent_ensure_from_processes_clones_once(world: GitWorld, tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    args = (str(tmp_path / "cache"), world.url_template, barrier, results)
    procs = [ctx.Process(target=ensure_in_process, args=args) for _ in range(2)]
    for proc in procs:
        proc.start()
    counts = [results.get(timeout=60) for _ in procs]
    for proc in procs:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    assert sorted(counts) == [0, 1]
    assert (tmp_path / "cache" / "acme-labs" / "tinycalc.git" / "HEAD").is_file()


def test_errors_are_clear(cache: RepoCache, pr: WorldPR, tmp_path: Path) -> None:
    with pytest.raises(RepoCacheError, match=r"must contain '\{repo\}'"):
        RepoCache(tmp_path, "file:///somewhere/tinycalc.git")
    with pytest.raises(RepoCacheError, match=r"cannot clone nobody/nothing.*does not appear to be a git repository"):
        cache.ensure("nobody/nothing")
    assert not (cache.root / "nobody" / "nothing.git").exists()
    assert not list((cache.root / "nobody").iterdir())  # no half clone left behind
    with pytest.raises(RepoCacheError, match="couldn't find remote ref refs/pull/999/head"):
        cache.fetch(TINYCALC, ["refs/pull/999/head"])
    with pytest.raises(RepoCacheError, match="not our ref"):
        cache.fetch(TINYCALC, ["0" * 40])
    with pytest.raises(RepoCacheError, match=r"not a commit in the cache.*fetch it first"):
        cache.merge_base(TINYCALC, "f" * 40, pr.base_sha)
    with pytest.raises(RepoCacheError, match="not a commit in the cache"), cache.worktree(TINYCALC, "f" * 40):
        pass
    for bad in ("../etc", "tinycalc", "a/b/c", "a/.."):
        with pytest.raises(RepoCacheError, match="invalid repository name"):
            cache.ensure(bad)
    with pytest.raises(RepoCacheError, match="invalid ref"):
        cache.fetch(TINYCALC, ["--upload-pack=touch /tmp/x"])
