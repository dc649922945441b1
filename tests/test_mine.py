"""`swe-forge mine` against the twins: GH Archive mirror, GitHub twin, OpenAI twin, git remotes, real Docker.

The CLI runs as a subprocess (as a user runs it), through the real Dagster jobs into a persistent
instance under its SWE_FORGE_HOME.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import docker
import pytest

from swe_forge_dagster.demo.twins.github_twin import GithubTwin
from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin
from swe_forge_dagster.demo.worlds.task_world import TaskWorld, build_task_world
from swe_forge_dagster.demo.worlds.world_agent import world_agent_responder
from swe_forge_dagster.environments.environment import env_image_tag
from swe_forge_dagster.export.seed_format import find_task_dirs
from swe_forge_dagster.export.task_dir import read_task_dir
from swe_forge_dagster.tasks.recipes import RecipeStore
from tests.support.common import BASE_IMAGE

TOKEN, KEY = "ghp_mine_test_token_0123", "sk-mine-test-key-0123"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TaskWorld, GithubTwin, OpenAITwin]]:
    task_world = build_task_world(tmp_path_factory.mktemp("mine-world"))
    with (
        GithubTwin(task_world.github, token=TOKEN) as github,
        OpenAITwin(world_agent_responder(task_world.git), api_key=KEY) as llm,
    ):
        yield task_world, github, llm


def mine(world: tuple[TaskWorld, GithubTwin, OpenAITwin], home: Path, *args: str) -> subprocess.CompletedProcess:
    task_world, github, llm = world
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SWE_FORGE_", "DAGSTER_"))}
    env.update(
        SWE_FORGE_HOME=str(home),
        SWE_FORGE_START_DATE="2015-01-01",
        GITHUB_TOKEN=TOKEN,
        SWE_FORGE_GHARCHIVE_URL=f"file://{task_world.mirror}",
        SWE_FORGE_GITHUB_API_URL=github.url,
        SWE_FORGE_LLM_BASE_URL=llm.url,
        SWE_FORGE_GIT_URL=task_world.git.url_template,
        SWE_FORGE_DOCKER_IMAGE=BASE_IMAGE,
    )
    env.pop("OPENROUTER_API_KEY", None)
    command = [sys.executable, "-m", "swe_forge_dagster.cli", "mine", "--api-key", KEY, "--json", *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.docker
def test_mine_once_exports_exactly_the_asked_tasks_and_a_rerun_spends_nothing(
    world: tuple[TaskWorld, GithubTwin, OpenAITwin], tmp_path: Path, docker_client: docker.DockerClient
) -> None:
    task_world, github, llm = world
    pr_file, out = tmp_path / "processed.jsonl", tmp_path / "easy-tasks"
    try:
        first = mine(
            world,
            tmp_path / "home",
            "--once",
            "--max-tasks",
            "2",
            "--difficulty",
            "easy",
            "--pr-file",
            str(pr_file),
            "--output",
            str(out),
        )
        assert first.returncode == 0, first.stderr[-3000:]
        summary = json.loads(first.stdout)
        assert summary["exported"] == 2
        # Newest hour first: tinycalc#12 (accepted) and yaml-lite#3 (rejected), then datekit#7; then stop.
        assert [(t["task_id"], t["status"]) for t in summary["tasks"]] == [
            ("acme-labs__tinycalc-12", "accepted"),
            ("globex-oss__yaml-lite-3", "rejected"),
            ("northwind__datekit-7", "accepted"),
        ]
        assert [h["hour"] for h in summary["hours"]] == task_world.hours[:2]
        exported = sorted(read_task_dir(path).task_id for path in find_task_dirs(out))
        assert exported == ["acme-labs__tinycalc-12", "northwind__datekit-7"]
        assert all(read_task_dir(path).difficulty == "easy" for path in find_task_dirs(out))
        # The runs are in the persistent instance under the home, as the UI would show them.
        with dg.DagsterInstance.from_config(str(tmp_path / "home" / "dagster")) as instance:
            assert set(instance.get_dynamic_partitions("tasks")) >= set(exported)
            assert len(instance.get_run_records()) >= 5

        github_before, llm_before = len(github.counted_requests()), llm.count()
        again = mine(
            world,
            tmp_path / "home2",
            "--once",
            "--max-tasks",
            "2",
            "--difficulty",
            "easy",
            "--pr-file",
            str(pr_file),
            "--output",
            str(tmp_path / "again"),
            "--max-hours",
            "2",
        )
        assert again.returncode == 3, again.stderr[-3000:]  # every hour in reach mined, no new task
        assert json.loads(again.stdout)["exported"] == 0, again.stdout
        assert len(github.counted_requests()) == github_before and llm.count() == llm_before
    finally:
        store = RecipeStore(tmp_path / "home" / "cache" / "recipes")
        for repo in ("acme-labs/tinycalc", "northwind/datekit", "globex-oss/yaml-lite"):
            if (recipe := store.get(repo, BASE_IMAGE)) is not None:
                with contextlib.suppress(docker.errors.ImageNotFound):
                    docker_client.images.remove(env_image_tag(repo, recipe), force=True)


def test_mine_refuses_bad_flags(world: tuple[TaskWorld, GithubTwin, OpenAITwin], tmp_path: Path) -> None:
    bad = mine(world, tmp_path / "home", "--once", "--difficulty", "trivial")
    assert bad.returncode == 2 and "unknown difficulty trivial" in bad.stderr
    bad_hour = mine(world, tmp_path / "home", "--once", "--newest", "yesterday")
    assert bad_hour.returncode == 2
