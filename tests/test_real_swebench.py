"""Real SWE-bench Lite instances on their real repository: marshmallow-1359 and -1343.

The repository is the git bundle in `../shared/fixtures/repos/`; the instances are SWE-bench Lite
dev's. No environment is given: `swe-forge validate` finds it from the repository's manifests (a
Python 3.9 base image for a project that declares py35–py37, its `tests` extra; no LLM) and must
re-derive both instances' lists id for id; the harness then resolves both with the oracle and
neither with the empty agent; and SWE-bench's own log parser, run over our validation log,
reads exactly the ids we derive. Needs Docker, the `swe-forge-base:bullseye` image and PyPI
(through the host CA bundle).
"""

from __future__ import annotations

import json
from pathlib import Path

import docker
import pyarrow.parquet as pq
import pytest

from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.runners import swebench_ids
from swe_forge_dagster.export.swebench import SWEBenchInstance, read_instances, write_jsonl
from swe_forge_dagster.languages.registry import runner_for
from swe_forge_dagster.tasks.prove import TaskExecutor
from swe_forge_dagster.tasks.revalidate_instances import prove_with_manifests
from tests.support.common import EXAMPLES, cli_json, once, swebench_cli, swebench_outcomes
from tests.support.compiled_hacks import hack_batch
from tests.support.hacks import PYTEST_HEAD_HACKS
from tests.support.marshmallow import BULLSEYE, HOST_CA, LITE_DEV, marshmallow_remote
from tests.support.records import NO_FIX_PATCH

pytestmark = [pytest.mark.docker, pytest.mark.real_repo]
IDS = ("marshmallow-code__marshmallow-1359", "marshmallow-code__marshmallow-1343")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> dict:
    root = tmp_path_factory.mktemp("real-swebench")
    git_url = marshmallow_remote(root, docker_client)
    instances = [inst for inst in read_instances(LITE_DEV) if inst.instance_id in IDS]
    assert len(instances) == 2
    write_jsonl(instances, root / "instances.jsonl")
    return {"root": root, "git_url": git_url, "instances": instances}


def cli(world: dict, *args: str) -> dict:
    return cli_json(world["root"] / "home", *args, SWE_FORGE_START_DATE="2015-01-01")


def validated(world: dict) -> dict:
    """`swe-forge validate` of both rows, once per module: it proves the environments the harness builds after it."""
    instances = str(world["root"] / "instances.jsonl")
    return once(world, "validate", lambda: cli(world, "validate", "-i", instances, "--git-url", world["git_url"]))


def test_validate_finds_the_environments_and_rederives_both_instances_id_for_id(world: dict) -> None:
    summary = validated(world)
    by_id = {row["instance_id"]: row for row in summary["results"]}
    for inst in world["instances"]:
        row = by_id[inst.instance_id]
        assert row["status"] == "valid", (inst.instance_id, row["reason"], row["recipes_tried"])
        assert sorted(row["fail_to_pass"]) == sorted(inst.FAIL_TO_PASS)
        assert sorted(row["pass_to_pass"]) == sorted(inst.PASS_TO_PASS)
        assert len(row["recipes_tried"]) == 1 and BULLSEYE in row["recipes_tried"][0]  # the first guess, no LLM
    assert any("[custom-Custom" in test_id for row in by_id.values() for test_id in row["pass_to_pass"])


def test_the_harness_resolves_both_with_the_oracle_and_neither_with_the_empty_agent(world: dict) -> None:
    common = ("harness", "-i", str(world["root"] / "instances.jsonl"), "--git-url", world["git_url"])
    oracle = cli(world, *common, "--agent", "oracle")
    assert (oracle["total"], oracle["resolved"]) == (2, 2), [(r["task_id"], r["error"]) for r in oracle["results"]]
    empty = cli(world, *common, "--agent-dir", str(EXAMPLES / "emptyagent"), "--agent-cmd", "python -m emptyagent")
    assert (empty["total"], empty["unresolved"]) == (2, 2)


@pytest.mark.extended
def test_forgers_that_spare_planted_tests_by_git_history_file_times_or_lie_by_equality_do_not_resolve(
    world: dict, tmp_path: Path
) -> None:
    """A second red team's five agents on the real marshmallow-1359, each of which won before the sealed checkout
    (`repo_box.seal_checkout`) and the changed-literal twins (`languages.python.twins`): all five are tampered results
    now."""
    validated(world)
    (row,) = [json.loads(inst.model_dump_json()) for inst in world["instances"] if inst.instance_id == IDS[0]]
    instances, agent_args = hack_batch(tmp_path, row, PYTEST_HEAD_HACKS)
    summary = cli(world, "harness", "-i", str(instances), *agent_args, "--git-url", world["git_url"])
    results = {r["task_id"].removeprefix(IDS[0] + "-"): r for r in summary["results"]}
    assert set(results) == set(PYTEST_HEAD_HACKS)
    for name, result in results.items():
        assert result["status"] == "unresolved" and "tampered test results" in result["error"], (name, result)


def test_swebenchs_own_parser_reads_our_ids_from_our_validation_log(world: dict, docker_client: object) -> None:
    parsers = pytest.importorskip("swebench.harness.log_parsers.python", reason="`swebench` not installed")
    inst: SWEBenchInstance = next(i for i in world["instances"] if i.instance_id == IDS[0])
    cache = RepoCache(world["root"] / "api-repos", world["git_url"])
    sandbox = sandbox_config(build=True, image=BULLSEYE, ca_bundle=HOST_CA if HOST_CA.is_file() else None)
    executor = TaskExecutor(docker_client, cache, sandbox)  # type: ignore[arg-type]
    result, problem, _ = prove_with_manifests(inst, executor)
    assert result is not None, problem
    runner = runner_for("pytest")
    ours = swebench_ids(runner, result.validation.fail_to_pass + result.validation.pass_to_pass)
    after = parsers.parse_log_pytest(result.after[0].output, None)
    assert sorted(test_id for test_id, status in after.items() if status == "PASSED") == sorted(ours)
    before = parsers.parse_log_pytest(result.before.output, None)
    fail_to_pass = swebench_ids(runner, result.validation.fail_to_pass)
    assert fail_to_pass == inst.FAIL_TO_PASS and all(before.get(t) != "PASSED" for t in fail_to_pass)


def test_swebench_builds_and_resolves_both_from_the_task_repository_we_export(world: dict) -> None:
    """The instances as a SWE-bench 5 task repository, with the environment `validate` proved here: SWE-bench's
    checker finds no problem, and `swebench eval --gold --task-repo` builds both images from our Dockerfiles and
    resolves both, graded by its own `parse_log_pytest`."""
    instances, root = str(world["root"] / "instances.jsonl"), world["root"]
    cli(world, "validate", "-i", instances, "--git-url", world["git_url"])  # remembers the recipe each settled on
    repo = root / "task-repo"
    export = cli(world, "export", "-i", instances, "-o", str(repo), "--format", "swebench-task-repo")
    assert sorted(export["tasks"]) == sorted(IDS) and export["skipped"] == {}, export
    assert "looks well formed" in swebench_cli(root, "dataset", "check", str(repo)).stdout
    swebench_cli(root, "eval", "swe-forge/tasks", "--gold", "--task-repo", str(repo), "--run-id", "gold", "-j", "2")
    report = json.loads((root / "gold.gold.json").read_text())
    assert sorted(report["resolved_ids"]) == sorted(IDS), report
    ours = cli(world, "harness", "-i", str(repo), "--agent", "oracle", "--git-url", world["git_url"])  # the repository
    for row in ours["results"]:
        assert row["status"] == "resolved", (row["task_id"], row["error"])
        mine = {check["test_id"]: check["passed"] for check in row["fail_to_pass"] + row["pass_to_pass"]}
        theirs = swebench_outcomes(root, "gold", "gold", row["task_id"])
        assert mine == theirs, row["task_id"]


STALE_PATCH = """diff --git a/setup.py b/setup.py
--- a/setup.py
+++ b/setup.py
@@ -1,3 +1,3 @@
-this line is not in setup.py
+nor is this one
 at all
"""


def test_swebench_predictions_are_judged_and_reported_in_swebenchs_form(world: dict, tmp_path: Path) -> None:
    """A predictions file as SWE-bench users have it: a correct, a wrong, an empty and a stale patch, and records
    that cannot be used (a missing key, an unknown instance, a line that is not UTF-8). Each usable one gets its
    verdict, each bad one a setup_error naming its line, and SWE-bench's report sorts them into its keys; the
    model's name is the agent's in `eval_results`."""
    first, second = world["instances"]
    copies = [first.model_copy(update={"instance_id": f"{first.instance_id}-{s}"}) for s in ("empty", "stale")]
    instances = tmp_path / "instances.jsonl"
    write_jsonl([first, second, *copies], instances)
    model = "org/model-7b"

    def pred(instance_id: str, patch: str | None) -> bytes:
        return json.dumps({"instance_id": instance_id, "model_name_or_path": model, "model_patch": patch}).encode()

    predictions = tmp_path / "preds.jsonl"
    predictions.write_bytes(
        b"\n".join(
            [
                pred(first.instance_id, first.patch),
                pred(second.instance_id, NO_FIX_PATCH),
                pred(copies[0].instance_id, ""),
                pred(copies[1].instance_id, STALE_PATCH),
                pred("nobody__nothing-1", NO_FIX_PATCH),
                b'{"instance_id": "x", "model_name_or_path": "org/model-7b"}',
                b'{"instance_id": "caf\xe9"}',
            ]
        )
        + b"\n"
    )
    output = tmp_path / "out" / "summary.json"
    common = ("harness", "-i", str(instances), "--git-url", world["git_url"], "-o", str(output))
    summary = cli(world, *common, "--predictions", str(predictions))
    status = {r["task_id"]: (r["status"], r["error"] or "") for r in summary["results"]}
    assert status[first.instance_id][0] == "resolved", status
    assert status[second.instance_id][0] == "unresolved"
    assert status[copies[0].instance_id][0] == "unresolved" and "changed nothing" in status[copies[0].instance_id][1]
    assert status[copies[1].instance_id][0] not in ("resolved", "unresolved")  # no verdict: the patch does not apply
    assert "not among the --input tasks" in status["nobody__nothing-1"][1]
    assert "(preds.jsonl:6): missing model_patch" in status["x"][1]
    assert "preds.jsonl:7): not UTF-8" in status["preds.jsonl:7"][1]
    report = json.loads(Path(summary["swebench_report"]).read_text())
    assert Path(summary["swebench_report"]).parent == output.parent
    assert report["resolved_ids"] == [first.instance_id] and report["unresolved_ids"] == [second.instance_id]
    assert report["empty_patch_ids"] == [copies[0].instance_id] and report["error_ids"] == [copies[1].instance_id]
    assert report["incomplete_ids"] == [] and report["total_instances"] == 4 and report["schema_version"] == 2
    rows = [pq.read_table(path).to_pylist()[0] for path in (world["root"] / "home").rglob("eval_results/*/*/*.parquet")]
    assert model in {row["agent"] for row in rows if row["task_id"] == first.instance_id}
