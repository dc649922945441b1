"""`swe-forge export --format swebench-task-repo`: tasks as a SWE-bench 5 task repository.

The input is our task directories (each carries the recipe it was proven with) or a SWE-bench file (JSON, JSONL or
Parquet) whose instances `swe-forge validate` proved here (the recipe it settled on is remembered per repository
and commit). The repository is what `swebench dataset check/build` and `swebench eval --task-repo` read
(`export.task_repo`). Exit codes as `export`'s: 0 every task written; 1 some left out (each named with why).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import typer

from swe_forge_dagster.cli.common import out, say, usage_error
from swe_forge_dagster.common.terminal import inert


def export_task_repo(source: Path, target: Path, git_url: str | None, as_json: bool) -> None:
    """Write the task repository at `target` from the tasks at `source` (a folder or a SWE-bench file), then exit."""
    from swe_forge_dagster.execution.repo_cache import RepoCache
    from swe_forge_dagster.export.task_repo import TaskRepoError, write_task_repo
    from swe_forge_dagster.harness.inputs import InputError
    from swe_forge_dagster.harness.repo_tasks import directory_tasks, instance_tasks
    from swe_forge_dagster.settings import get_settings

    settings = get_settings()
    cache = RepoCache(settings.layout.repos, git_url or settings.git_url)
    try:
        tasks, unread = instance_tasks(source, cache) if source.is_file() else directory_tasks(source)
    except InputError as exc:
        raise usage_error(str(exc)) from None
    try:
        report = write_task_repo(tasks, target, cache, settings.ca_bundle)
    except TaskRepoError as exc:
        raise usage_error(str(exc)) from None
    skipped = {**unread, **report.skipped}
    summary: dict[str, Any] = {
        "input": str(source),
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
        base = source.parent if source.is_file() else source
        for label, why in skipped.items():
            say("left out", "yellow", f"{os.path.relpath(label, base) if os.sep in label else label}: {why}")
    raise typer.Exit(0 if not skipped else 1)
