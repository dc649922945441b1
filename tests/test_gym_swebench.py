"""SWE-bench Lite marshmallow-code__marshmallow-1359 in the gym, on its real repository (the shared bundle): the
gold patch's edits made through `str_replace` earn reward 1.0, with the same verdict, check for check, as
`swe-forge harness --agent oracle`; an answer with no change earns 0.0. The environment comes from the
repository's manifests (as in `test_real_swebench`); needs Docker, `swe-forge-base:bullseye`, and PyPI through the
host CA bundle when the environment image is not built yet."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import docker
import pytest

from swe_forge_dagster.export.swebench import SWEBenchInstance, write_jsonl
from swe_forge_dagster.gym.config import GYM_SANDBOX, GymConfig
from swe_forge_dagster.gym.service import Gym, task_from_row
from swe_forge_dagster.harness.models import Status
from tests.support.gym_world import containers_of, patch_edits
from tests.support.marshmallow import BULLSEYE, HOST_CA, LITE_DEV, marshmallow_remote

pytestmark = [pytest.mark.docker, pytest.mark.real_repo]
INSTANCE = "marshmallow-code__marshmallow-1359"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> dict:
    root = tmp_path_factory.mktemp("gym-swebench")
    git_url = marshmallow_remote(root, docker_client)
    (row,) = [r for r in json.loads(LITE_DEV.read_text()) if r["instance_id"] == INSTANCE]
    return {"root": root, "home": root / "home", "git_url": git_url, "row": row}


def harness_oracle(world: dict) -> dict:
    """`swe-forge harness --agent oracle` on the instance, as a user runs it; its JSON summary's one result."""
    task = task_from_row(world["row"], default_image=BULLSEYE)
    write_jsonl([SWEBenchInstance.model_validate(world["row"])], world["root"] / "instance.jsonl")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_")},
        "SWE_FORGE_HOME": str(world["home"]),
        "SWE_FORGE_START_DATE": "2015-01-01",
    }
    if HOST_CA.is_file():
        env["SWE_FORGE_CA_BUNDLE"] = str(HOST_CA)
    argv = [
        sys.executable,
        "-m",
        "swe_forge_dagster.cli",
        "harness",
        "-i",
        str(world["root"] / "instance.jsonl"),
        "--git-url",
        world["git_url"],
        "--agent",
        "oracle",
        "--json",
        "--no-record",
    ]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
    assert done.stdout.strip(), done.stderr[-3000:]
    (result,) = json.loads(done.stdout)["results"]
    assert result["task_id"] == task.task_id
    return result


def changed_lines(diff: str) -> list[str]:
    return [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_the_gold_edits_through_the_tools_earn_1_with_the_harness_oracles_verdict(
    world: dict, docker_client: docker.DockerClient
) -> None:
    oracle = harness_oracle(world)
    assert oracle["status"] == "resolved", oracle["error"]
    task = task_from_row(world["row"], default_image=BULLSEYE)
    config = GymConfig(
        state_dir=world["root"] / "gym",
        git_url=world["git_url"],
        sandbox=GYM_SANDBOX.but(ca_bundle=HOST_CA if HOST_CA.is_file() else None),
        repo_cache_dir=world["home"] / "cache" / "repos",
    )
    with Gym(config, lake_dir=world["home"] / "lake", client=docker_client) as gym:
        fixing, idle = gym.open(task, agent="gold-edits"), gym.open(task, agent="no-change")
        calls = patch_edits(task.gold_patch)
        assert [name for name, _ in calls] == ["str_replace"]
        for name, arguments in calls:
            observation = fixing.call(name, arguments)
            assert observation.text.startswith("Replaced 1 occurrence in /testbed/src/marshmallow/fields.py")
        answer = fixing.answer()
        empty = idle.answer()
    assert (answer.reward, answer.result.status) == (1.0, Status.RESOLVED), answer.result.reason
    assert changed_lines(answer.result.model_patch) == changed_lines(task.gold_patch)  # the gold patch's change
    mine = answer.result.summary()
    for kind in ("fail_to_pass", "pass_to_pass"):  # the same verdict, test id for test id
        assert [(c["test_id"], c["passed"]) for c in mine[kind]] == [(c["test_id"], c["passed"]) for c in oracle[kind]]
    assert len(mine["pass_to_pass"]) == 76 and all(c["passed"] for c in mine["pass_to_pass"])
    assert (empty.reward, empty.result.status) == (0.0, Status.UNRESOLVED)
    assert containers_of(docker_client, config.server_id) == []
