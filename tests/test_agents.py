"""The sandbox agents against the OpenAI twin scripted with the tool calls a good model would make.

The two agents run in real Docker sandboxes on the test world's repositories, and their answers go
through the real replay and validation; the loop's rules against a fake sandbox are in `test_agents_loop.py`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin, ToolCall
from swe_forge_dagster.demo.worlds.git_world import GitWorld, build_git_world
from swe_forge_dagster.environments.environment import EnvRecipe, env_image_tag
from swe_forge_dagster.execution.patch import patch_adding_files, split_diff
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.languages.python.agent import JUNIT_OPTIONS
from swe_forge_dagster.languages.python.runner import PYTEST
from swe_forge_dagster.languages.registry import is_test_path
from swe_forge_dagster.tasks.agent_tools import AgentFailed
from swe_forge_dagster.tasks.agents import find_environment
from swe_forge_dagster.tasks.prove import TaskExecutor
from swe_forge_dagster.tasks.test_agent import write_tests
from tests.support.agent_twin import KEY, lines, make_client, tool_names
from tests.support.common import BASE_IMAGE

VENV = (
    "python -m venv --system-site-packages /opt/venv && . /opt/venv/bin/activate "
    "&& pip install --no-build-isolation --no-deps -e ."
)
RECIPE = EnvRecipe(install_commands=(VENV,), test_command=PYTEST, base_image=BASE_IMAGE)


@pytest.fixture
def twin() -> Iterator[OpenAITwin]:
    with OpenAITwin(api_key=KEY) as server:
        yield server


# -- the agents, in Docker ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> GitWorld:
    return build_git_world(tmp_path_factory.mktemp("git-world"))


@pytest.fixture(scope="module")
def executor(
    world: GitWorld, docker_client: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory
) -> TaskExecutor:
    return TaskExecutor(docker_client, RepoCache(tmp_path_factory.mktemp("repo-cache"), world.url_template))


def base_tree(executor: TaskExecutor, repo: str, sha: str, into: Path) -> Path:
    executor.cache.ensure(repo)
    executor.cache.fetch(repo, [sha])
    return executor.export_tree(repo, sha, into)


@pytest.mark.docker
def test_environment_agent_learns_from_a_failed_replay_and_a_rerun_is_free(
    world: GitWorld, executor: TaskExecutor, docker_client: docker.DockerClient, twin: OpenAITwin, tmp_path: Path
) -> None:
    pr = world.pr("acme-labs/tinycalc", 12)
    tree = base_tree(executor, pr.repo, pr.base_sha, tmp_path / "tree")
    bad = {"install_commands": ["pip install -r requirements.txt"], "test_command": "python -m pytest -q"}
    good = {"install_commands": [VENV], "test_command": "python -m pytest -q"}
    twin.queue(
        ToolCall("shell", {"command": "ls"}),
        ToolCall("shell", {"command": "cat pyproject.toml"}),
        ToolCall("submit_environment", bad),
        ToolCall("submit_environment", good),
    )
    transcript = tmp_path / "task" / "environment.jsonl"
    with make_client(twin, tmp_path) as client:
        recipe = find_environment(
            client, docker_client, tree, base_image=BASE_IMAGE, transcript_path=transcript, item=pr.repo
        )
    assert recipe == EnvRecipe((VENV,), f"python -m pytest -q {JUNIT_OPTIONS} {{tests}}", BASE_IMAGE)
    assert twin.pending() == 0
    bodies = [r.json for r in twin.requests]
    assert all(b["tool_choice"] == "auto" and tool_names(b) == ["shell", "submit_environment"] for b in bodies)
    assert "untrusted data" in bodies[0]["messages"][0]["content"]
    assert (
        "<repository_files>" in bodies[0]["messages"][1]["content"]
        and "tests/test_arith.py" in (bodies[0]["messages"][1]["content"])
    )
    listing, config = bodies[1]["messages"][-1]["content"], bodies[2]["messages"][-1]["content"]
    assert listing.startswith("exit code: 0\n") and "pyproject.toml" in listing and "tinycalc" in listing
    assert 'name = "tinycalc"' in config
    rejection = bodies[3]["messages"][-1]
    assert rejection["role"] == "tool" and rejection["tool_call_id"] == bodies[3]["messages"][-2]["tool_calls"][0]["id"]
    assert rejection["content"].startswith("Rejected: replay failed: install command 1 of 1 exited")
    assert "requirements.txt" in rejection["content"] or "externally-managed" in rejection["content"]
    turns = lines(transcript)
    assert [t["outcome"] for t in turns] == ["continue", "continue", "rejected", "accepted"]
    assert all(t["llm_seconds"] >= 0 and not t["cached"] for t in turns) and turns[0]["results"][0]["exit_code"] == 0

    # the same run again: every turn comes from the answer cache, and the recipe is the same
    twin.reset()
    with make_client(twin, tmp_path) as client:
        again = find_environment(client, docker_client, tree, base_image=BASE_IMAGE, transcript_path=transcript)
        assert client.stats.calls == 0 and client.stats.cache_hits == 4
    assert again == recipe and twin.count() == 0
    assert [t["cached"] for t in lines(transcript)] == [True] * 4

    # the recipe is what validation runs with: the PR becomes a task with its known lists
    try:
        result = executor.validate_pr(pr.repo, pr.base_sha, pr.head_sha, recipe, after_runs=1)
    finally:
        with contextlib.suppress(docker.errors.ImageNotFound):
            docker_client.images.remove(env_image_tag(pr.repo, recipe), force=True)
    assert result.validation.accepted, result.validation.reason
    assert result.validation.fail_to_pass == pr.expected_fail_to_pass


@pytest.mark.docker
def test_environment_agent_that_never_submits_fails_after_max_turns(
    world: GitWorld, executor: TaskExecutor, docker_client: docker.DockerClient, twin: OpenAITwin, tmp_path: Path
) -> None:
    pr = world.pr("acme-labs/tinycalc", 12)
    tree = base_tree(executor, pr.repo, pr.base_sha, tmp_path / "tree")
    twin.queue(ToolCall("shell", {"command": "ls tests"}), ToolCall("shell", {"command": "cat README.md"}))
    transcript = tmp_path / "environment.jsonl"
    with make_client(twin, tmp_path) as client, pytest.raises(AgentFailed, match="after 2 turns"):
        find_environment(client, docker_client, tree, base_image=BASE_IMAGE, max_turns=2, transcript_path=transcript)
    assert twin.count() == 2 and len(lines(transcript)) == 2
    assert "test_rounding.py" in lines(transcript)[0]["results"][0]["content"]


@pytest.fixture(scope="module")
def datekit_image(world: GitWorld, executor: TaskExecutor, docker_client: docker.DockerClient) -> Iterator[str]:
    pr = world.pr("northwind/datekit", 7)
    executor.cache.ensure(pr.repo)
    executor.cache.fetch(pr.repo, [pr.base_sha, pr.head_sha])
    image, cached = executor.environment_image(pr.repo, pr.base_sha, RECIPE)
    yield image
    if not cached:
        with contextlib.suppress(docker.errors.ImageNotFound):
            docker_client.images.remove(image, force=True)


@pytest.mark.docker
def test_test_agent_writes_tests_that_validate_the_pr(
    world: GitWorld,
    executor: TaskExecutor,
    docker_client: docker.DockerClient,
    twin: OpenAITwin,
    tmp_path: Path,
    datekit_image: str,
) -> None:
    pr = world.pr("northwind/datekit", 7)
    patch = split_diff(executor.cache.diff(pr.repo, pr.base_sha, pr.head_sha), is_test_path).patch
    tree = executor.export_tree(pr.repo, pr.head_sha, tmp_path / "fixed")  # base + patch: the PR adds no tests
    ((path, content),) = pr.agent_tests.items()
    outside = {"files": [{"path": "datekit/week_checks.py", "content": content}], "fail_to_pass": []}
    twin.queue(
        ToolCall("shell", {"command": "cat datekit/parse.py && ls tests"}),
        ToolCall("submit_tests", outside),
        ToolCall(
            "submit_tests",
            {
                "files": [{"path": path, "content": content}],
                "fail_to_pass": [f"{path}::test_week_date"],
                "pass_to_pass": [],
            },
        ),
    )
    transcript = tmp_path / "tests.jsonl"
    with make_client(twin, tmp_path) as client:
        files = write_tests(
            client,
            docker_client,
            tree,
            pr_title=pr.title,
            pr_body=pr.body,
            patch=patch,
            recipe=RECIPE,
            image=datekit_image,
            transcript_path=transcript,
            item="datekit#7",
        )
    assert files == pr.agent_tests
    bodies = [r.json for r in twin.requests]
    assert all(tool_names(b) == ["shell", "submit_tests"] for b in bodies)
    prompt = bodies[0]["messages"][1]["content"]
    assert "<pr_title>\nParse ISO week dates\n</pr_title>" in prompt and "<patch>" in prompt and "_WEEK" in prompt
    assert "fromisocalendar" in bodies[1]["messages"][-1]["content"]  # the fix is applied in the sandbox
    assert "not a test file path" in bodies[2]["messages"][-1]["content"]
    assert [t["outcome"] for t in lines(transcript)] == ["continue", "rejected", "accepted"]

    result = executor.validate_pr(pr.repo, pr.base_sha, pr.head_sha, RECIPE, extra_test_patch=patch_adding_files(files))
    assert result.validation.accepted, result.validation.reason
    in_files = sorted(t for t in pr.expected_fail_to_pass if t.split("::")[0] in files)
    assert result.validation.fail_to_pass == in_files


@pytest.mark.docker
def test_tests_that_pass_without_the_fix_go_back_to_the_agent(
    world: GitWorld,
    executor: TaskExecutor,
    docker_client: docker.DockerClient,
    twin: OpenAITwin,
    tmp_path: Path,
    datekit_image: str,
) -> None:
    pr = world.pr("northwind/datekit", 7)
    patch = split_diff(executor.cache.diff(pr.repo, pr.base_sha, pr.head_sha), is_test_path).patch
    tree = executor.export_tree(pr.repo, pr.head_sha, tmp_path / "fixed")
    useless = "from datekit import parse_date\n\n\ndef test_iso():\n    assert parse_date('2024-01-02').day == 2\n"
    failing = "def test_wrong():\n    assert 1 == 2\n"
    twin.queue(
        ToolCall("submit_tests", {"files": [{"path": "tests/test_useless.py", "content": useless}]}),
        ToolCall("submit_tests", {"files": [{"path": "tests/test_wrong.py", "content": failing}]}),
    )
    with make_client(twin, tmp_path) as client, pytest.raises(AgentFailed, match="after 2 turns"):
        write_tests(
            client,
            docker_client,
            tree,
            pr_title=pr.title,
            pr_body=pr.body,
            patch=patch,
            recipe=RECIPE,
            image=datekit_image,
            max_turns=2,
            transcript_path=tmp_path / "t.jsonl",
        )
    rejections = [line["results"][0]["content"] for line in lines(tmp_path / "t.jsonl")]
    assert "passes with the change reverted" in rejections[0]
    assert "tests/test_wrong.py::test_wrong (failed)" in rejections[1]
