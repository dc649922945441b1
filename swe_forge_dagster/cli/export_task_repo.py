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
from swe_forge_dagster.common.buildx import INSTALL_COMMAND, buildx_available
from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.common.terminal import inert
from swe_forge_dagster.settings import Settings, get_settings


def export_task_repo(source: Path, target: Path, git_url: str | None, as_json: bool) -> None:
    """Write the task repository at `target` from the tasks at `source` (a folder or a SWE-bench file), then exit."""
    from swe_forge_dagster.export.task_repo import DATASET

    written, skipped = write_repo(source, target, git_url)
    summary: dict[str, Any] = {
        "input": str(source),
        "output": str(target),
        "format": "swebench-task-repo",
        "tasks": [path.name for path in written],
        "skipped": skipped,
    }
    if as_json:
        out.print_json(json.dumps(summary))
    else:
        base = source.parent if source.is_file() else source
        for label, why in skipped.items():
            say("left out", "yellow", f"{os.path.relpath(label, base) if os.sep in label else label}: {why}")
        if written:
            out.print(inert(f"{len(written)} tasks → {target} (SWE-bench task repository)"))
            out.print(inert(f"check it: swebench dataset check {target}"))
            if not buildx_available():  # what `swebench eval` needs, named before the command that needs it
                out.print(inert(f"swebench eval builds with docker buildx, which this Docker lacks: {INSTALL_COMMAND}"))
            out.print(inert(f"grade it: swebench eval {DATASET} --gold --task-repo {target}"))
        else:
            say("error:", "red", f"nothing exported from {source}: no task could be written (each is named above)")
    raise typer.Exit(0 if not skipped and written else 1)


def write_repo(source: Path, target: Path, git_url: str | None) -> tuple[list[Path], dict[str, str]]:
    """The task repository at `target` from the tasks at `source`: the task folders written, and each task left out
    with why (a bad input is a usage error). `swe-forge agents run` calls it too."""
    from swe_forge_dagster.execution.repo_cache import RepoCache
    from swe_forge_dagster.export.instance_files import is_task_repo
    from swe_forge_dagster.export.task_repo import TaskRepoError, write_task_repo
    from swe_forge_dagster.harness.inputs import InputError
    from swe_forge_dagster.harness.repo_tasks import directory_tasks, instance_tasks

    settings = get_settings()
    home = task_home(source)
    if home is not None and home != settings.home_abs:  # the trees are in the home the tasks were made in
        settings = Settings(SWE_FORGE_HOME=str(home))
    cache = RepoCache(settings.layout.repos, git_url or settings.git_url)
    try:
        by_instance = source.is_file() or is_task_repo(source)
        tasks, unread = instance_tasks(source, cache) if by_instance else directory_tasks(source)
    except InputError as exc:
        raise usage_error(str(exc)) from None
    try:
        report = write_task_repo(tasks, target, cache, settings.ca_bundle)
    except TaskRepoError as exc:
        raise usage_error(str(exc)) from None
    return list(report.written), {**unread, **report.skipped}


def task_home(source: Path) -> Path | None:
    """The home the tasks at `source` were made in: the nearest folder at or above it with a home's repository cache
    (their trees; its `settings.env` names their git URL); None when there is none."""
    for folder in (source if source.is_dir() else source.parent, *source.parents):
        if HomeLayout.of(folder).repos.is_dir():
            return folder
    return None
