"""Small real git repositories for tests: a bare remote with one commit per step, and a cache that has them."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from swe_forge_dagster.execution.repo_cache import RepoCache


def repo_with_commits(root: Path, steps: Sequence[Mapping[str, str]], repo: str = "o/r") -> tuple[RepoCache, list[str]]:
    """`root/<repo>.git` whose `main` has one commit per step (path -> text, written over the previous
    tree), and a `RepoCache` (remote template `file://root/{repo}.git`) that has fetched every commit."""
    work, shas = root / "work" / repo, []
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    for index, files in enumerate(steps):
        for path, text in files.items():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text(text)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", f"step {index}"], check=True)
        shas.append(
            subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
        )
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(root / f"{repo}.git")], check=True)
    cache = RepoCache(root / "cache", f"file://{root}/{{repo}}.git")
    cache.fetch(repo, shas)
    return cache, shas
