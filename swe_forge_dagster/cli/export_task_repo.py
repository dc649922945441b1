"""`swe-forge export --format swebench-task-repo`: our task directories as a SWE-bench 5 task repository.

The repository is what `swebench dataset check/build` and `swebench eval --task-repo` read (`export.task_repo`).
Exit codes as `export`'s: 0 every task written; 1 some left out (each named with why).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer

from swe_forge_dagster.cli.common import out, say
from swe_forge_dagster.common.terminal import inert


def export_task_repo(root: Path, target: Path, git_url: str | None, as_json: bool) -> None:
    """Write the task repository at `target` from the task directories under `root`, then exit."""
    from swe_forge_dagster.execution.repo_cache import RepoCache
    from swe_forge_dagster.export.seed_format import find_task_dirs
    from swe_forge_dagster.export.task_dir import TaskDirError, TaskRecord, read_task_dir
    from swe_forge_dagster.export.task_repo import write_task_repo
    from swe_forge_dagster.settings import get_settings

    settings = get_settings()
    records: list[tuple[str, TaskRecord]] = []
    unread: dict[str, str] = {}
    for path in find_task_dirs(root):
        try:
            records.append((str(path), read_task_dir(path)))
        except (TaskDirError, ValueError) as exc:  # a seed workspace carries no proven recipe to rebuild
            unread[str(path)] = f"not one of our task directories (a task repository needs its recipe): {exc}"
    cache = RepoCache(settings.layout.repos, git_url or settings.git_url)
    report = write_task_repo(records, target, cache, settings.ca_bundle)
    skipped = {**unread, **report.skipped}
    summary: dict[str, Any] = {
        "input": str(root),
        "output": str(target),
        "format": "swebench-task-repo",
        "tasks": [path.name for path in report.written],
        "skipped": skipped,
    }
    if as_json:
        out.print_json(json.dumps(summary))
    else:
        out.print(inert(f"{len(report.written)} tasks → {target} (SWE-bench task repository)"))
        out.print(inert(f"check it: swebench dataset check {target}"))
        for path, why in skipped.items():
            say("left out", "yellow", f"{os.path.relpath(path, root)}: {why}")
    raise typer.Exit(0 if not skipped else 1)
