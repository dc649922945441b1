"""A real merged change of a real repository becomes a task end to end through the Dagster task partition.

tox-dev/filelock#498 (squash-merged as 721b37b, from the bundle in `../shared/fixtures/repos/`): a
hatch-vcs project (its version comes from git metadata), Python >= 3.10, test dependencies in a PEP
735 group that its tox.toml installs. Fed in as one hour of `enriched_prs`, classified through
Dagster against the OpenAI twin, added by the task sensor and run as `task_job` by the orchestration
launcher the CLI uses. The environment must come from the repository's manifests (`recipe_source`
= manifest, no environment-agent call), and validation must find exactly the two tests the PR adds
as FAIL_TO_PASS. Needs Docker, the bookworm base image and PyPI (through the host CA bundle).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import docker
import pytest

from swe_forge_dagster.environments.environment import env_image_tag
from swe_forge_dagster.export.swebench import read_instances, validate_instance
from swe_forge_dagster.settings import Settings
from swe_forge_dagster.tasks.recipes import RecipeStore
from tests.support.common import BASE_IMAGE, SHARED_FIXTURES
from tests.support.real_task import RealChange, run_real_change

pytestmark = [pytest.mark.docker, pytest.mark.real_repo]
BUNDLE = SHARED_FIXTURES / "repos" / "tox-dev+filelock.bundle"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
REPO, NUMBER, MERGED = "tox-dev/filelock", 498, "721b37bcbdb4c431441fa8e5d9377cf9f0e059f2"
TASK_ID = "tox-dev__filelock-498"
ADDED = "tests/test_read_write_unit.py::test_non_blocking_with_timeout_no_value_error"
STATEMENT = (
    "Acquiring a read or write lock of a `ReadWriteLock` with `blocking=False` and a `timeout` raises `ValueError` "
    "from the standard library instead of `Timeout` when the lock is held elsewhere: Python does not accept a "
    "timeout for a non-blocking acquire. A non-blocking acquire should ignore the timeout and raise `Timeout`."
)
CHANGE = RealChange(REPO, NUMBER, MERGED, "Python", STATEMENT, head_ref="fix-nonblocking")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> dict[str, Any]:
    if not BUNDLE.is_file():
        pytest.skip(f"real fixture missing ({BUNDLE.name})")
    if not HOST_CA.is_file():
        pytest.skip(f"no host CA bundle at {HOST_CA}: the sandbox cannot reach PyPI to install filelock's tests")
    root = tmp_path_factory.mktemp("real-task")
    env = {"SWE_FORGE_DOCKER_IMAGE": BASE_IMAGE, "SWE_FORGE_CA_BUNDLE": str(HOST_CA)}
    built = run_real_change(root, BUNDLE, CHANGE, env)
    store = RecipeStore(built["settings"].layout.recipes)
    try:
        yield {**built, "store": store}
    finally:
        recipe = store.get(REPO, BASE_IMAGE)
        if recipe is not None:
            with contextlib.suppress(docker.errors.ImageNotFound):
                docker_client.images.remove(env_image_tag(REPO, recipe), force=True)


@pytest.mark.extended
def test_a_real_hatch_vcs_change_becomes_a_task_with_a_manifest_environment(built: dict[str, Any]) -> None:
    (row,) = built["rows"]
    assert built["outcome"] == {TASK_ID: True}, row
    assert row["status"] == "accepted", (row["stage"], row["reason"])
    assert row["recipe_source"] == "manifest" and not built["agent_calls"]  # no LLM for the environment
    settings: Settings = built["settings"]
    (inst,) = read_instances(settings.layout.datasets / "swe_dataset.jsonl")
    assert sorted(inst.FAIL_TO_PASS) == [f"{ADDED}[read]", f"{ADDED}[write]"]
    assert inst.PASS_TO_PASS and all(t.startswith("tests/test_read_write_unit.py::") for t in inst.PASS_TO_PASS)
    assert not validate_instance(inst)
    assert inst.environment_setup_commit == inst.base_commit  # the image was installed from this task's base
    work = json.loads((settings.layout.work / TASK_ID / "environment.json").read_text())
    assert "--group test" in work["install_commands"][-1]
