"""The history an install reads its version from carries the release tag under upstream's name (issue 36).

versioneer reads only tags that start with the project's `tag_prefix`: xarray 0.13 (`tag_prefix = v`) built in a
history tagged `0.13.0` alone was versioned `0+untagged.1.g…`, and every later row that reused the environment saw
that version (its tests' `LooseVersion` comparisons then raised). Three prefixes, each with versioneer's and
setuptools-scm's own `git describe`, over a real repository cache and the real script in a real shell."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from swe_forge_dagster.environments.environment import install_git_script
from swe_forge_dagster.execution.repo_cache import RepoCache

VERSIONEER = ["describe", "--tags", "--dirty", "--always", "--long", "--match"]  # versioneer 0.18's, + its prefix
SETUPTOOLS_SCM = ["describe", "--dirty", "--tags", "--long", "--match", "*[0-9]*"]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


@pytest.mark.parametrize(
    ("upstream_tag", "prefix", "version"),
    [("v0.13.0", "v", "0.13.0"), ("release-2.1", "release-", "2.1"), ("1.4.0", "", "1.4.0")],
)
def test_the_install_history_is_tagged_as_upstream_names_the_release_and_as_its_version(
    tmp_path: Path, upstream_tag: str, prefix: str, version: str
) -> None:
    upstream = tmp_path / "remotes" / "o" / "p.git"
    work = tmp_path / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    for n in (1, 2):
        (work / "f.txt").write_text(f"{n}\n")
        git(work, "add", "f.txt")
        git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", f"c{n}")
        if n == 1:
            git(work, "tag", upstream_tag)
    git(tmp_path, "clone", "-q", "--bare", str(work), str(upstream))
    cache = RepoCache(tmp_path / "cache", f"file://{tmp_path}/remotes/{{repo}}.git")
    cache.ensure("o/p")
    head = git(work, "rev-parse", "HEAD")
    cache.fetch("o/p", [head])

    tags = cache.release_tags("o/p", head)
    assert tags == tuple(dict.fromkeys((upstream_tag, version)))
    assert cache.release_version("o/p", head) == version

    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "setup.py").write_text("print('x')\n")
    script = install_git_script(tags).replace("cd /repo", f"cd {tree}")
    subprocess.run(["bash", "-c", script], check=True, timeout=60)
    described = git(tree, *VERSIONEER, f"{prefix}*")
    assert described.startswith(f"{upstream_tag}-0-g"), described  # versioneer: the prefix, then the version
    assert described.removeprefix(prefix).split("-0-g")[0] == version
    scm = git(tree, *SETUPTOOLS_SCM).split("-0-g")[0]
    assert scm in tags  # setuptools-scm strips any prefix it meets: either name gives the version
    assert git(tree, "status", "--porcelain") == ""  # a clean tree: no `.dirty` suffix either


def test_no_release_tag_gives_no_tag_and_a_history_all_the_same(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a").write_text("a\n")
    subprocess.run(["bash", "-c", install_git_script(()).replace("cd /repo", f"cd {tree}")], check=True)
    assert git(tree, "tag") == "" and git(tree, "log", "--format=%s") == "base"
