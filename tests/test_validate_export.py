"""`swe-forge validate` and `swe-forge export` on task directories at any depth (CLI as a subprocess)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.demo.worlds.git_world import GitWorld, build_git_world
from swe_forge_dagster.demo.worlds.harness_task import write_world_seed_workspace
from swe_forge_dagster.demo.worlds.world_agent import VENV_INSTALL
from swe_forge_dagster.environments.environment import EnvRecipe, env_image_tag
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.export.swebench import read_instances
from swe_forge_dagster.export.task_dir import TaskRecord, read_task_dir, write_task_dir
from swe_forge_dagster.languages.python.runner import PYTEST
from swe_forge_dagster.tasks.build import task_record
from swe_forge_dagster.tasks.prove import TaskExecutor
from tests.support.common import BASE_IMAGE
from tests.support.records import world_context

RECIPE = EnvRecipe(install_commands=(VENV_INSTALL,), test_command=PYTEST, base_image=BASE_IMAGE)


@pytest.fixture(scope="module")
def proven(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> Iterator[tuple]:
    world: GitWorld = build_git_world(tmp_path_factory.mktemp("world"))
    pr = world.pr("acme-labs/tinycalc", 12)
    executor = TaskExecutor(docker_client, RepoCache(tmp_path_factory.mktemp("cache"), world.url_template))
    result = executor.validate_pr(pr.repo, pr.base_sha, pr.head_sha, RECIPE)
    context = world_context(pr, "Python")
    try:
        yield world, task_record(context, result, RECIPE, "Negative halves round the wrong way.")
    finally:
        with contextlib.suppress(docker.errors.ImageNotFound):
            docker_client.images.remove(env_image_tag(pr.repo, RECIPE), force=True)


def cli(world: GitWorld, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWE_FORGE_", "DAGSTER_"))}
    env.update(SWE_FORGE_HOME=str(home), SWE_FORGE_GIT_URL=world.url_template, SWE_FORGE_DOCKER_IMAGE=BASE_IMAGE)
    return subprocess.run(
        [sys.executable, "-m", "swe_forge_dagster.cli", *args], env=env, capture_output=True, text=True, timeout=900
    )


def seed_workspace(shared_fixtures: Path) -> Path:
    found = sorted((shared_fixtures / "swe-forge" / "workspaces").rglob("workspace.yaml"))
    if not found:
        pytest.skip("no swe-forge workspace in the shared fixtures")
    return found[0].parent


@pytest.mark.docker
def test_validate_reproves_tasks_at_any_depth_and_flags_a_tampered_one(
    proven: tuple[GitWorld, TaskRecord], tmp_path: Path, shared_fixtures: Path
) -> None:
    world, record = proven
    tasks = tmp_path / "tasks"
    write_task_dir(tasks / "nested" / "deeper", record)
    tampered = record.model_copy(deep=True)
    tampered.instance = tampered.instance.model_copy(
        update={
            "instance_id": "acme-labs__tinycalc-1200",
            "FAIL_TO_PASS": record.instance.FAIL_TO_PASS[:1],
            "fail_to_pass_full": record.instance.fail_to_pass_full[:1],
        }
    )
    write_task_dir(tasks, tampered)
    shutil.copytree(seed_workspace(shared_fixtures), tasks / "seed" / "some-task")  # its repository is not here
    world_seed = write_world_seed_workspace(
        tasks / "seed-format", RepoCache(tmp_path / "c", world.url_template), world.pr("acme-labs/tinycalc", 12)
    )
    run = cli(world, tmp_path / "home", "validate", "--input", str(tasks), "--json")
    assert run.returncode == 1, run.stderr[-2000:]  # not every task is still valid
    summary = json.loads(run.stdout)
    by_id = {r["task_id"]: r for r in summary["results"]}
    assert summary["total"] == 4
    good = by_id["acme-labs__tinycalc-12"]
    assert good["status"] == "valid" and good["fail_to_pass"] == record.instance.FAIL_TO_PASS
    assert by_id["acme-labs__tinycalc-1200"]["status"] == "changed"
    # the seed's format: its shell-command checks re-proved by exit code, in the harness's environment for it
    seed = by_id["acme-labs/tinycalc-12"]
    assert seed["status"] == "valid" and seed["path"] == str(world_seed), seed["reason"]
    (foreign,) = [r for r in summary["results"] if r["status"] == "error"]
    assert "could not run the proof" in foreign["reason"]  # a real seed task whose repository is not reachable


def test_export_flattens_our_and_the_seeds_directories_and_writes_the_dataset(
    tmp_path: Path, shared_fixtures: Path
) -> None:
    from tests.support.records import make_instance as _instance  # a hand-made record: export needs no Docker
    from tests.support.records import make_task as _task

    def sample_record() -> TaskRecord:
        return _task(_instance())

    tasks = tmp_path / "tasks"
    write_task_dir(tasks / "a" / "b", sample_record())
    shutil.copytree(seed_workspace(shared_fixtures), tasks / "owner" / "repo-1")
    (tasks / "broken").mkdir()
    (tasks / "broken" / "workspace.yaml").write_text("id: [unclosed\n")
    out = tmp_path / "exported"
    world = GitWorld(root=tmp_path, url_template="file:///nowhere/{repo}.git", prs=[])
    run = cli(world, tmp_path / "home", "export", "--input", str(tasks), "--output", str(out), "--json")
    assert run.returncode == 1, run.stderr  # the broken one is left out, and said so
    summary = json.loads(run.stdout)
    assert summary["directories"] == 2 and summary["instances"] == 1
    assert list(summary["skipped"]) == [str(tasks / "broken")]
    assert read_task_dir(out / sample_record().task_id).task_id == sample_record().task_id
    assert [i.instance_id for i in read_instances(out / "swe_dataset.jsonl")] == [sample_record().task_id]
    inside = cli(world, tmp_path / "home", "export", "--input", str(tasks), "--output", str(tasks / "x"))
    assert inside.returncode == 2


def test_validate_dispatch_reads_each_kind_of_input_without_docker(tmp_path: Path) -> None:
    """`tasks.revalidate_inputs`: a file that does not read is bad usage (exit 2, before Docker is asked),
    a malformed record and an unreadable directory are their own errors, named as the CLI prints them."""
    from swe_forge_dagster.export.swebench import BadRecord
    from swe_forge_dagster.tasks.revalidate import ERROR
    from swe_forge_dagster.tasks.revalidate_inputs import Revalidator, UnreadableInput, instance_inputs
    from tests.support.records import make_instance

    with pytest.raises(UnreadableInput):
        instance_inputs(tmp_path / "missing.jsonl")
    world = GitWorld(root=tmp_path, url_template="file:///nowhere/{repo}.git", prs=[])
    (tmp_path / "bad.json").write_text("{not json")
    run = cli(world, tmp_path / "home", "validate", "--input", str(tmp_path / "bad.json"))
    assert run.returncode == 2 and "--input" in run.stderr, run.stderr[-2000:]

    good = make_instance()
    rows = tmp_path / "instances.jsonl"
    rows.write_text(good.model_dump_json() + "\n" + json.dumps({"instance_id": "o__r-9"}) + "\n")
    inputs = instance_inputs(rows)
    assert inputs.root == rows.resolve()
    assert [name for name, _ in inputs.jobs] == [good.instance_id, "o__r-9"]
    bad = inputs.jobs[1][1]
    assert isinstance(bad, BadRecord)
    revalidator = Revalidator(executor=None, root=inputs.root, default_image=BASE_IMAGE)  # type: ignore[arg-type]
    result = revalidator.revalidate("o__r-9", bad)
    assert (result.task_id, result.status, result.path) == ("o__r-9", ERROR, str(rows.resolve()))
    assert result.reason and result.reason.startswith("unreadable instance:")
    (tmp_path / "empty-task").mkdir()
    unreadable = revalidator.revalidate("empty-task", tmp_path / "empty-task")
    assert unreadable.status == ERROR and unreadable.reason and "unreadable task directory" in unreadable.reason
