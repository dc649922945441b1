"""Issue 5 end to end through Dagster: classified PRs → task sensor → task partitions → tasks, in Docker.

The git world's PRs are fed in as one hour of `enriched_prs`; `classified_prs` runs through
Dagster against the OpenAI twin; the task sensor adds the partitions; each task's job runs every
stage (the agents answered by `world_agent_responder`, their commands really run in Docker);
`swe_dataset` exports the accepted tasks. The good PRs must become tasks with exactly the known
FAIL_TO_PASS / PASS_TO_PASS, the bad one must be rejected with the right reason.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import docker
import pyarrow as pa
import pytest

from swe_forge_dagster.assets.partitions import eval_key
from swe_forge_dagster.candidates.datasets import ENRICHED_PRS, ENRICHED_PRS_SCHEMA, partition_file
from swe_forge_dagster.common.dagster_names import AGENT_PARTITIONS, EVAL_JOB, TASK_JOB
from swe_forge_dagster.definitions import build_definitions
from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin
from swe_forge_dagster.demo.worlds.git_world import GitWorld, WorldPR, build_git_world, enriched_pr_rows
from swe_forge_dagster.demo.worlds.world_agent import world_agent_responder
from swe_forge_dagster.environments.environment import env_image_tag
from swe_forge_dagster.export.swebench import SWEBENCH_COLUMNS, read_instances, validate_instance
from swe_forge_dagster.export.task_dir import read_task_dir
from swe_forge_dagster.harness.store import agent_key
from swe_forge_dagster.lake.writer import write_partition
from swe_forge_dagster.settings import Settings
from swe_forge_dagster.tasks.recipes import RecipeStore
from swe_forge_dagster.tasks.stage_declaration import STAGES
from swe_forge_dagster.wiring.catalog import query
from tests.support.common import BASE_IMAGE

LLM_KEY_ENV, LLM_KEY = "SWE_FORGE_TEST_TASKS_KEY", "sk-test-tasks-0123456789"
HOUR = "2024-03-01-09:00"
GOOD = ("acme-labs__tinycalc-12", "northwind__datekit-7")
STAGE_ASSETS = [stage.asset for stage in STAGES]
BAD = "globex-oss__yaml-lite-3"
# tinycalc#15 (flaky) is left out here: 3 after-runs miss its coin-flip test 1 time in 4, so it
# is proven with 10 runs in tests/test_execute.py rather than made a flaky test of its own.
PRS = {"acme-labs/tinycalc": 12, "northwind/datekit": 7, "globex-oss/yaml-lite": 3}


@dataclass
class Pipeline:
    world: GitWorld
    settings: Settings
    defs: dg.Definitions
    instance: dg.DagsterInstance
    twin: OpenAITwin
    requested: list[str]

    def run_task(self, task_id: str) -> dg.ExecuteInProcessResult:
        job = self.defs.resolve_job_def(TASK_JOB)
        return job.execute_in_process(instance=self.instance, partition_key=task_id, raise_on_error=False)

    def rows(self) -> dict[str, dict]:
        table = query(self.settings.lake_dir, "SELECT * FROM tasks ORDER BY task_id")
        return {row["task_id"]: row for row in table.to_pylist()}


def in_files(ids: list[str], files: list[str]) -> list[str]:
    return sorted(i for i in ids if i.split("::")[0] in files)


def expected_lists(pr: WorldPR) -> tuple[list[str], list[str]]:
    """The known-correct lists in SWE-bench's scope: the tests of the files the test patch touches (the PR's
    test files, or for a PR without tests the agent's)."""
    files = pr.test_files or sorted(pr.agent_tests)
    return in_files(pr.expected_fail_to_pass, files), in_files(pr.expected_pass_to_pass, files)


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory, docker_client: docker.DockerClient) -> Iterator[Pipeline]:
    root = tmp_path_factory.mktemp("tasks-e2e")
    world = build_git_world(root / "world")
    home = root / "home"
    settings = Settings(
        SWE_FORGE_HOME=str(home),
        SWE_FORGE_GIT_URL=world.url_template,
        SWE_FORGE_DOCKER_IMAGE=BASE_IMAGE,
        SWE_FORGE_DIFFICULTY="easy",
        SWE_FORGE_TASK_REPO=str(root / "task-repo"),
    )
    rows = [row for row in enriched_pr_rows(world) if PRS.get(row["repo_name"]) == row["number"]]
    table = pa.Table.from_pylist(rows, schema=ENRICHED_PRS_SCHEMA)
    write_partition(table, partition_file(settings.lake_dir, ENRICHED_PRS, HOUR).parent, ENRICHED_PRS_SCHEMA)
    with (
        OpenAITwin(world_agent_responder(world), api_key=LLM_KEY) as twin,
        pytest.MonkeyPatch.context() as patch,
        dg.instance_for_test() as instance,
    ):
        patch.setenv(LLM_KEY_ENV, LLM_KEY)
        settings = settings.model_copy(update={"llm_base_url": twin.url})
        defs = build_definitions(settings, llm_key_envs=[LLM_KEY_ENV])
        triage = dg.materialize([defs.resolve_assets_def("classified_prs")], partition_key=HOUR, instance=instance)
        assert triage.success
        sensor = defs.resolve_sensor_def("task_sensor")
        with dg.build_sensor_context(instance=instance, resources=defs.resources) as context:
            result = sensor(context)
        assert isinstance(result, dg.SensorResult)
        requested = [request.partition_key for request in result.run_requests or []]
        (add,) = result.dynamic_partitions_requests or []
        instance.add_dynamic_partitions("tasks", list(add.partition_keys or []))
        pipeline = Pipeline(world, settings, defs, instance, twin, requested)
        try:
            yield pipeline
        finally:
            store = RecipeStore(settings.layout.recipes)
            for repo in PRS:
                recipe = store.get(repo, BASE_IMAGE)
                if recipe is not None:
                    with contextlib.suppress(docker.errors.ImageNotFound):
                        docker_client.images.remove(env_image_tag(repo, recipe), force=True)


@pytest.mark.docker
def test_sensor_adds_one_partition_per_easy_classified_pr(pipeline: Pipeline) -> None:
    assert sorted(pipeline.requested) == sorted([*GOOD, BAD])
    with dg.build_sensor_context(instance=pipeline.instance, resources=pipeline.defs.resources) as context:
        again = pipeline.defs.resolve_sensor_def("task_sensor")(context)
    assert isinstance(again, dg.SensorResult) and not again.run_requests  # existing partitions are not re-added


@pytest.mark.docker
def test_good_prs_become_tasks_with_the_known_lists_and_the_bad_one_is_rejected(pipeline: Pipeline) -> None:
    for task_id in pipeline.requested:
        result = pipeline.run_task(task_id)
        assert result.success, task_id
        made = {
            m.asset_key.to_user_string()
            for m in result.get_asset_materialization_events()
            for m in [m.event_specific_data.materialization]
        }
        assert "swe_task" in made  # every stage that answers is green, accepted or rejected
        # the answer at a glance in the UI: each stage's `accepted` check, failed (WARN) from the rejecting stage on
        checks = {(c.asset_key.to_user_string(), c.check_name): c for c in result.get_asset_check_evaluations()}
        outcomes = [checks[(stage, "accepted")] for stage in STAGE_ASSETS]
        if task_id in GOOD:
            assert all(c.passed for c in outcomes) and checks[("swe_task", "swe_task_has_fail_to_pass")].passed
        else:
            assert not outcomes[-1].passed and outcomes[-1].severity == dg.AssetCheckSeverity.WARN
            assert "rejected" in (outcomes[-1].description or "")
    rows = pipeline.rows()
    for task_id in GOOD:
        row = rows[task_id]
        pr = pipeline.world.pr(row["repo"], row["number"])
        fail_to_pass, pass_to_pass = expected_lists(pr)
        assert (row["status"], row["reason"]) == ("accepted", None)
        assert row["fail_to_pass"] == fail_to_pass and row["pass_to_pass"] == pass_to_pass
        task = read_task_dir(row["task_dir"])
        assert fail_to_pass == task.instance.FAIL_TO_PASS and pass_to_pass == task.instance.PASS_TO_PASS
        assert task.instance.base_commit == pr.base_sha and validate_instance(task.instance) == []
    assert rows["acme-labs__tinycalc-12"]["test_source"] == "pr"
    assert rows["acme-labs__tinycalc-12"]["statement_source"] == "issue"
    datekit = rows["northwind__datekit-7"]
    assert datekit["test_source"] == "agent" and datekit["statement_source"] == "llm"
    transcript = Path(pipeline.settings.layout.work, "northwind__datekit-7", "tests.transcript.jsonl")
    assert any("submit_tests" in line for line in transcript.read_text().splitlines())
    bad = rows[BAD]
    assert (bad["status"], bad["stage"]) == ("rejected", "validation")
    assert bad["reason"].startswith("no FAIL_TO_PASS") and bad["task_dir"] is None
    assert not (pipeline.settings.output_dir / BAD).exists()

    dataset = dg.materialize([pipeline.defs.resolve_assets_def("swe_dataset")], instance=pipeline.instance)
    assert dataset.success
    datasets_dir = pipeline.settings.layout.datasets
    lines = [json.loads(line) for line in (datasets_dir / "swe_dataset.jsonl").read_text().splitlines()]
    assert sorted(line["instance_id"] for line in lines) == sorted(GOOD)
    assert all(set(SWEBENCH_COLUMNS) <= set(line) for line in lines)
    assert all(validate_instance(inst) == [] for inst in read_instances(datasets_dir / "swe_dataset.jsonl"))
    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset("parquet", data_files=str(datasets_dir / "swe_dataset.parquet"), split="train")
    assert sorted(loaded["instance_id"]) == sorted(GOOD)
    from_jsonl = datasets.load_dataset("json", data_files=str(datasets_dir / "swe_dataset.jsonl"), split="train")
    assert sorted(from_jsonl["instance_id"]) == sorted(GOOD) and set(SWEBENCH_COLUMNS) <= set(from_jsonl.column_names)
    tinycalc = loaded[sorted(loaded["instance_id"]).index("acme-labs__tinycalc-12")]
    assert json.loads(tinycalc["FAIL_TO_PASS"]) == pipeline.world.pr("acme-labs/tinycalc", 12).expected_fail_to_pass
    # SWE_FORGE_TASK_REPO: the same tasks as a SWE-bench 5 task repository, which SWE-bench's checker finds sound
    task_repo = pipeline.settings.task_repo
    assert task_repo is not None and sorted(p.name for p in (task_repo / "tasks").iterdir()) == sorted(GOOD)
    assert dataset.asset_materializations_for_node("swe_dataset")[0].metadata["task_repo_tasks"].value == len(GOOD)
    checks = pytest.importorskip("swebench.task.checks", reason="`swebench` not installed")
    assert checks.check_task_repo(task_repo) == []


@pytest.mark.docker
def test_rerunning_a_task_is_warm_and_free(pipeline: Pipeline) -> None:
    task_id = GOOD[0]
    if pipeline.rows().get(task_id, {}).get("status") != "accepted":
        assert pipeline.run_task(task_id).success
    calls = pipeline.twin.count()
    assert pipeline.run_task(task_id).success
    row = pipeline.rows()[task_id]
    assert row["status"] == "accepted" and row["recipe_source"] == "store"
    assert pipeline.twin.count() == calls  # stored recipe, cached answers: no LLM request


@pytest.mark.docker
def test_a_missing_pr_fails_the_stage_and_the_tasks_view_says_why(pipeline: Pipeline) -> None:
    task_id = "acme-labs__tinycalc-999"
    pipeline.instance.add_dynamic_partitions("tasks", [task_id])
    result = pipeline.run_task(task_id)
    assert not result.success
    row = pipeline.rows()[task_id]
    assert (row["status"], row["stage"]) == ("error", "patch") and "not an accepted PR" in row["reason"]


@pytest.mark.docker
def test_harness_assets_evaluate_exported_tasks_per_agent(pipeline: Pipeline) -> None:
    for task_id in [*GOOD, BAD]:
        if pipeline.rows().get(task_id, {}).get("status") not in ("accepted", "rejected"):
            assert pipeline.run_task(task_id).success
    examples = Path(__file__).resolve().parents[1] / "examples"
    agents = {
        "oracle": {"agent": "oracle"},
        "empty": {"agent": "command", "agent_dir": examples / "emptyagent", "agent_cmd": "python -m emptyagent"},
    }
    for name, update in agents.items():
        defs = build_definitions(pipeline.settings.model_copy(update=update), llm_key_envs=[LLM_KEY_ENV])
        label = defs.resources["harness"].label
        sensor = defs.resolve_sensor_def("harness_sensor")
        with dg.build_sensor_context(instance=pipeline.instance, resources=defs.resources) as context:
            asked = sensor(context)
        requested = sorted(r.partition_key for r in asked.run_requests)
        # exported tasks only, none evaluated yet by this agent, each its own (agent, task) partition
        assert requested == sorted(eval_key(label, t) for t in GOOD), name
        pipeline.instance.add_dynamic_partitions(AGENT_PARTITIONS, [agent_key(label)])  # what the sensor's request adds
        assert asked.dynamic_partitions_requests[0].partition_keys == [agent_key(label)]
        job = defs.resolve_job_def(EVAL_JOB)
        for task_id in [*GOOD, BAD]:
            key = eval_key(label, task_id)
            result = job.execute_in_process(instance=pipeline.instance, partition_key=key, raise_on_error=False)
            assert result.success, (name, task_id)
            (check,) = result.get_asset_check_evaluations()  # `harness_ok`: passed for any verdict, and the verdict
            expected = "rejected" if task_id == BAD else "resolved" if name == "oracle" else "unresolved"
            assert (check.passed, check.metadata["status"].value) == (True, expected), (name, task_id)
        with dg.build_sensor_context(instance=pipeline.instance, resources=defs.resources) as context:
            assert isinstance(sensor(context), dg.SkipReason)  # every exported task has this agent's result
        summary = dg.materialize([defs.resolve_assets_def("eval_summary")], instance=pipeline.instance)
        meta = summary.asset_materializations_for_node("eval_summary")[0].metadata
        assert meta[f"{label}: tasks"].value == 2  # one plotted series per agent, each under its own name
        assert meta[f"{label}: resolved_rate"].value == (1.0 if name == "oracle" else 0.0), name
        assert name == "oracle" or meta["oracle: resolved"].value == 2  # the oracle's figures stay after the next
        assert meta["agents"].value == list(agents).index(name) + 1  # every agent so far, each in its own row
        assert name == "oracle" or "oracle" in meta["by_agent"].value
    rows = query(
        pipeline.settings.lake_dir, "SELECT agent, task_id, status FROM eval_results ORDER BY 1, 2"
    ).to_pylist()
    assert {(r["agent"] == "oracle", r["task_id"], r["status"]) for r in rows} == {
        (False, GOOD[0], "unresolved"),
        (False, GOOD[1], "unresolved"),
        (True, GOOD[0], "resolved"),
        (True, GOOD[1], "resolved"),
    }
    # A UI backfill over the matrix: with the empty agent configured, the oracle's row runs the oracle (recorded in
    # the lake when it ran), not the configured agent, and not a failure.
    result = defs.resolve_job_def(EVAL_JOB).execute_in_process(
        instance=pipeline.instance, partition_key=eval_key("oracle", GOOD[0]), raise_on_error=False
    )
    assert result.success and [c.passed for c in result.get_asset_check_evaluations()] == [True]
