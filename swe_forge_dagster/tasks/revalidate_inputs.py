"""What `swe-forge validate` re-proves, and which proof each input gets.

An input is our task directory (`revalidate.revalidate_dir`), the seed's swe-forge directory
(`workspace.yaml` with shell-command checks: `revalidate_seed`), or a record of a SWE-bench
JSON/JSONL/Parquet file (`revalidate_instances`; a malformed record is that record's `error`, as
the harness reports it as that task's `setup_error`, and the other records are validated). The
CLI only parses options and prints: reading the inputs, connecting to Docker and dispatching live
here, so any caller (a script, a test) re-proves tasks exactly as `swe-forge validate` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import docker

from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.export.seed_format import SeedFormatError, find_task_dirs, read_seed_workspace
from swe_forge_dagster.export.swebench import BadRecord, InstanceFormatError, SWEBenchInstance, read_instance_records
from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.tasks.prove import TaskExecutor
from swe_forge_dagster.tasks.revalidate import ERROR, Revalidation, revalidate_dir
from swe_forge_dagster.tasks.revalidate_instances import revalidate_instance
from swe_forge_dagster.tasks.revalidate_seed import revalidate_seed

Item = Path | SWEBenchInstance | BadRecord
"""One input: a task directory, an instance, or a record of the file that did not read."""


class UnreadableInput(ValueError):
    """The SWE-bench file as a whole does not read (bad usage, not a task's error)."""


class DockerUnavailable(RuntimeError):
    """No Docker engine answers: nothing can be re-proved."""


@dataclass(frozen=True)
class RevalidationInputs:
    """The input's root (a folder, or the SWE-bench file) and its items as (name, item), in order."""

    root: Path
    jobs: list[tuple[str, Item]]


def directory_inputs(root: Path) -> RevalidationInputs:
    """Every task directory (ours and the seed's) under `root`, at any depth."""
    return RevalidationInputs(root, [(path.name, path) for path in find_task_dirs(root)])


def instance_inputs(path: Path) -> RevalidationInputs:
    """Every record of a SWE-bench file, named by its instance id (a malformed one by its label).

    Raises `UnreadableInput` when the file itself does not read.
    """
    try:
        records = read_instance_records(path)
    except (InstanceFormatError, OSError) as exc:
        raise UnreadableInput(str(exc)) from None
    jobs: list[tuple[str, Item]] = [
        (record.label if isinstance(record, BadRecord) else record.instance_id, record) for record in records
    ]
    return RevalidationInputs(path.resolve(), jobs)


def connect_executor(
    repos: Path, git_url: str, image: str, ca_bundle: Path | None = None, registry: str = ""
) -> TaskExecutor:
    """The executor every proof runs on; `DockerUnavailable` when no engine answers."""
    try:
        client = docker.from_env()
        client.ping()
    except docker.errors.DockerException as exc:
        raise DockerUnavailable(str(exc)) from None
    sandbox = sandbox_config(image=image, ca_bundle=ca_bundle, build=True)
    return TaskExecutor(client, RepoCache(repos, git_url), sandbox, registry=registry)


def is_seed_workspace(path: Path) -> bool:
    """Whether `path` is a task directory in the seed's format (`workspace.yaml`)."""
    try:
        read_seed_workspace(path)
    except SeedFormatError:
        return False
    return True


@dataclass
class Revalidator:
    """Re-proves one input at a time with the proof its kind takes; never raises for one task's problem."""

    executor: TaskExecutor
    root: Path
    default_image: str
    after_runs: int = 3
    llm: LLMClient | None = None  # also score quality afresh (our task directories)

    def revalidate(self, name: str, item: Item) -> Revalidation:
        try:
            if isinstance(item, BadRecord):  # a malformed record: its own error, the others go on
                return Revalidation(item.label, str(self.root), ERROR, f"unreadable instance: {item}")
            if isinstance(item, Path):
                result = revalidate_dir(item, self.executor, self.after_runs, self.llm)
                if result.status == ERROR and is_seed_workspace(item):  # the seed's format: its commands
                    result = revalidate_seed(item, self.executor, self.default_image, self.after_runs)
                return result
            return revalidate_instance(item, self.executor, str(self.root), self.after_runs)
        except Exception as exc:  # one task's unforeseen failure is that task's error, not the scan's end
            where = str(item) if isinstance(item, Path) else str(self.root)
            return Revalidation(name, where, ERROR, f"{type(exc).__name__}: {exc}")
