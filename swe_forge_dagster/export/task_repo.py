"""SWE-bench 5 task repositories from our task directories (`swe-forge export --format swebench-task-repo`).

Why: SWE-bench 5 builds its datasets from task repositories (`swebench/task/repo.py`) and `swebench eval
--task-repo` builds every instance's image from its own task directory, so a task that is to run in
SWE-bench's tool chain has to be such a directory: no table of known repositories stands behind it.

Layout written under the output directory:

- `sweb.yaml`: the dataset (`swe-forge/tasks`) and its split (`test`).
- `tasks/<instance_id>/`: `task.yaml` (SWE-bench's required keys: the derived image name, the log parser
  that reads the eval script's output, `eval_type`; then our full test ids and our recipe, for our own tools),
  `tests.json` (FAIL_TO_PASS / PASS_TO_PASS, SWE-bench's ids), `problem_statement.md`, `hints.md` (only when
  there are hints), `gold.patch`, `test.patch`, `eval.sh`, and the `Dockerfile` with its build context:
  `repo.tar` (the base commit's tree, as our sandboxes get it), `install.sh` (our proven recipe) and, when a CA
  bundle is configured, the bundle the sandboxes mount.

Each task directory is written beside the tree and renamed into place, so a crash never leaves half a task
where SWE-bench's loaders would read it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from swe_forge_dagster.environments.environment import pretend_version
from swe_forge_dagster.execution.carried_trees import CarriedTree
from swe_forge_dagster.execution.recipe import EnvRecipe
from swe_forge_dagster.execution.repo_box import fetch_base, write_tree_archive
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.export.eval_script import (
    CA_FILE,
    INSTALL_FILE,
    NotExportable,
    RepoTask,
    dockerfile,
    eval_script,
    graded_lists,
    install_script,
    log_form,
)
from swe_forge_dagster.export.instance_files import TREE_FILE, TREE_KEY
from swe_forge_dagster.export.swebench import SWEBenchInstance
from swe_forge_dagster.export.task_dir import TEMP_DIR_PREFIX, check_task_id
from swe_forge_dagster.export.yaml_io import yaml_dump, yaml_load
from swe_forge_dagster.languages.registry import DEFAULT_RUNNER

DATASET = "swe-forge/tasks"
SPLIT = "test"
EVAL_TYPE = "pass_and_fail"
"""Every FAIL_TO_PASS test must pass and every PASS_TO_PASS test keep passing: our harness's rule."""
UNRELEASED = "0.0"
CONFIG_FILE, TASKS_DIR = "sweb.yaml", "tasks"
ENVIRONMENT_KEY = "swe_forge_environment"
"""task.yaml's record of the recipe the Dockerfile runs, so our harness reading the repository back (`-i DIR`) builds
the environment we proved, not one guessed from the manifests (`harness.inputs.carried_spec`)."""
RELEASE_TAGS_KEY = "release_tags"
"""Under `ENVIRONMENT_KEY`: the base commit's release tags, which the carried tree has no history to give."""


def carried_tree(inst: SWEBenchInstance) -> CarriedTree | None:
    """The base tree an instance read from a task repository carries (its `repo.tar`, with the release tags the
    export recorded), else None: what our tools build from instead of a clone."""
    extra = inst.model_extra or {}
    archive = extra.get(TREE_KEY)
    if not isinstance(archive, str) or not archive:
        return None
    carried = extra.get(ENVIRONMENT_KEY)
    tags = carried.get(RELEASE_TAGS_KEY) if isinstance(carried, dict) else None
    return CarriedTree(archive=archive, tags=tuple(str(tag) for tag in tags or ()))


def carried_recipe(inst: SWEBenchInstance) -> EnvRecipe | None:
    """The recipe an instance read from a task repository we exported carries (`ENVIRONMENT_KEY`), else None."""
    carried = (inst.model_extra or {}).get(ENVIRONMENT_KEY)
    if not isinstance(carried, dict) or not carried.get("image"):
        return None
    commands = tuple(str(command) for command in carried.get("install_commands") or ())
    return EnvRecipe(commands, str(carried.get("test_command") or DEFAULT_RUNNER.template), str(carried["image"]))


def image_name(instance_id: str) -> str:
    """The image SWE-bench derives for an instance (`swebench.task.checks.expected_image`): the name its checker
    requires and the tag `swebench eval --task-repo` builds."""
    key = f"sweb.eval.x86_64.{instance_id}:latest".lower()
    return f"swebench/{key}".replace("__", "_1776_")


class TaskRepoError(ValueError):
    """The output is not a task repository we can write into (the message names the file and the problem)."""


@dataclass
class TaskRepoReport:
    """What an export wrote (task directories) and what it left out, with why."""

    root: Path
    written: list[Path] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)


def task_meta(record: RepoTask, parser: str, tags: Sequence[str] = ()) -> dict[str, Any]:
    """`task.yaml`: SWE-bench's required keys, then the dataset fields that are not files of their own."""
    inst = record.instance
    meta: dict[str, Any] = {
        "instance_id": inst.instance_id,
        "repo": inst.repo,
        "version": inst.version or UNRELEASED,
        "base_commit": inst.base_commit,
        "split": SPLIT,
        "datasets": [DATASET],
        "image": image_name(inst.instance_id),
        "log_parser": parser,
        "eval_type": EVAL_TYPE,
        "environment_setup_commit": inst.environment_setup_commit or inst.base_commit,
        "created_at": inst.created_at or "",
    }
    extras = {"difficulty": inst.difficulty, "language": inst.language, "license": inst.license}
    meta.update({key: value for key, value in extras.items() if value is not None})
    if inst.fail_to_pass_full:  # our full ids, which our harness grades by (tests.json holds SWE-bench's form)
        meta.update(fail_to_pass_full=inst.fail_to_pass_full, pass_to_pass_full=inst.pass_to_pass_full)
    meta[ENVIRONMENT_KEY] = {
        "image": record.image,
        "install_commands": list(record.install_commands),
        "test_command": record.test_command,
        RELEASE_TAGS_KEY: list(tags),
    }
    return meta


def write_config(root: Path) -> None:
    """`sweb.yaml` naming our dataset; one already there keeps the datasets and splits it publishes."""
    path = root / CONFIG_FILE
    try:
        config: Any = (yaml_load(path.read_text(encoding="utf-8")) if path.is_file() else None) or {}
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise TaskRepoError(f"{path} does not read as YAML: {exc}") from None
    if not isinstance(config, dict):
        raise TaskRepoError(f"{path} is not a mapping (SWE-bench's `datasets:` and `splits:`)")
    datasets = list(config.get("datasets") or [])
    splits = list(config.get("splits") or [])
    config["datasets"] = datasets + [DATASET] * (DATASET not in datasets)
    config["splits"] = splits + [SPLIT] * (SPLIT not in splits)
    path.write_text(yaml_dump(config))


def write_task(root: Path, record: RepoTask, cache: RepoCache, ca_bundle: Path | None = None) -> Path:
    """`tasks/<instance_id>/` for one record (replacing an earlier export of it); NotExportable says why not."""
    task_id = check_task_id(record.task_id)
    _runner, parser = log_form(record)
    inst = record.instance
    fetch_base(cache, inst.repo, inst.base_commit, carried_tree(inst))  # a fresh home has no clone yet
    tags = cache.release_tags(inst.repo, inst.base_commit)
    target = root / TASKS_DIR / task_id
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=TEMP_DIR_PREFIX, dir=root) as tmp:
        work = Path(tmp) / task_id
        work.mkdir()
        files = {
            "task.yaml": yaml_dump(task_meta(record, parser, tags)),
            "tests.json": json.dumps(graded_lists(record), indent=2, ensure_ascii=False) + "\n",
            "problem_statement.md": inst.problem_statement,
            "gold.patch": inst.patch,
            "test.patch": inst.test_patch or "",
            "eval.sh": eval_script(record),
            "Dockerfile": dockerfile(record, with_ca=ca_bundle is not None),
            INSTALL_FILE: install_script(record, pretend_version(cache, inst.repo, inst.base_commit), tags),
        }
        if inst.hints_text:
            files["hints.md"] = inst.hints_text
        for name, text in files.items():
            with open(work / name, "w", encoding="utf-8", newline="") as handle:  # patches keep their CRLFs
                handle.write(text)
        write_tree_archive(cache, inst.repo, inst.base_commit, work / TREE_FILE)
        if ca_bundle is not None:
            shutil.copyfile(ca_bundle, work / CA_FILE)
        if target.exists():  # the earlier export moves aside first: no moment without a whole task in place
            target.rename(Path(tmp) / "replaced")
        work.rename(target)
    return target


def write_task_repo(
    records: Iterable[tuple[str, RepoTask]], root: Path, cache: RepoCache, ca_bundle: Path | None = None
) -> TaskRepoReport:
    """Every record as a task of the repository at `root` (labelled by where it came from); one that cannot be
    exported is left out with its reason, and the others are still written."""
    root.mkdir(parents=True, exist_ok=True)
    write_config(root)
    report = TaskRepoReport(root)
    for label, record in records:
        try:
            report.written.append(write_task(root, record, cache, ca_bundle))
        except (NotExportable, ValueError, OSError, RuntimeError, subprocess.SubprocessError) as exc:
            report.skipped[label] = str(exc)
            earlier = root / TASKS_DIR / record.task_id
            if record.task_id and "/" not in record.task_id and earlier.is_dir():  # SWE-bench would still run it
                shutil.rmtree(earlier, ignore_errors=True)
                report.skipped[label] += "; its earlier export was removed"
    return report
