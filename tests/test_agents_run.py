"""mini-swe-agent, the SWE-bench team's reference agent, on our tasks through its own loop (`swe-forge agents run`).

The world's Python task (pytest) and JavaScript task (mocha, the Node image) as task directories; `swe-forge agents run
mini-swe-agent` exports them as a task repository, builds their images with SWE-bench's own `swebench images build`,
installs mini-swe-agent (pinned, its own environment) and runs `mini-extra swebench` against the OpenAI twin. The twin
is the model: scripted tool calls that apply the gold patch through the agent's own `bash` tool and submit with its own
submission line, or that submit nothing; and the Python task's gold turns once more with `--via gym`, where the same
agent's commands run in an episode of `swe-forge gym serve` (which answers the episode when the agent submits). Each
predictions file is graded by SWE-bench's `swebench eval` and by `swe-forge harness --predictions`: the same verdict
from each, and the same outcome test for test; the gold ones resolved, the empty one not. Each agent configuration is
its own row of `eval_results` (and the gym's answer its own, `gym:<label>`). Needs Docker, `swe-forge-base:bullseye` and
the Node image, PyPI (mini-swe-agent and its packages, by uv).
"""

from __future__ import annotations

import base64
import dataclasses
import json
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.agents.mini_gym_environment import SUBMIT_LINE
from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin
from swe_forge_dagster.demo.twins.openai_twin_script import ToolCall
from swe_forge_dagster.demo.worlds.harness_task import WORLD_RECIPE, world_task_record
from swe_forge_dagster.environments.candidates import environment_candidates
from swe_forge_dagster.export.task_dir import write_task_dir
from tests.support.common import BASE_IMAGE, cli_json, swebench_cli, swebench_outcomes
from tests.support.records import TWO_LANGUAGE_PRS, two_language_world

pytestmark = [pytest.mark.docker, pytest.mark.timeout(1500)]
SUBMIT = f"cd /testbed && git add -A >/dev/null 2>&1; echo {SUBMIT_LINE} && git diff --cached --binary"
"""The submission: the staged diff with binary files' content (the task's fix adds an image; without `--binary` no
harness can apply it: SWE-bench ends the prediction `error`, ours `agent_error`)."""


def gold_turns(patch: str) -> list[ToolCall]:
    """The model's turns that fix the task: the gold patch applied with the agent's bash tool, then submitted."""
    encoded = base64.b64encode(patch.encode()).decode()
    return [
        ToolCall("bash", {"command": f"cd /testbed && echo {encoded} | base64 -d | git apply -v"}),
        ToolCall("bash", {"command": SUBMIT}),
    ]


@pytest.mark.extended
def test_mini_swe_agent_runs_our_tasks_and_both_harnesses_grade_its_predictions_alike(
    tmp_path: Path, docker_client: docker.DockerClient
) -> None:
    world, cache = two_language_world(tmp_path, docker_client)
    records = {}
    for repo, number in TWO_LANGUAGE_PRS:
        pr = world.pr(repo, number)
        files = pr.src_files + pr.test_files
        recipe = environment_candidates(cache, pr.repo, pr.base_sha, files).recipes[0]
        if pr.language == "Python":
            recipe = dataclasses.replace(WORLD_RECIPE, base_image=BASE_IMAGE)
        record = world_task_record(cache, pr, recipe)
        write_task_dir(tmp_path / "tasks" / record.task_id, record)
        records[record.task_id] = record
    ids = sorted(records)  # mini-swe-agent takes the tasks in the dataset's order, one at a time
    python_task = ids[0]
    home = tmp_path / "home"

    runs = {}
    gold = [turn for i in ids for turn in gold_turns(records[i].instance.patch)]
    plans = {  # (what the model does, where from, where its commands run, the tasks)
        "gold": (gold, tmp_path / "tasks", "swebench", ids),
        "nothing": (
            [ToolCall("bash", {"command": SUBMIT})] * len(ids),
            tmp_path / "gold" / "task-repo",
            "swebench",
            ids,
        ),
        "gym": (gold_turns(records[python_task].instance.patch), tmp_path / "gold" / "task-repo", "gym", [python_task]),
    }
    with OpenAITwin() as twin:
        for name, (turns, source, via, tasks) in plans.items():
            twin.queue(*turns)
            args = ("agents", "run", "mini-swe-agent", "-i", str(source), "-o", str(tmp_path / name), "--via", via)
            limits = ("--steps", "4", "--wall-seconds", "900", "--base-url", twin.url, "--model", "twin")
            only = [arg for task in tasks for arg in ("--instance", task)]
            key = {"SWE_FORGE_LLM_API_KEY": twin.api_key or ""}  # passed in the agent's environment, as a user's is
            runs[name] = cli_json(home, *args, *limits, *only, "--git-url", world.url_template, **key)
            assert runs[name]["exit_statuses"] == dict.fromkeys(tasks, "Submitted"), runs[name]
            assert not twin.pending(), name  # every scripted turn was asked for, through the agent's own loop
    assert runs["gold"]["submitted"] == ids and runs["gym"]["submitted"] == [python_task]
    assert runs["nothing"]["submitted"] == []
    assert runs["gold"]["label"] == runs["nothing"]["label"] != runs["gym"]["label"]  # a label per configuration
    repo = tmp_path / "gold" / "task-repo"

    for name, expected in (("gold", "resolved"), ("nothing", "unresolved"), ("gym", "resolved")):
        predictions = runs[name]["predictions"]
        swebench_cli(tmp_path, "eval", "swe-forge/tasks", "-p", predictions, "--task-repo", str(repo), "--run-id", name)
        model = runs[name]["label"].replace("/", "__")
        theirs = json.loads((tmp_path / f"{model}.{name}.json").read_text())
        ours = cli_json(home, "harness", "-i", str(repo), "--predictions", predictions)
        tasks = plans[name][3]
        assert {r["task_id"]: r["status"] for r in ours["results"]} == dict.fromkeys(tasks, expected), ours
        if expected == "resolved":
            assert sorted(theirs["resolved_ids"]) == tasks, theirs
            for row in ours["results"]:
                outcomes = {c["test_id"]: c["passed"] for c in row["fail_to_pass"] + row["pass_to_pass"]}
                assert outcomes == swebench_outcomes(tmp_path, name, model, row["task_id"]), row["task_id"]
        else:
            assert theirs["resolved_ids"] == [] and sorted(theirs["empty_patch_ids"]) == tasks, theirs
    rows = cli_json(home, "sql", "select agent, status, count(*) as n from eval_results group by 1, 2 order by 1")
    assert rows == [  # the latest of each (agent, task): a row per agent and configuration, the gym's own beside
        {"agent": f"gym:{runs['gym']['label']}", "status": "resolved", "n": 1},
        {"agent": runs["gym"]["label"], "status": "resolved", "n": 1},
        {"agent": runs["gold"]["label"], "status": "unresolved", "n": len(ids)},
    ], rows
    for name in ("gold", "nothing"):  # the agent's sandboxes are gone with its run
        label = f"swe-forge.agent-run={runs[name]['run_id']}"
        assert docker_client.containers.list(all=True, ignore_removed=True, filters={"label": label}) == [], name
