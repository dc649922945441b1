"""From a world PR to an exported task: validated by execution, statement from the issue or the LLM."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin, ToolCall
from swe_forge_dagster.demo.worlds.git_world import GitWorld, WorldPR, build_git_world
from swe_forge_dagster.environments.environment import EnvRecipe, env_image_tag
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.export.seed_format import read_seed_workspace
from swe_forge_dagster.export.swebench import read_instances, validate_instance, write_jsonl, write_parquet
from swe_forge_dagster.export.task_dir import read_task_dir, write_task_dir
from swe_forge_dagster.languages.python.runner import PYTEST
from swe_forge_dagster.llm.cache import AnswerCache
from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.tasks.build import PRContext, problem_statement, task_record
from swe_forge_dagster.tasks.prove import TaskBuildError, TaskExecutor

RECIPE = EnvRecipe(
    install_commands=(
        "python -m venv --system-site-packages /opt/venv && . /opt/venv/bin/activate "
        "&& pip install --no-build-isolation --no-deps -e .",
    ),
    test_command=PYTEST,
)


def context(pr: WorldPR) -> PRContext:
    issues = [{"number": pr.issue.number, "title": pr.issue.title, "body": pr.issue.body}] if pr.issue else []
    return PRContext(
        repo=pr.repo,
        number=pr.number,
        title=pr.title,
        body=pr.body,
        base_sha=pr.base_sha,
        head_sha=pr.head_sha,
        created_at=pr.created_at.isoformat(),
        closing_issues=issues,
        language="Python",
        license="MIT",
        difficulty="easy",
        difficulty_score=0.2,
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> Iterator[tuple]:
    world: GitWorld = build_git_world(tmp_path_factory.mktemp("world"))
    pr = world.pr("acme-labs/tinycalc", 12)
    executor = TaskExecutor(docker_client, RepoCache(tmp_path_factory.mktemp("cache"), world.url_template))
    try:
        yield world, pr, executor.validate_pr(pr.repo, pr.base_sha, pr.head_sha, RECIPE)
    finally:
        with contextlib.suppress(docker.errors.ImageNotFound):
            docker_client.images.remove(env_image_tag(pr.repo, RECIPE), force=True)


@pytest.mark.docker
def test_accepted_pr_exports_a_swebench_task(built: tuple, tmp_path: Path) -> None:
    _, pr, result = built
    statement, source = problem_statement(context(pr), result.split.test_files)
    assert source == "issue" and pr.issue is not None and pr.issue.title in statement
    record = task_record(context(pr), result, RECIPE, statement)
    instance = record.instance
    assert instance.instance_id == "acme-labs__tinycalc-12" and instance.base_commit == pr.base_sha
    assert pr.expected_fail_to_pass == instance.FAIL_TO_PASS
    assert validate_instance(instance) == []
    task_dir = write_task_dir(tmp_path / "tasks", record)
    assert read_task_dir(task_dir) == record
    assert read_seed_workspace(task_dir).repo == pr.repo  # the seed's tools can read it too
    assert (task_dir / "checks.txt").read_text().splitlines()[0] == record.fail_to_pass_commands[0]
    write_jsonl([instance], tmp_path / "dataset.jsonl")
    write_parquet([instance], tmp_path / "dataset.parquet")
    assert read_instances(tmp_path / "dataset.jsonl") == read_instances(tmp_path / "dataset.parquet") == [instance]
    datasets = pytest.importorskip("datasets", reason="`datasets` is a dev dependency")
    rows = datasets.load_dataset("parquet", data_files=str(tmp_path / "dataset.parquet"), split="train")
    assert rows[0]["instance_id"] == "acme-labs__tinycalc-12" and rows[0]["FAIL_TO_PASS"].startswith("[")


@pytest.mark.docker
def test_without_an_issue_the_llm_writes_the_statement(built: tuple, tmp_path: Path) -> None:
    _, pr, result = built
    bare = PRContext(**{**context(pr).__dict__, "closing_issues": ()})
    with pytest.raises(TaskBuildError, match="no LLM"):
        problem_statement(bare, result.split.test_files)
    written = {
        "title": "Rounding of negative halves",
        "statement": "round_half_up(-2.5) returns -2; halves should "
        "round away from zero, so it should return -3, as the docstring says.",
    }
    with OpenAITwin(api_key="k") as twin:
        twin.queue(ToolCall("write_problem_statement", written))
        with LLMClient(twin.url, "k", "m", cache=AnswerCache(tmp_path / "a.sqlite")) as client:
            statement, source = problem_statement(bare, result.split.test_files, client)
    assert source == "llm" and statement.startswith("Rounding of negative halves")
    assert task_record(bare, result, RECIPE, statement).instance.problem_statement == statement
