"""What mini-swe-agent is given (`agents.mini_swe_agent`: the dataset its loader reads, each row naming the image
SWE-bench builds for the task, the configuration layer over its `swebench.yaml`) and what a run of it leaves
(`agents.run`: predictions naming every task under one label per agent and configuration); the command's bad usage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from swe_forge_dagster.agents.mini_swe_agent import (
    Endpoint,
    GymSandbox,
    Limits,
    command,
    configuration,
    dataset_rows,
    environment,
    exit_statuses,
    write_configuration,
    write_dataset,
    write_gym_environment,
)
from swe_forge_dagster.agents.run import (
    AgentRun,
    AgentRunError,
    agent_label,
    run_mini_swe_agent,
    task_rows,
    write_predictions,
)
from tests.support.common import run_cli


def test_the_dataset_is_a_folder_of_the_test_split_naming_each_tasks_swebench_image(tmp_path: Path) -> None:
    rows = dataset_rows([("acme-labs__tinycalc-12", "round_half_up(-2.5) gives -2")])
    folder = write_dataset(rows, tmp_path / "dataset")
    (row,) = [json.loads(line) for line in (folder / "test.jsonl").read_text().splitlines()]
    assert row == {
        "instance_id": "acme-labs__tinycalc-12",
        "problem_statement": "round_half_up(-2.5) gives -2",
        "image_name": "swebench/sweb.eval.x86_64.acme-labs_1776_tinycalc-12:latest",
    }


def test_the_configuration_points_at_the_endpoint_and_never_pulls(tmp_path: Path) -> None:
    endpoint = Endpoint("http://127.0.0.1:8080/v1", "qwen", api_key="sk-secret")
    limits = Limits(steps=7, reply_tokens=512, command_seconds=60)
    path = write_configuration(configuration(endpoint, limits, {"swe-forge.agent-run": "r1"}), tmp_path / "c.yaml")
    config = yaml.safe_load(path.read_text())
    assert config["model"]["model_name"] == "openai/qwen"
    assert config["model"]["model_kwargs"] == {
        "api_base": "http://127.0.0.1:8080/v1",
        "max_tokens": 512,
        "drop_params": True,
    }
    assert config["model"]["cost_tracking"] == "ignore_errors"
    assert config["agent"]["step_limit"] == 7 and config["environment"]["timeout"] == 60
    run_args = config["environment"]["run_args"]
    assert "--pull=never" in run_args and run_args[run_args.index("--label") + 1] == "swe-forge.agent-run=r1"
    assert "sk-secret" not in path.read_text()  # the key goes in the agent's environment, never in a file
    assert environment(tmp_path, endpoint)["OPENAI_API_KEY"] == "sk-secret"


def test_exit_statuses_are_read_from_the_trajectories(tmp_path: Path) -> None:
    for instance_id, status in (("a__b-1", "Submitted"), ("a__b-2", "LimitsExceeded")):
        (tmp_path / instance_id).mkdir()
        trajectory = {"info": {"exit_status": status}, "messages": []}
        (tmp_path / instance_id / f"{instance_id}.traj.json").write_text(json.dumps(trajectory))
    assert exit_statuses(tmp_path) == {"a__b-1": "Submitted", "a__b-2": "LimitsExceeded"}


def test_a_run_reads_only_a_task_repository_and_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(AgentRunError, match="not a SWE-bench task repository"):
        task_rows(tmp_path)
    (tmp_path / "sweb.yaml").write_text("datasets: [swe-forge/tasks]\n")
    (tmp_path / "tasks" / "a__b-1").mkdir(parents=True)
    (tmp_path / "tasks" / "a__b-1" / "problem_statement.md").write_text("It breaks.")
    assert task_rows(tmp_path) == [("a__b-1", "It breaks.")]
    with pytest.raises(AgentRunError, match="no task a__b-2"):
        task_rows(tmp_path, ("a__b-1", "a__b-2"))


def test_predictions_name_every_task_under_one_label_per_agent_and_configuration(tmp_path: Path) -> None:
    endpoint = Endpoint("http://127.0.0.1:8080/v1", "qwen")
    label = agent_label(endpoint, Limits(), "swebench")
    assert label == agent_label(endpoint, Limits(), "swebench")
    others = {agent_label(endpoint, Limits(steps=5), "swebench"), agent_label(endpoint, Limits(), "gym")}
    assert label not in others and len(others) == 2
    assert label.startswith("mini-swe-agent-") and "/qwen/swebench-" in label
    path = write_predictions(tmp_path / "p.jsonl", ["a__b-1", "a__b-2"], {"a__b-1": "diff --git a/x b/x\n"}, label)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(p["instance_id"], p["model_name_or_path"], bool(p["model_patch"])) for p in lines] == [
        ("a__b-1", label, True),
        ("a__b-2", label, False),  # submitted nothing: an empty patch, still named (SWE-bench's empty_patch_ids)
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["other-agent", "-i", ".", "-o", "out"], "not an agent we run"),
        (["mini-swe-agent", "-i", "/nonexistent/tasks", "-o", "out"], "no such file or folder"),
        (["mini-swe-agent", "-i", "repo", "-o", "out", "--instance", "a__b-9"], "no task a__b-9"),
        (["mini-swe-agent", "-i", "repo", "-o", "out", "--via", "ssh"], "--via ssh: swebench or gym"),
    ],
)
def test_bad_usage_is_exit_2_naming_the_problem(tmp_path: Path, args: list[str], message: str) -> None:
    (tmp_path / "repo" / "tasks" / "a__b-1").mkdir(parents=True)
    (tmp_path / "repo" / "sweb.yaml").write_text("datasets: [swe-forge/tasks]\n")
    (tmp_path / "repo" / "tasks" / "a__b-1" / "problem_statement.md").write_text("It breaks.")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_")} | {"SWE_FORGE_HOME": str(tmp_path)}
    done = run_cli("agents", "run", *args, env=env, cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_through_the_gym_each_instance_opens_its_episode_and_the_module_is_importable_beside_the_run(
    tmp_path: Path,
) -> None:
    endpoint = Endpoint("http://127.0.0.1:8080/v1", "qwen")
    config = configuration(endpoint, Limits(command_seconds=30), gym=GymSandbox("http://127.0.0.1:9/", "msa/qwen"))
    environment_config = config["environment"]
    assert environment_config == {
        "environment_class": "swe_forge_gym_environment.GymEnvironment",
        "url": "http://127.0.0.1:9/",
        "agent": "msa/qwen",
        "timeout": 30,
    }
    assert config["run"]["env_startup_command"] == "swe-forge-gym-open {{instance_id}}"  # rendered per instance
    folder = write_gym_environment(tmp_path / "env")
    probe = f"import sys; sys.path.insert(0, {str(folder)!r}); import swe_forge_gym_environment as m; print(m.__file__)"
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True
    )  # no site: stdlib only
    assert done.returncode == 0 and done.stdout.startswith(str(folder)), done.stderr


def test_a_model_that_writes_its_commands_as_text_gets_mini_swe_agents_own_text_form(tmp_path: Path) -> None:
    """Small open models write their calls in the reply's text; mini-swe-agent reads those with its text-based model
    class and its own `swebench_backticks.yaml` (a fenced `mswea_bash_command` block), never our parsing."""
    endpoint = Endpoint("http://127.0.0.1:8080/v1", "qwen")
    config = configuration(endpoint, Limits(), actions="text")
    assert config["model"]["model_class"] == "litellm_textbased"
    argv = command(tmp_path / "mini-extra", tmp_path / "ds", tmp_path / "c.yaml", tmp_path / "out", actions="text")
    assert argv[argv.index("-c") + 1] == "swebench_backticks.yaml"
    assert agent_label(endpoint, Limits(), "swebench", "text") != agent_label(endpoint, Limits(), "swebench")


def test_an_output_that_holds_a_run_is_refused_before_anything_is_installed(tmp_path: Path) -> None:
    """mini-swe-agent skips the tasks it finds done in its output: a second run there would report the first one's
    patches under the new configuration's label."""
    repo = tmp_path / "repo"
    (repo / "tasks" / "a__b-1").mkdir(parents=True)
    (repo / "sweb.yaml").write_text("datasets: [swe-forge/tasks]\n")
    (repo / "tasks" / "a__b-1" / "problem_statement.md").write_text("It breaks.")
    (tmp_path / "out" / "trajectories" / "a__b-1").mkdir(parents=True)
    run = AgentRun(repo, tmp_path / "out", Endpoint("http://127.0.0.1:9/v1", "m"), tools=tmp_path / "tools")
    with pytest.raises(AgentRunError, match="already holds a run"):
        run_mini_swe_agent(run)
    assert not (tmp_path / "tools").exists()
