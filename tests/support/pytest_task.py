"""A one-fix pytest task written as a task directory: a repository of two commits (base, fix) under `root/remotes`,
the test file added by the task's test patch, and the lists given; what harness tests on a small repository of
their own start from."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from swe_forge_dagster.common.sandbox_spec import SandboxSpec
from swe_forge_dagster.execution.patch import patch_adding_files
from swe_forge_dagster.export.swebench import SWEBenchInstance
from swe_forge_dagster.export.task_dir import TaskRecord, write_task_dir
from swe_forge_dagster.languages.python.runner import PYTEST
from tests.support.common import BASE_IMAGE
from tests.support.git_repos import repo_with_commits

SINGLE = "python -m pytest -p no:cacheprovider -q {}"


def harness_settings(root: Path) -> dict[str, object]:
    """The harness settings for tasks `write_pytest_task` wrote under `root`: its remotes, the local base image, and
    limits a small repository's checks and agents keep well within."""
    return {
        "repo_cache_dir": root / "harness-repos",
        "git_url": f"file://{root}/remotes/{{repo}}.git",
        "sandbox": SandboxSpec(image=BASE_IMAGE),
        "test_timeout": 90,
        "agent_timeout": 120,
    }


def write_pytest_task(
    root: Path,
    repo: str,
    steps: tuple[Mapping[str, str], Mapping[str, str]],
    tests: Mapping[str, str],
    fail_to_pass: list[str],
    pass_to_pass: list[str],
    statement: str,
) -> Path:
    """`repo` with `steps` (base, fix) as its commits, one task whose test patch adds `tests` (path -> text) and
    whose lists are given, as a task directory under `root/tasks` (returned); its remote is
    `file://{root}/remotes/{repo}.git`."""
    cache, (base, fixed) = repo_with_commits(root / "remotes", list(steps), repo=repo)
    instance = SWEBenchInstance(
        instance_id=f"{repo.replace('/', '__')}-1",
        repo=repo,
        base_commit=base,
        patch=cache.diff(repo, base, fixed),
        test_patch=patch_adding_files(dict(tests)),
        problem_statement=statement,
        created_at="2026-01-01T00:00:00Z",
        FAIL_TO_PASS=fail_to_pass,
        PASS_TO_PASS=pass_to_pass,
    )
    record = TaskRecord(
        instance=instance,
        image=BASE_IMAGE,
        install_commands=[],
        test_command=PYTEST,
        test_files=list(tests),
        fail_to_pass_commands=[SINGLE.format(t) for t in fail_to_pass],
        pass_to_pass_commands=[SINGLE.format(t) for t in pass_to_pass],
    )
    write_task_dir(root / "tasks", record)
    return root / "tasks"
