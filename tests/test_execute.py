"""Validation by execution on the test world, in Docker: the lists come from running the tests."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.demo.worlds.git_world import GitWorld, WorldPR, build_git_world
from swe_forge_dagster.environments.environment import EnvRecipe, env_image_tag
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.patch import patch_adding_files, split_diff
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.sandbox import Sandbox
from swe_forge_dagster.execution.test_user import OPEN_IN_IMAGE
from swe_forge_dagster.languages.python.runner import PYTEST
from swe_forge_dagster.languages.registry import is_test_path
from swe_forge_dagster.tasks.prove import TaskBuildError, TaskExecutor

pytestmark = pytest.mark.docker

RECIPE = EnvRecipe(
    install_commands=(
        "python -m venv --system-site-packages /opt/venv && . /opt/venv/bin/activate "
        "&& pip install --no-build-isolation --no-deps -e .",
    ),
    test_command=PYTEST,
)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> GitWorld:
    return build_git_world(tmp_path_factory.mktemp("git-world"))


@pytest.fixture(scope="module")
def executor(
    world: GitWorld, docker_client: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[TaskExecutor]:
    cache = RepoCache(tmp_path_factory.mktemp("repo-cache"), world.url_template)
    images = {env_image_tag(pr.repo, RECIPE) for pr in world.prs}

    def remove_images() -> None:
        for tag in images:
            with contextlib.suppress(docker.errors.ImageNotFound):
                docker_client.images.remove(tag, force=True)

    remove_images()  # start cold, so the first task of a repo really builds its image
    yield TaskExecutor(docker_client, cache)
    remove_images()


def in_files(ids: list[str], files: list[str]) -> list[str]:
    """SWE-bench's scope: the tests of the files the test patch touches."""
    return sorted(i for i in ids if i.split("::")[0] in files)


def test_good_pr_becomes_a_task_with_the_known_lists_and_nothing_runs_on_the_host(
    world: GitWorld, executor: TaskExecutor
) -> None:
    pr: WorldPR = world.pr("acme-labs/tinycalc", 12)
    marker = f"/tmp/swe-forge-marker-{uuid.uuid4().hex}"
    # the PR's own tests, plus one that writes a marker file to /tmp
    executor.cache.ensure(pr.repo)
    executor.cache.fetch(pr.repo, [pr.base_sha, pr.head_sha])
    own = split_diff(executor.cache.diff(pr.repo, pr.base_sha, pr.head_sha), is_test_path).test_patch
    spy = patch_adding_files({"tests/test_marker.py": f"def test_marker():\n    open({marker!r}, 'w').write('x')\n"})
    result = executor.validate_pr(pr.repo, pr.base_sha, pr.head_sha, RECIPE, extra_test_patch=own + spy)
    verdict = result.validation
    assert verdict.accepted, verdict.reason
    assert verdict.fail_to_pass == pr.expected_fail_to_pass
    files = [*pr.test_files, "tests/test_marker.py"]
    expected_p2p = in_files([*pr.expected_pass_to_pass, "tests/test_marker.py::test_marker"], files)
    assert verdict.pass_to_pass == expected_p2p
    assert not Path(marker).exists(), "repository code ran on the host"
    assert result.base_commit == pr.base_sha and not result.image_cached
    assert result.fail_to_pass_commands[0].startswith("python -m pytest") and len(result.after) == 3
    assert "docs/rounding.png" in result.split.binary_files


def test_second_task_of_a_repo_starts_warm_and_a_flaky_test_rejects_it(world: GitWorld, executor: TaskExecutor) -> None:
    pr = world.pr("acme-labs/tinycalc", 15)
    # the flaky test is a coin flip; 10 runs miss it with probability 2/2^10 (3 runs would miss 1 in 4)
    result = executor.validate_pr(pr.repo, pr.base_sha, pr.head_sha, RECIPE, after_runs=10)
    assert result.image_cached
    assert not result.validation.accepted and result.validation.reason.startswith("flaky")
    assert result.validation.flaky == pr.expected_flaky


def test_the_image_leaves_a_test_run_nothing_to_open(world: GitWorld, executor: TaskExecutor) -> None:
    """What the test user may write is opened where the image is made: a container of it that opened a file of the
    image's layers would copy the whole file into its own (a real node_modules: minutes per check)."""
    pr = world.pr("acme-labs/tinycalc", 12)
    listing = OPEN_IN_IMAGE.replace("-exec chmod a+rwX {} +", "-print")
    assert listing != OPEN_IN_IMAGE
    with Sandbox.start(executor.client, sandbox_config(image=env_image_tag(pr.repo, RECIPE)), name_hint="open") as box:
        assert box.run("ls /repo").output.strip(), "the image carries the installed checkout"
        unopened = box.run(listing)
        assert unopened.ok and unopened.output.strip() == "", unopened.output[-2000:]


def test_tests_that_pass_without_the_fix_reject_the_pr(world: GitWorld, executor: TaskExecutor) -> None:
    pr = world.pr("globex-oss/yaml-lite", 3)
    result = executor.validate_pr(pr.repo, pr.base_sha, pr.head_sha, RECIPE)
    assert not result.validation.accepted
    assert result.validation.reason.startswith("no FAIL_TO_PASS")
    assert result.validation.pass_to_pass == in_files(pr.expected_pass_to_pass, pr.test_files)


def test_pr_without_tests_needs_written_tests_and_then_validates(world: GitWorld, executor: TaskExecutor) -> None:
    pr = world.pr("northwind/datekit", 7)
    with pytest.raises(TaskBuildError, match="no tests"):
        executor.validate_pr(pr.repo, pr.base_sha, pr.head_sha, RECIPE)
    written = patch_adding_files(pr.agent_tests)
    result = executor.validate_pr(pr.repo, pr.base_sha, pr.head_sha, RECIPE, extra_test_patch=written)
    assert result.validation.accepted, result.validation.reason
    files = sorted(pr.agent_tests)
    assert result.validation.fail_to_pass == in_files(pr.expected_fail_to_pass, files)
    assert result.validation.pass_to_pass == in_files(pr.expected_pass_to_pass, files)


def test_a_patch_that_does_not_apply_is_rejected_with_the_reason(world: GitWorld, executor: TaskExecutor) -> None:
    pr = world.pr("acme-labs/tinycalc", 12)
    broken = (
        "diff --git a/tests/test_rounding.py b/tests/test_rounding.py\n--- a/tests/test_rounding.py\n"
        "+++ b/tests/test_rounding.py\n@@ -1,1 +1,1 @@\n-this line is not there\n+x\n"
    )
    with pytest.raises(TaskBuildError, match="test_patch does not apply"):
        executor.validate_pr(pr.repo, pr.base_sha, pr.head_sha, RECIPE, extra_test_patch=broken)
