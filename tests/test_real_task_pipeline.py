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
import datetime as dt
import json
import subprocess
from pathlib import Path
from typing import Any

import dagster as dg
import docker
import pyarrow as pa
import pytest

from swe_forge_dagster.candidates.datasets import ENRICHED_PRS, ENRICHED_PRS_SCHEMA, partition_file
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin
from swe_forge_dagster.demo.twins.openai_twin_script import ToolCall, forced_tool_name, tool_schemas, triage_responder
from swe_forge_dagster.execution.environment import env_image_tag
from swe_forge_dagster.export.swebench import read_instances, validate_instance
from swe_forge_dagster.lake.catalog import query
from swe_forge_dagster.lake.writer import write_partition
from swe_forge_dagster.orchestration.launcher import run_partitions
from swe_forge_dagster.settings import Settings
from swe_forge_dagster.tasks.recipes import RecipeStore
from tests.support.common import BASE_IMAGE, SHARED_FIXTURES

pytestmark = pytest.mark.docker
BUNDLE = SHARED_FIXTURES / "repos" / "tox-dev+filelock.bundle"
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
REPO, NUMBER, MERGED = "tox-dev/filelock", 498, "721b37bcbdb4c431441fa8e5d9377cf9f0e059f2"
TASK_ID = "tox-dev__filelock-498"
HOUR = "2026-02-23-13:00"
LLM_KEY_ENV, LLM_KEY = "SWE_FORGE_TEST_REAL_TASK_KEY", "sk-test-real-task-0123456789"
ADDED = "tests/test_read_write_unit.py::test_non_blocking_with_timeout_no_value_error"
STATEMENT = (
    "Acquiring a read or write lock of a `ReadWriteLock` with `blocking=False` and a `timeout` raises `ValueError` "
    "from the standard library instead of `Timeout` when the lock is held elsewhere: Python does not accept a "
    "timeout for a non-blocking acquire. A non-blocking acquire should ignore the timeout and raise `Timeout`."
)


def git(remote: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(remote), *args], capture_output=True, text=True, check=True).stdout


def enriched_row(remote: Path) -> dict[str, Any]:
    """The PR as an accepted `enriched_prs` row, from the real commit (GitHub is not reachable here)."""
    base = git(remote, "rev-parse", f"{MERGED}^").strip()
    title, _, body = git(remote, "show", "-s", "--format=%B", MERGED).partition("\n")
    when = dt.datetime.fromisoformat(git(remote, "show", "-s", "--format=%cI", MERGED).strip()).astimezone(dt.UTC)
    files = [line for line in git(remote, "diff", "--name-only", base, MERGED).splitlines() if line]
    row: dict[str, Any] = dict.fromkeys(ENRICHED_PRS_SCHEMA.names)
    row.update(
        repo_name=REPO, number=NUMBER, status="accepted", reason=None, reasons=[], stage="filter", merged=True,
        merged_at=when, merge_commit_sha=MERGED, base_ref="main", base_sha=base, head_ref="fix-nonblocking",
        head_sha=MERGED, title=title.replace(f" (#{NUMBER})", ""), body=body.strip(), author_login="bysiber",
        author_is_bot=False, pr_created_at=when - dt.timedelta(days=1), additions=23, deletions=4,
        changed_files=len(files), file_paths=files, files_complete=True, closing_issues=[], labels=[], stars=900,
        language="Python", is_fork=False, is_archived=False, license="MIT", owner_type="Organization",
        source="fixture", from_store=False,
    )  # fmt: skip
    return {key: value for key, value in row.items() if key in ENRICHED_PRS_SCHEMA.names}


def responder(request: dict[str, Any]) -> Any:
    """The LLM: triage as easy, a statement that names no file, a passing quality judgement; an environment
    agent call is answered with an error so the test sees it was never needed."""
    tools = tool_schemas(request)
    if "submit_environment" in tools or "submit_tests" in tools:
        return ToolCall("shell", {"command": "echo this test expects no agent call; exit 1"})
    name = forced_tool_name(request)
    if name == "score_task":
        return ToolCall("score_task", {
            "difficulty": "easy", "difficulty_score": 0.2, "difficulty_reasoning": "One branch in one method.",
            "statement_clear": True, "tests_check_behaviour": True, "solvable_from_statement": True,
            "quality_score": 0.8, "quality_reasoning": "The statement names the observable error and the fix.",
        })  # fmt: skip
    if name == "write_problem_statement":
        return ToolCall(name, {"title": "Non-blocking acquire with a timeout fails", "statement": STATEMENT})
    return triage_responder(request)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> dict[str, Any]:
    if not BUNDLE.is_file():
        pytest.skip(f"real fixture missing ({BUNDLE.name})")
    if not HOST_CA.is_file():
        pytest.skip(f"no host CA bundle at {HOST_CA}: the sandbox cannot reach PyPI to install filelock's tests")
    root = tmp_path_factory.mktemp("real-task")
    remote = root / "remotes" / "tox-dev" / "filelock.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(remote)], check=True, timeout=300)
    settings = Settings(SWE_FORGE_HOME=str(root / "home"), SWE_FORGE_GIT_URL=f"file://{root}/remotes/{{repo}}.git",
                        SWE_FORGE_DOCKER_IMAGE=BASE_IMAGE, SWE_FORGE_CA_BUNDLE=str(HOST_CA))  # fmt: skip
    table = pa.Table.from_pylist([enriched_row(remote)], schema=ENRICHED_PRS_SCHEMA)
    write_partition(table, partition_file(settings.lake_dir, ENRICHED_PRS, HOUR).parent, ENRICHED_PRS_SCHEMA)
    with (
        OpenAITwin(responder, api_key=LLM_KEY) as twin,
        pytest.MonkeyPatch.context() as patch,
        dg.instance_for_test() as instance,
    ):
        patch.setenv(LLM_KEY_ENV, LLM_KEY)
        settings = settings.model_copy(update={"llm_base_url": twin.url})
        defs = build_definitions(settings, llm_key_envs=[LLM_KEY_ENV])
        triage = dg.materialize([defs.resolve_assets_def("classified_prs")], partition_key=HOUR, instance=instance)
        assert triage.success
        with dg.build_sensor_context(instance=instance, resources=defs.resources) as context:
            result = defs.resolve_sensor_def("task_sensor")(context)
        assert isinstance(result, dg.SensorResult)
        assert [request.partition_key for request in result.run_requests or []] == [TASK_ID]
        outcome = run_partitions(defs, instance, "task_job", [TASK_ID])
        dataset = dg.materialize([defs.resolve_assets_def("swe_dataset")], instance=instance)
        assert dataset.success
        agent_calls = [r for r in twin.requests if "submit_environment" in tool_schemas(r.json or {})]
        rows = query(settings.lake_dir, "SELECT * FROM tasks").to_pylist()
    store = RecipeStore(settings.layout.recipes)
    try:
        yield {"settings": settings, "outcome": outcome, "agent_calls": agent_calls, "rows": rows, "store": store}
    finally:
        recipe = store.get(REPO, BASE_IMAGE)
        if recipe is not None:
            with contextlib.suppress(docker.errors.ImageNotFound):
                docker_client.images.remove(env_image_tag(REPO, recipe), force=True)


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
