"""Harness inputs made from the test world's PRs, for the tests, the benchmark and demos.

Building a task the real way (validate by execution, then export) takes a minute of Docker per
PR; the world already knows each PR's FAIL_TO_PASS and PASS_TO_PASS (checked against pytest in
`tests/test_git_world.py`), so these helpers write the same records directly: our task directory
(test ids + recipe) and the seed's nested `owner/repo-N/workspace.yaml` (shell-command checks,
tests in `meta.test_files`), from the PR's real diff in the world's repositories.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from swe_forge_dagster.demo.worlds.git_world import WorldPR
from swe_forge_dagster.environments.environment import EnvRecipe
from swe_forge_dagster.execution.patch import patch_adding_files, split_diff
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.export.swebench import SWEBenchInstance
from swe_forge_dagster.export.task_dir import TaskRecord, write_task_dir, yaml_dump
from swe_forge_dagster.languages.registry import is_test_path, runner_for

VENV_INSTALL = (
    "python -m venv --system-site-packages /opt/venv && . /opt/venv/bin/activate "
    "&& pip install --no-build-isolation --no-deps -e ."
)
WORLD_RECIPE = EnvRecipe(install_commands=(VENV_INSTALL,), test_command=runner_for("pytest").template)
SINGLE_TEST = "python -m pytest -p no:cacheprovider -q {}"


def statement(pr: WorldPR) -> str:
    """The problem statement: the closed issue's words when there is one (no solution in them)."""
    if pr.issue is not None:
        return f"{pr.issue.title}\n\n{pr.issue.body}"
    return f"{pr.title}\n\n{pr.body}"


def _split(cache: RepoCache, pr: WorldPR) -> tuple[str, str, list[str]]:
    """(patch, test_patch, test files) of the PR; a PR without tests gets the world's agent tests."""
    cache.ensure(pr.repo)
    cache.fetch(pr.repo, [pr.base_sha, pr.head_sha])
    split = split_diff(cache.diff(pr.repo, pr.base_sha, pr.head_sha), is_test_path)
    if split.test_patch:
        return split.patch, split.test_patch, split.test_files
    return split.patch, patch_adding_files(dict(pr.agent_tests)), sorted(pr.agent_tests)


def world_task_record(
    cache: RepoCache, pr: WorldPR, recipe: EnvRecipe = WORLD_RECIPE, *, task_id: str | None = None
) -> TaskRecord:
    """Our task record of a world PR (`task_id` lets tests make variants of one task)."""
    patch, test_patch, test_files = _split(cache, pr)
    owner, name = pr.repo.split("/")
    instance = SWEBenchInstance(
        instance_id=task_id or f"{owner}__{name}-{pr.number}",
        repo=pr.repo,
        base_commit=pr.base_sha,
        patch=patch,
        test_patch=test_patch,
        problem_statement=statement(pr),
        hints_text="",
        created_at=pr.created_at.isoformat(),
        environment_setup_commit=pr.base_sha,
        FAIL_TO_PASS=pr.expected_fail_to_pass,
        PASS_TO_PASS=pr.expected_pass_to_pass,
        difficulty="easy",
        difficulty_score=0.2,
        language="Python",
        license="MIT",
    )
    return TaskRecord(
        instance=instance,
        image=recipe.base_image,
        install_commands=list(recipe.install_commands),
        test_command=recipe.test_command,
        test_files=test_files,
        fail_to_pass_commands=[SINGLE_TEST.format(shlex.quote(t)) for t in pr.expected_fail_to_pass],
        pass_to_pass_commands=[SINGLE_TEST.format(shlex.quote(t)) for t in pr.expected_pass_to_pass],
        original_pr_url=f"https://github.com/{pr.repo}/pull/{pr.number}",
    )


def write_world_task(
    out_dir: Path, cache: RepoCache, pr: WorldPR, recipe: EnvRecipe = WORLD_RECIPE, *, task_id: str | None = None
) -> Path:
    """Our task directory of a world PR, under `out_dir`."""
    return write_task_dir(out_dir, world_task_record(cache, pr, recipe, task_id=task_id))


def write_world_seed_workspace(out_dir: Path, cache: RepoCache, pr: WorldPR, install: str = VENV_INSTALL) -> Path:
    """The seed's format of a world PR: `out_dir/owner/repo-N/workspace.yaml`, as swe-forge exports it.

    Checks are shell commands (one for the FAIL_TO_PASS ids, one for the PASS_TO_PASS ids), the
    tests travel as file contents in meta.test_files, and test_patch is empty, like every real one.
    """
    patch, _test_patch, test_files = _split(cache, pr)
    contents = [{"path": path, "content": pr.head_tree[path].decode()} for path in test_files]
    owner, name = pr.repo.split("/")
    data = {
        "id": f"{pr.repo}-{pr.number}",
        "repo": pr.repo,
        "base_commit": pr.base_sha,
        "merge_commit": pr.merge_commit_sha,
        "language": "python",
        "difficulty_score": 1,
        "created_at": pr.created_at.isoformat().replace("+00:00", "Z"),
        "patch": patch,
        "test_patch": "",
        "fail_to_pass": [SINGLE_TEST.format(" ".join(shlex.quote(t) for t in pr.expected_fail_to_pass))],
        "pass_to_pass": [SINGLE_TEST.format(" ".join(shlex.quote(t) for t in pr.expected_pass_to_pass))],
        "install_config": {"install": install, "python": "3.11", "test_cmd": "pytest"},
        "meta": {
            "difficulty": "easy",
            "pr_title": pr.title,
            "source": "git-world",
            "test_generation": "world",
            "test_files": json.dumps(contents),
        },
        "prompt": f"{pr.repo} (#{pr.number}): {statement(pr)}",
        "quality_score": 0.9,
        "quality_passed": True,
        "docker_passed": True,
        "workspace_path": None,
        "status": "ready",
    }
    directory = out_dir / owner / f"{name}-{pr.number}"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "workspace.yaml").write_text(yaml_dump(data), encoding="utf-8")
    return directory
