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
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from swe_forge_dagster.agents import mini_gym_environment
from swe_forge_dagster.agents.mini_gym_environment import OPEN_COMMAND
from swe_forge_dagster.common.uv import uv_binary, uv_environment
from swe_forge_dagster.export.task_repo import image_name

PACKAGE = "mini-swe-agent==2.4.6"
"""The version these settings were read from and proven with (its `swebench.yaml`, its Docker environment)."""
SHELL_STATE = "/etc/swe-forge-env.sh"
TOOL_CALLS, TEXT = "tool-calls", "text"
ACTION_FORMS = {TOOL_CALLS: ("swebench.yaml", "litellm"), TEXT: ("swebench_backticks.yaml", "litellm_textbased")}
"""How the model gives its commands -> mini-swe-agent's own configuration and model class for it: OpenAI tool calls,
or (for small models that write their calls as text) a fenced `mswea_bash_command` block in the reply."""
GYM_MODULE = "swe_forge_gym_environment"
"""The name `mini_gym_environment.py` is imported by in mini-swe-agent's environment (`write_gym_environment`)."""


@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible endpoint and the model name it serves."""

    url: str
    model: str
    api_key: str = "local"


@dataclass(frozen=True)
class GymSandbox:
    """Commands through a served gym instead of mini-swe-agent's Docker environment: the server and the agent name
    its episodes are recorded under."""

    url: str
    agent: str


@dataclass(frozen=True)
class Limits:
    """How far the agent may go: model turns per instance, tokens per reply, seconds per command in the sandbox,
    and seconds for the whole run (instances not ended by then end `WallTimeExceeded`)."""

    steps: int = 30
    reply_tokens: int = 2048
    command_seconds: int = 120
    wall_seconds: int = 3600


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


def configuration(
    endpoint: Endpoint,
    limits: Limits,
    labels: Mapping[str, str] | None = None,
    gym: GymSandbox | None = None,
    actions: str = TOOL_CALLS,
) -> dict[str, Any]:
    """The layer over mini-swe-agent's `swebench.yaml`: our model, our limits, and where its commands run: our images
    as they are (its Docker environment; its containers carry `labels`, so a run stopped at its wall time leaves none
    behind), or an episode of `swe-forge gym serve` per instance (`gym`). The API key is not here: it is passed in
    the process environment (`environment`), never written to a file."""
    config: dict[str, Any] = {
        "agent": {"step_limit": limits.steps, "cost_limit": 0},  # a local model costs nothing: steps bound it
        "model": {
            "model_class": ACTION_FORMS[actions][1],
            "model_name": f"openai/{endpoint.model}",
            "cost_tracking": "ignore_errors",
            "model_kwargs": {"api_base": endpoint.url, "max_tokens": limits.reply_tokens, "drop_params": True},
        },
    }
    if gym is None:
        label_args = [arg for name, value in (labels or {}).items() for arg in ("--label", f"{name}={value}")]
        config["environment"] = {
            "environment_class": "docker",
            "cwd": "/testbed",
            "timeout": limits.command_seconds,
            "run_args": ["--rm", "--pull=never", *label_args],
            "env": {"BASH_ENV": SHELL_STATE},
        }
    else:
        config["environment"] = {
            "environment_class": f"{GYM_MODULE}.GymEnvironment",
            "url": gym.url,
            "agent": gym.agent,
            "timeout": limits.command_seconds,
        }
        config["run"] = {"env_startup_command": f"{OPEN_COMMAND} {{{{instance_id}}}}"}
    return config


def write_configuration(config: dict[str, Any], path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def write_gym_environment(folder: Path) -> Path:
    """The gym environment's module where mini-swe-agent's interpreter imports it (`folder` on its PYTHONPATH)."""
    folder.mkdir(parents=True, exist_ok=True)
    source = Path(mini_gym_environment.__file__)
    shutil.copyfile(source, folder / (GYM_MODULE + source.suffix))
    return folder


def environment(work: Path, endpoint: Endpoint) -> dict[str, str]:
    """The variables its process runs with: its configuration folder under `work` (not the user's), no start-up
    banner, litellm's bundled price table (no fetch from GitHub), a model without a price accepted, the endpoint's
    key as litellm reads it for `openai/` models."""
    return {
        **os.environ,
        "MSWEA_GLOBAL_CONFIG_DIR": str(work / "mini-swe-agent-config"),
        "MSWEA_SILENT_STARTUP": "1",
        "MSWEA_COST_TRACKING": "ignore_errors",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENAI_API_KEY": endpoint.api_key,
    }


class InstallError(RuntimeError):
    """mini-swe-agent could not be installed (no uv, or the package index refused): the message says which."""


def install(root: Path) -> Path:
    """mini-swe-agent's `mini-extra` in its own virtual environment under `root` (made once, by uv): its path. An
    install cut short is made again (the environment counts only once its marker is written)."""
    venv = root / PACKAGE.replace("==", "-")
    mini_extra, marker = venv / "bin" / "mini-extra", venv / ".installed"
    if marker.is_file() and mini_extra.is_file():
        return mini_extra
    uv = uv_binary()
    if uv is None:
        raise InstallError("installing mini-swe-agent needs uv (https://docs.astral.sh/uv/), on PATH or by bootstrap")
    shutil.rmtree(venv, ignore_errors=True)
    for step in ([uv, "venv", "-q", str(venv)], [uv, "pip", "install", "-q", "--python", str(venv), PACKAGE]):
        done = subprocess.run(step, capture_output=True, text=True, env=uv_environment(), timeout=1800)
        if done.returncode != 0:
            raise InstallError(f"{' '.join(step[1:3])} {PACKAGE}: {(done.stderr or done.stdout).strip()[-800:]}")
    marker.write_text(PACKAGE + "\n")
    return mini_extra


def command(
    mini_extra: Path, dataset: Path, config: Path, output: Path, workers: int = 1, actions: str = TOOL_CALLS
) -> list[str]:
    """`mini-extra swebench` on the dataset folder, its own configuration for the action form under ours, writing
    to `output`."""
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
        ACTION_FORMS[actions][0],
        "-c",
        str(config),
        "--workers",
        str(workers),
    ]


def exit_statuses(output: Path) -> dict[str, str]:
    """Each instance's exit status, from its trajectory (`<output>/<id>/<id>.traj.json`), else from the run's
    `exit_statuses_*.yaml` (an instance whose sandbox never started has no trajectory). A trajectory being written
    (not yet whole JSON) is read at a later call."""
    statuses: dict[str, str] = {}
    for summary in sorted(output.glob("exit_statuses_*.yaml")):
        try:
            by_status = (yaml.safe_load(summary.read_text(encoding="utf-8")) or {}).get("instances_by_exit_status")
        except (OSError, yaml.YAMLError):
            continue
        for status, ids in (by_status or {}).items():
            statuses.update({str(instance_id): str(status) for instance_id in ids or ()})
    for trajectory in sorted(output.glob("*/*.traj.json")):
        try:
            info = json.loads(trajectory.read_text(encoding="utf-8")).get("info", {})
        except (OSError, ValueError):
            continue
        statuses[trajectory.parent.name] = str(info.get("exit_status") or "no exit status")
    return statuses
