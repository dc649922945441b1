"""A repository of one commit at a given date: what era-true resolution reads (`tests/test_era_env*.py`)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from swe_forge_dagster.execution.repo_cache import RepoCache


def dated_repo(root: Path, files: Mapping[str, str], date: str, repo: str = "o/r") -> tuple[RepoCache, str]:
    """`root/<repo>.git` with one commit of `files`, authored and committed at `date`; a cache that fetched it."""
    work = root / "work" / repo
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True, env=env)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(root / f"{repo}.git")], check=True)
    cache = RepoCache(root / "cache", f"file://{root}/{{repo}}.git")
    cache.fetch(repo, [sha])
    return cache, sha
