"""Read the harness's inputs into `HarnessTask`s: our task directories, the seed's, SWE-bench files.

Why one loader for three formats: users point `--input` at whatever they have (a folder we
exported, a folder of swe-forge's nested `owner/repo-N/workspace.yaml`, a SWE-bench JSONL or
Parquet file), and a broken entry must not stop the run: it becomes a `TaskLoadError`, reported
as that task's `setup_error` with the reason, while the other tasks run. That holds per record in
every format: a task directory whose files are unreadable or hold wrong types, a JSONL line that
is not JSON, a list item or Parquet row that is not an instance (`read_instance_records`); only an
input that is unusable as a whole (no such path, not an instance file at all) is bad usage.

Where the environment comes from:
- our directories carry their recipe (`environment.json`: image, install commands, test command),
  the same one the task was validated with, so the environment image is the builder's, cached;
- the seed's directories only have `install_config.install`, so they run on `--docker-image` with
  that command (after making sure git is there: the harness needs it, slim images lack it);
- SWE-bench instances have no environment at all: `--env-spec FILE` maps repo -> {image,
  install_commands, test_command} (key `*` for every other repo), else the defaults are used.

Every task is checked before it runs: its id must be safe as a path component (ids come from
files anyone can write, `../../x-1` is rejected), the repo must look like `owner/name` and the
base commit like a full sha. A task without FAIL_TO_PASS checks loads (the seed wrote some), and
is reported as `sanity_fail` once its repository is there: no check could show it was solved.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from swe_forge_dagster.environments.seed import ENSURE_GIT, seed_install_commands, seed_task_image, seed_test_files
from swe_forge_dagster.execution.patch import split_sections
from swe_forge_dagster.export.instance_files import INSTANCE_SUFFIXES, is_task_repo
from swe_forge_dagster.export.seed_format import SeedTask, find_task_dirs, read_seed_workspace
from swe_forge_dagster.export.swebench import BadRecord, InstanceFormatError, SWEBenchInstance, read_instance_records
from swe_forge_dagster.export.task_dir import (
    ENVIRONMENT_FILE,
    WORKSPACE_FILE,
    TaskRecord,
    check_task_id,
    read_task_dir,
)
from swe_forge_dagster.export.task_repo import carried_recipe, carried_tree
from swe_forge_dagster.harness.models import HarnessTask, TaskLoadError
from swe_forge_dagster.languages import registry

DEFAULT_SPEC_KEY = "*"
_REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SHA_RE = re.compile(r"^[0-9a-f]{40}$")

Loaded = HarnessTask | TaskLoadError


class InputError(ValueError):
    """The input as a whole is unusable (missing path, unknown file type, bad env spec): bad usage."""


class EnvSpec(BaseModel):
    """How to build and test one repository's SWE-bench instances (`--env-spec`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    image: str | None = None
    install_commands: tuple[str, ...] = ()
    test_command: str = registry.DEFAULT_RUNNER.template


def load_env_spec(path: str | Path) -> dict[str, EnvSpec]:
    """`{"owner/repo": {...}, "*": {...}}` from a JSON file; InputError when it is not that."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"--env-spec {path}: cannot read JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise InputError(f"--env-spec {path}: expected an object mapping repo -> environment")
    try:
        return {str(repo): EnvSpec.model_validate(spec) for repo, spec in data.items()}
    except ValidationError as exc:
        raise InputError(f"--env-spec {path}: {exc}") from exc


def load_inputs(path: str | Path, *, default_image: str, env_specs: dict[str, EnvSpec] | None = None) -> list[Loaded]:
    """Every task under `path` (a directory at any depth, a workspace.yaml, an instance file, or a SWE-bench 5 task
    repository, whose instances are read as an instance file's).

    Raises InputError only when `path` itself is unusable; per-task problems are TaskLoadErrors.
    """
    root = Path(path)
    if not root.exists():
        raise InputError(f"--input {root}: no such file or directory")
    if root.is_file() and root.name == WORKSPACE_FILE:
        return [load_task_dir(root.parent, default_image=default_image, label=root.parent.name)]
    if root.is_file() or is_task_repo(root):
        if root.is_file() and root.suffix.lower() not in INSTANCE_SUFFIXES:
            raise InputError(f"--input {root}: want a directory, a workspace.yaml or a .json/.jsonl/.parquet file")
        try:
            records = read_instance_records(root)
        except InstanceFormatError as exc:
            raise InputError(str(exc)) from exc
        return [_from_record(record, str(root), default_image, env_specs or {}) for record in records]
    return [
        load_task_dir(directory, default_image=default_image, label=_label(root, directory))
        for directory in find_task_dirs(root)
    ]


def load_task_dir(directory: str | Path, *, default_image: str, label: str | None = None) -> Loaded:
    """One task directory, ours (it has environment.json) or the seed's; never raises."""
    directory = Path(directory)
    label = label or directory.name
    try:
        if (directory / ENVIRONMENT_FILE).is_file():
            return checked(task_from_record(read_task_dir(directory), source=str(directory)))
        return checked(task_from_seed(read_seed_workspace(directory), default_image=default_image))
    except Exception as exc:  # whatever is wrong with one task's files is that task's setup_error
        return TaskLoadError(task_id=label, source=str(directory), reason=f"cannot load task: {_why(exc)}")


def checked(task: HarnessTask) -> HarnessTask:
    """`task` if its id, repo and base commit are safe to use; ValueError naming the problem."""
    check_task_id(task.safe_id)
    if not _REPO_RE.match(task.repo) or any(part in (".", "..") for part in task.repo.split("/")):
        raise ValueError(f"invalid repository {task.repo!r} (expected owner/name)")
    if not _SHA_RE.match(task.base_commit):
        raise ValueError(f"base_commit {task.base_commit!r} is not a full 40-hex commit sha")
    return task


# --- one format each ---------------------------------------------------------------------------


def task_from_record(record: TaskRecord, *, source: str = "") -> HarnessTask:
    """Our task directory: test ids checked through JUnit with the recipe the task was validated with.

    Graded by the full ids (`fail_to_pass_full`; older directories hold full ids in FAIL_TO_PASS)."""
    inst = record.instance
    test_patch = inst.test_patch or ""
    hidden = _unique([*record.test_files, *patch_files(test_patch)])
    if inst.fail_to_pass_full:
        ids = (tuple(inst.fail_to_pass_full), tuple(inst.pass_to_pass_full))
    else:
        ids = (tuple(inst.FAIL_TO_PASS), tuple(inst.PASS_TO_PASS))
    if not ids[0]:  # a task without test ids: fall back to its runnable commands
        ids = (tuple(record.fail_to_pass_commands), tuple(record.pass_to_pass_commands))
        mode = "commands"
    else:
        mode = "tests"
    return HarnessTask(
        task_id=record.task_id,
        repo=inst.repo,
        base_commit=inst.base_commit,
        prompt=inst.problem_statement,
        gold_patch=inst.patch,
        test_patch=test_patch,
        hidden_files=tuple(hidden),
        mode=mode,
        fail_to_pass=ids[0],
        pass_to_pass=ids[1],
        fail_to_pass_commands=tuple(record.fail_to_pass_commands) if mode == "tests" else (),
        pass_to_pass_commands=tuple(record.pass_to_pass_commands) if mode == "tests" else (),
        run_files=tuple(run_files(ids[0] + ids[1], hidden)),
        image=record.image,
        install_commands=tuple(record.install_commands),
        test_command=record.test_command,
        source=source,
    )


def task_from_seed(seed: SeedTask, *, default_image: str) -> HarnessTask:
    """The seed's workspace: shell-command checks, tests in meta.test_files.

    The image and the install follow its `install_config` (`environments.seed`, shared with `validate`).
    """
    extra = seed_test_files(seed.test_files)
    return HarnessTask(
        task_id=seed.id,
        repo=seed.repo,
        base_commit=seed.base_commit,
        prompt=seed.prompt,
        gold_patch=seed.patch,
        test_patch=seed.test_patch or "",
        extra_test_files=extra,
        hidden_files=tuple(_unique([*extra, *patch_files(seed.test_patch or "")])),
        mode="commands",
        fail_to_pass=tuple(seed.fail_to_pass),
        pass_to_pass=tuple(seed.pass_to_pass),
        image=seed_task_image(seed.install_config, seed.language or "", default_image),
        install_commands=seed_install_commands(seed.install_config),
        test_command=seed.install_config.get("test_cmd", ""),
        source=str(seed.source_path.parent),
    )


def task_from_instance(inst: SWEBenchInstance, spec: EnvSpec | None, *, default_image: str) -> HarnessTask:
    """A SWE-bench instance with the environment `spec` (or the defaults).

    Graded as SWE-bench grades it: its ids are in the form its log parser produces (a pytest id cut at
    the first whitespace), so the run's ids are cut the same way before matching (`id_form`); an
    instance of ours that carries its full ids is graded by those.
    """
    given, spec = spec is not None, spec or EnvSpec()
    test_patch = inst.test_patch or ""
    hidden = patch_files(test_patch)
    install = spec.install_commands if spec.image else (ENSURE_GIT, *spec.install_commands)
    full = bool(inst.fail_to_pass_full)
    f2p = tuple(inst.fail_to_pass_full if full else inst.FAIL_TO_PASS)
    p2p = tuple(inst.pass_to_pass_full if full else inst.PASS_TO_PASS)
    return HarnessTask(
        task_id=inst.instance_id,
        repo=inst.repo,
        base_commit=inst.base_commit,
        prompt=inst.problem_statement,
        gold_patch=inst.patch,
        test_patch=test_patch,
        hidden_files=tuple(hidden),
        mode="tests",
        fail_to_pass=f2p,
        pass_to_pass=p2p,
        run_files=tuple(run_files(f2p + p2p, hidden)),
        image=spec.image or default_image,
        install_commands=tuple(install),
        test_command=spec.test_command,
        id_form="full" if full else "swebench",
        environment="given" if given else "manifest",
    )


def carried_spec(record: SWEBenchInstance) -> EnvSpec | None:
    """The recipe a record carries (a task repository we exported: `export.task_repo.carried_recipe`), else None."""
    recipe = carried_recipe(record)
    if recipe is None:
        return None
    return EnvSpec(image=recipe.base_image, install_commands=recipe.install_commands, test_command=recipe.test_command)


def _from_record(
    record: SWEBenchInstance | BadRecord, source: str, default_image: str, specs: dict[str, EnvSpec]
) -> Loaded:
    """One record of an instance file: its task, or its setup_error (a malformed record included)."""
    if isinstance(record, BadRecord):
        return TaskLoadError(task_id=record.label, source=source, reason=f"cannot load task: {record}")
    try:
        spec = specs.get(record.repo) or specs.get(DEFAULT_SPEC_KEY) or carried_spec(record)
        task = task_from_instance(record, spec, default_image=default_image)
        task = task.model_copy(update={"source": source, "carried": carried_tree(record)})
        return checked(task)
    except Exception as exc:  # one record's problem, whatever it is, stays that record's
        return TaskLoadError(
            task_id=record.instance_id, repo=record.repo, source=source, reason=f"cannot load task: {_why(exc)}"
        )


# --- helpers -----------------------------------------------------------------------------------


def patch_files(patch: str) -> list[str]:
    """Every path a diff touches (both sides of a rename)."""
    files: list[str] = []
    for section in split_sections(patch):
        files += [section.path] + ([section.old_path] if section.old_path else [])
    return _unique(files)


def run_files(ids: Sequence[str], fallback: Iterable[str]) -> list[str]:
    """The test files to hand the test command: those its ids name (pytest's), else `fallback`'s test files, as the
    language packs say (`registry.run_files`).

    Running only these (not the whole suite) is what SWE-bench does, and keeps the run short.
    """
    return registry.run_files(ids, fallback)


def _why(exc: Exception) -> str:
    """An exception as a reason: ours (ValueErrors) say what is wrong; anything else also says what it is."""
    return str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(item for item in items if item))


def _label(root: Path, directory: Path) -> str:
    """A task's name before its id is known: its directory relative to the input."""
    relative = directory.relative_to(root).as_posix()
    return directory.name if relative == "." else relative
