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
from typing import TYPE_CHECKING, Any

import typer

from swe_forge_dagster.cli.common import out, say, usage_error
from swe_forge_dagster.common.terminal import inert

if TYPE_CHECKING:
    from swe_forge_dagster.execution.repo_cache import RepoCache
    from swe_forge_dagster.export.eval_script import RepoTask


def directory_tasks(root: Path) -> tuple[list[tuple[str, RepoTask]], dict[str, str]]:
    """Our task directories under `root`, as the harness would run them; the others with why not."""
    from swe_forge_dagster.export.eval_script import RepoTask
    from swe_forge_dagster.export.seed_format import find_task_dirs
    from swe_forge_dagster.export.task_dir import TaskDirError, read_task_dir
    from swe_forge_dagster.harness.inputs import task_from_record

    tasks: list[tuple[str, RepoTask]] = []
    unread: dict[str, str] = {}
    for path in find_task_dirs(root):
        try:
            record = read_task_dir(path)
        except (TaskDirError, ValueError) as exc:  # a seed workspace carries no proven recipe to rebuild
            unread[str(path)] = f"not one of our task directories (a task repository needs its recipe): {exc}"
            continue
        run_files = task_from_record(record).run_files
        task = RepoTask(
            record.instance,
            record.image,
            tuple(record.install_commands),
            record.test_command,
            record.runner,
            run_files,
        )
        tasks.append((str(path), task))
    return tasks, unread


def instance_tasks(path: Path, cache: RepoCache) -> tuple[list[tuple[str, RepoTask]], dict[str, str]]:
    """The SWE-bench instances of `path` with the environment `validate` proved for each; the others with why not."""
    from swe_forge_dagster.execution.languages.registry import runner_of
    from swe_forge_dagster.execution.manifest import remembered
    from swe_forge_dagster.export.eval_script import RepoTask
    from swe_forge_dagster.export.instance_files import InstanceFormatError
    from swe_forge_dagster.export.swebench import read_instances
    from swe_forge_dagster.harness.inputs import EnvSpec, task_from_instance

    try:
        instances = read_instances(path)
    except (InstanceFormatError, OSError, ValueError) as exc:
        raise usage_error(f"--input {path}: {exc}") from None
    tasks: list[tuple[str, RepoTask]] = []
    unproven: dict[str, str] = {}
    for inst in instances:
        recipe = remembered(cache, inst.repo, inst.base_commit)
        if recipe is None:
            unproven[inst.instance_id] = f"no environment proven here for it: run `swe-forge validate -i {path}` first"
            continue
        spec = EnvSpec(
            image=recipe.base_image, install_commands=recipe.install_commands, test_command=recipe.test_command
        )
        run_files = task_from_instance(inst, spec, default_image=recipe.base_image).run_files
        runner = runner_of(recipe.test_command).name
        task = RepoTask(inst, recipe.base_image, recipe.install_commands, recipe.test_command, runner, run_files)
        tasks.append((inst.instance_id, task))
    return tasks, unproven


def export_task_repo(source: Path, target: Path, git_url: str | None, as_json: bool) -> None:
    """Write the task repository at `target` from the tasks at `source` (a folder or a SWE-bench file), then exit."""
    from swe_forge_dagster.execution.repo_cache import RepoCache
    from swe_forge_dagster.export.task_repo import write_task_repo
    from swe_forge_dagster.settings import get_settings

    settings = get_settings()
    cache = RepoCache(settings.layout.repos, git_url or settings.git_url)
    tasks, unread = instance_tasks(source, cache) if source.is_file() else directory_tasks(source)
    report = write_task_repo(tasks, target, cache, settings.ca_bundle)
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
