"""The tasks a SWE-bench 5 task repository is written from (`export.task_repo`), each as our harness runs it.

Why here: a task in a task repository must run the files our checks run (`inputs.task_from_record` /
`task_from_instance` decide them) in the environment we proved. From our task directories that is the recipe each
carries; from a SWE-bench file it is the recipe `swe-forge validate` settled on for the instance's repository and
commit (`execution.manifest.remembered`). One code path for the CLI (`swe-forge export --format
swebench-task-repo`) and the `swe_dataset` asset.
"""

from __future__ import annotations

from pathlib import Path

from swe_forge_dagster.execution.manifest import remembered
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.export.eval_script import RepoTask
from swe_forge_dagster.export.instance_files import InstanceFormatError
from swe_forge_dagster.export.seed_format import find_task_dirs
from swe_forge_dagster.export.swebench import read_instances
from swe_forge_dagster.export.task_dir import TaskDirError, read_task_dir
from swe_forge_dagster.export.task_repo import carried_recipe
from swe_forge_dagster.harness.inputs import EnvSpec, InputError, task_from_instance, task_from_record
from swe_forge_dagster.languages.registry import runner_of

Labelled = list[tuple[str, RepoTask]]


def directory_tasks(root: Path) -> tuple[Labelled, dict[str, str]]:
    """Our task directories under `root` (labelled by path); the others, with why they cannot go in."""
    tasks: Labelled = []
    unread: dict[str, str] = {}
    for path in find_task_dirs(root) if root.is_dir() else []:
        try:
            record = read_task_dir(path)
        except (TaskDirError, ValueError) as exc:  # a seed workspace carries no proven recipe to rebuild
            unread[str(path)] = f"not one of our task directories (a task repository needs its recipe): {exc}"
            continue
        task = RepoTask(
            record.instance,
            record.image,
            tuple(record.install_commands),
            record.test_command,
            record.runner,
            task_from_record(record).run_files,
        )
        tasks.append((str(path), task))
    return tasks, unread


def instance_tasks(path: Path, cache: RepoCache) -> tuple[Labelled, dict[str, str]]:
    """The SWE-bench instances of `path` (a file, or a task repository) labelled by id, with the environment each
    carries (a task repository we exported) or `validate` proved for it; the others, with why not. InputError when
    the input does not read."""
    try:
        instances = read_instances(path)
    except (InstanceFormatError, OSError, ValueError) as exc:
        raise InputError(f"--input {path}: {exc}") from None
    tasks: Labelled = []
    unproven: dict[str, str] = {}
    for inst in instances:
        recipe = carried_recipe(inst) or remembered(cache, inst.repo, inst.base_commit)  # a task repository's own
        if recipe is None:
            unproven[inst.instance_id] = f"no environment proven here for it: run `swe-forge validate -i {path}` first"
            continue
        image, install, command = recipe.base_image, recipe.install_commands, recipe.test_command
        spec = EnvSpec(image=image, install_commands=install, test_command=command)
        run_files = task_from_instance(inst, spec, default_image=image).run_files
        tasks.append((inst.instance_id, RepoTask(inst, image, install, command, runner_of(command).name, run_files)))
    return tasks, unproven
