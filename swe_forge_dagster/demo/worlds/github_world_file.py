"""A `GithubWorld` written to JSON and read back: the demo's world outlives the demo's process.

The demo invents much of its GitHub world (whatever the trimmed 2025 payload leaves NULL, per seed), so the
world a later `swe-forge dev` serves must be the one the demo served, not one generated again: the demo
writes it into its home and the twins are started from that file. JSON rather than pickle: the file is
read by later versions of the code, and a field added with a default still reads an old file.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from swe_forge_dagster.demo.worlds.github_world import (
    ChangedFile,
    Comment,
    GithubWorld,
    Issue,
    PRCommit,
    PullRequest,
    Repo,
    make_patch,
)

FORMAT = 1


def world_to_json(world: GithubWorld) -> dict[str, Any]:
    """Every repository, pull request and issue of `world`, as plain JSON values."""
    return {
        "format": FORMAT,
        "repos": [asdict(repo) for repo in world.repos.values()],
        "pulls": [_pull_json(pull) for pull in world.pulls.values()],
        "issues": [{"repo": repo, **asdict(issue)} for (repo, _), issue in world.issues.items()],
    }


def _pull_json(pull: PullRequest) -> dict[str, Any]:
    """A pull request without the hunks `ChangedFile` makes again from its counts (most of a world's bytes)."""
    data = asdict(pull)
    for row, changed in zip(data["files"], pull.files, strict=True):
        if changed.patch == make_patch(changed.path, changed.additions, changed.deletions, changed.change_type):
            row["patch"] = ""
    return data


def world_from_json(data: dict[str, Any]) -> GithubWorld:
    """The world `world_to_json` wrote (ValueError for a format this code does not read)."""
    if data.get("format") != FORMAT:
        raise ValueError(f"GitHub world file of format {data.get('format')!r}, this code reads format {FORMAT}")
    world = GithubWorld()
    for repo in data["repos"]:
        world.add_repo(Repo(**repo))
    for pull in data["pulls"]:
        files = [ChangedFile(**f) for f in pull.pop("files")]
        commits = [PRCommit(**c) for c in pull.pop("commits")]
        world.add_pull(PullRequest(**pull, files=files, commits=commits))
    for issue in data["issues"]:
        repo = issue.pop("repo")
        comments = [Comment(**c) for c in issue.pop("comments")]
        world.add_issue(repo, Issue(**issue, comments=comments))
    return world


def save_world(world: GithubWorld, path: Path) -> Path:
    """Write `world` to `path` atomically (a reader never sees half a world)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(world_to_json(world), separators=(",", ":")))
    partial.replace(path)
    return path


def load_world(path: Path) -> GithubWorld:
    return world_from_json(json.loads(path.read_text()))
