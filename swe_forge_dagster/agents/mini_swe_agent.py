"""mini-swe-agent, the SWE-bench team's reference agent, run on our tasks through its own SWE-bench loop.

Why its own loop and its own environment: users compare agents as the field runs them, so the agent drives the
sandbox itself (`mini-extra swebench`: `docker run` of each instance's image, `docker exec` of each command) and
writes SWE-bench's predictions file, which both harnesses then grade. It brings litellm and a tree of packages we do
not need, so it is installed, pinned, in a virtual environment of its own under the home (`uv`), never into ours.

What it is given, so that it runs offline against a model the user names:
- the dataset as a folder holding `test.jsonl` (its loader, `datasets.load_dataset(folder, split="test")`, takes a
  folder, not a file), one row per task: `instance_id`, `problem_statement` and `image_name`, the image SWE-bench
  builds for the task from the task repository we export (`export.task_repo.image_name`);
- a configuration layered on its own `swebench.yaml`: the model as litellm's `openai/<name>` at the endpoint's URL
  (`swe-forge llm serve`, or any OpenAI-compatible one), cost tracking that ignores a model without a price
  (else every instance ends `RuntimeError`), the step limit, each command's time limit, `--pull=never` (a task id
  that matches a public SWE-bench image must not be pulled) and `BASH_ENV` set to the shell state our images save
  (their interpreter and paths, `export.eval_script`).

It ends each instance with an exit status (`Submitted`, `LimitsExceeded`, `TimeExceeded`, `RepeatedFormatError`, or
an exception's name), read back from its trajectories.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from swe_forge_dagster.export.task_repo import image_name

PACKAGE = "mini-swe-agent==2.4.6"
"""The version these settings were read from and proven with (its `swebench.yaml`, its Docker environment)."""
SUBMIT_LINE = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""The first line of a command's output that ends mini-swe-agent's run; the rest of that output is the patch."""
SHELL_STATE = "/etc/swe-forge-env.sh"


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible endpoint and the model name it serves."""

    url: str
    model: str
    api_key: str = "local"


@dataclass(frozen=True)
class Limits:
    """How far one instance may go: model turns, and seconds per command in the sandbox."""

    steps: int = 50
    command_seconds: int = 300


def dataset_rows(instances: Iterable[tuple[str, str]]) -> list[dict[str, str]]:
    """The rows mini-swe-agent reads for (instance id, problem statement) pairs, each naming its task's image."""
    return [
        {"instance_id": instance_id, "problem_statement": statement, "image_name": image_name(instance_id)}
        for instance_id, statement in instances
    ]


def write_dataset(rows: Iterable[Mapping[str, str]], folder: Path) -> Path:
    """`rows` as the folder its dataset loader takes (`<folder>/test.jsonl`, the split `test`): the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test.jsonl").write_text("".join(json.dumps(dict(row)) + "\n" for row in rows), encoding="utf-8")
    return folder


def configuration(endpoint: Endpoint, limits: Limits) -> dict[str, Any]:
    """The layer over mini-swe-agent's `swebench.yaml`: our model, our limits, our images as they are."""
    return {
        "agent": {"step_limit": limits.steps, "cost_limit": 0},  # a local model costs nothing: steps bound it
        "environment": {
            "environment_class": "docker",
            "cwd": "/testbed",
            "timeout": limits.command_seconds,
            "run_args": ["--rm", "--pull=never"],
            "env": {"BASH_ENV": SHELL_STATE},
        },
        "model": {
            "model_class": "litellm",
            "model_name": f"openai/{endpoint.model}",
            "cost_tracking": "ignore_errors",
            "model_kwargs": {"api_base": endpoint.url, "api_key": endpoint.api_key, "drop_params": True},
        },
    }


def write_configuration(endpoint: Endpoint, limits: Limits, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(configuration(endpoint, limits), sort_keys=False), encoding="utf-8")
    return path


def environment(work: Path) -> dict[str, str]:
    """The variables its process runs with: its configuration folder under `work` (not the user's), no start-up
    banner, litellm's bundled price table (no fetch from GitHub), a model without a price accepted."""
    return {
        **os.environ,
        "MSWEA_GLOBAL_CONFIG_DIR": str(work / "mini-swe-agent-config"),
        "MSWEA_SILENT_STARTUP": "1",
        "MSWEA_COST_TRACKING": "ignore_errors",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }


def install(root: Path, uv: str = "uv") -> Path:
    """mini-swe-agent's `mini-extra` in its own virtual environment under `root` (made once, by `uv`): its path."""
    venv = root / PACKAGE.replace("==", "-")
    mini_extra = venv / "bin" / "mini-extra"
    if not mini_extra.is_file():
        subprocess.run([uv, "venv", "-q", str(venv)], check=True, timeout=600)
        subprocess.run([uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), PACKAGE], check=True)
    return mini_extra


def command(mini_extra: Path, dataset: Path, config: Path, output: Path, workers: int = 1) -> list[str]:
    """`mini-extra swebench` on the dataset folder, its own `swebench.yaml` under ours, writing to `output`."""
    return [
        str(mini_extra),
        "swebench",
        "--subset",
        str(dataset),
        "--split",
        "test",
        "-o",
        str(output),
        "-c",
        "swebench.yaml",
        "-c",
        str(config),
        "--workers",
        str(workers),
    ]


def exit_statuses(output: Path) -> dict[str, str]:
    """Each instance's exit status and reason, from its trajectory (`<output>/<id>/<id>.traj.json`)."""
    statuses: dict[str, str] = {}
    for trajectory in sorted(output.glob("*/*.traj.json")):
        info = json.loads(trajectory.read_text(encoding="utf-8")).get("info", {})
        statuses[trajectory.parent.name] = str(info.get("exit_status") or "no exit status")
    return statuses
