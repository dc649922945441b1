"""What mini-swe-agent is given (`agents.mini_swe_agent`): the dataset its loader reads, each row naming the image
SWE-bench builds for the task, and the configuration layer over its `swebench.yaml`."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from swe_forge_dagster.agents.mini_swe_agent import (
    Endpoint,
    Limits,
    dataset_rows,
    exit_statuses,
    write_configuration,
    write_dataset,
)


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
    path = write_configuration(Endpoint("http://127.0.0.1:8080/v1", "qwen"), Limits(7, 60), tmp_path / "c.yaml")
    config = yaml.safe_load(path.read_text())
    assert config["model"]["model_name"] == "openai/qwen"
    assert config["model"]["model_kwargs"]["api_base"] == "http://127.0.0.1:8080/v1"
    assert config["model"]["cost_tracking"] == "ignore_errors"
    assert config["agent"]["step_limit"] == 7 and config["environment"]["timeout"] == 60
    assert "--pull=never" in config["environment"]["run_args"]


def test_exit_statuses_are_read_from_the_trajectories(tmp_path: Path) -> None:
    for instance_id, status in (("a__b-1", "Submitted"), ("a__b-2", "LimitsExceeded")):
        (tmp_path / instance_id).mkdir()
        trajectory = {"info": {"exit_status": status}, "messages": []}
        (tmp_path / instance_id / f"{instance_id}.traj.json").write_text(json.dumps(trajectory))
    assert exit_statuses(tmp_path) == {"a__b-1": "Submitted", "a__b-2": "LimitsExceeded"}
