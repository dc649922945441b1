"""One run of a field agent on a SWE-bench 5 task repository: its images, its dataset, its process, its predictions.

Why a task repository: it is what SWE-bench's own tools read, so the images the agent works in are the ones
`swebench eval` grades in (`swebench images build`, names from `export.task_repo.image_name`), and the predictions
file it leaves is graded by `swebench eval --task-repo` and `swe-forge harness --predictions` alike.

The run is bounded three ways (the agent's turns and each reply's tokens, each command's seconds, and the wall time of
the agent's run, counted once it is installed and the images are built). Every instance ends with a reason:
mini-swe-agent's exit status, or `WallTimeExceeded` / `NotStarted` when the run was stopped before it ended it. The
predictions file names every instance (an empty patch where the agent submitted nothing) under one label: the agent, its
version, the model and the digest of the configuration, so each agent and configuration is its own row of `eval_result`.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import uuid
from collections.abc import Callable
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import docker

from swe_forge_dagster.agents import mini_swe_agent as mini
from swe_forge_dagster.agents.gym_served import TOKEN_ENV, GymStartError, served_gym
from swe_forge_dagster.agents.images import ImageBuildError, build_images
from swe_forge_dagster.agents.process import watch
from swe_forge_dagster.export.instance_files import is_task_repo
from swe_forge_dagster.export.task_repo import TASKS_DIR

RUN_LABEL = "swe-forge.agent-run"
"""The label on the agent's sandbox containers: the run's id, so that the run removes what it leaves."""
PREDICTIONS = "predictions.jsonl"


class AgentRunError(RuntimeError):
    """The run cannot start: the input is not a task repository, an image cannot be built, the agent cannot be
    installed (the message says which)."""


@dataclass(frozen=True)
class AgentRun:
    """What to run: the task repository (optionally a subset of its instances), where to write, the model, the
    limits, and the folder agents are installed in."""

    task_repo: Path
    output: Path
    endpoint: mini.Endpoint
    limits: mini.Limits = field(default_factory=mini.Limits)
    instances: tuple[str, ...] = ()
    workers: int = 1
    actions: str = mini.TOOL_CALLS
    """How the model gives its commands (`mini.ACTION_FORMS`)."""
    via: str = "swebench"
    """Where the agent's commands run: `swebench` (its own Docker environment in SWE-bench's images) or `gym` (an
    episode of `swe-forge gym serve` per task)."""
    tools: Path = Path.home() / ".cache" / "swe-forge" / "agents"
    git_url: str | None = None
    """The clone URL template the gym is given (`--via gym`; the task repository carries its trees, so rarely)."""


def task_rows(task_repo: Path, only: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(instance id, problem statement) of each task of the repository (of `only` when given), id order."""
    tasks = task_repo / TASKS_DIR
    if not is_task_repo(task_repo):
        raise AgentRunError(f"{task_repo}: not a SWE-bench task repository (no sweb.yaml and tasks/)")
    found = {d.name: d for d in tasks.iterdir() if (d / "problem_statement.md").is_file()}
    missing = sorted(set(only) - set(found))
    if missing:
        raise AgentRunError(f"{task_repo}: no task {', '.join(missing)}")
    chosen = sorted(only or found)
    if not chosen:
        raise AgentRunError(f"{task_repo}: no task with a problem_statement.md")
    return [(i, (found[i] / "problem_statement.md").read_text(encoding="utf-8")) for i in chosen]


def agent_label(endpoint: mini.Endpoint, limits: mini.Limits, via: str, actions: str = mini.TOOL_CALLS) -> str:
    """`mini-swe-agent-<version>/<model>/<via>-<digest of the configuration>`: one label per agent, model, sandbox
    and configuration (a run's own values, its id and the gym's port, left out)."""
    gym = mini.GymSandbox("", "") if via == "gym" else None
    config = mini.configuration(endpoint, limits, gym=gym, actions=actions)
    digest = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()[:8]
    return f"{mini.PACKAGE.replace('==', '-')}/{endpoint.model}/{via}-{digest}"


def run_mini_swe_agent(run: AgentRun, say: Callable[[str], None] = print) -> dict[str, Any]:
    """Run mini-swe-agent on the tasks and write its predictions: the summary (also `<output>/run.json`)."""
    run = replace(run, task_repo=run.task_repo.resolve(), output=run.output.resolve())  # its processes run in output
    rows = task_rows(run.task_repo, run.instances)
    ids = [instance_id for instance_id, _ in rows]
    trajectories = run.output / "trajectories"
    if trajectories.exists() and any(trajectories.iterdir()):  # it would skip the tasks it finds done there
        raise AgentRunError(f"{run.output} already holds a run (trajectories/): choose another --output")
    label = agent_label(run.endpoint, run.limits, run.via, run.actions)
    try:
        executable = mini.install(run.tools)
    except mini.InstallError as exc:
        raise AgentRunError(str(exc)) from None
    run.output.mkdir(parents=True, exist_ok=True)
    dataset = mini.write_dataset(mini.dataset_rows(rows), run.output / "dataset")
    env = mini.environment(run.output, run.endpoint)
    run_id = uuid.uuid4().hex[:12]
    started = time.monotonic()
    try:
        with ExitStack() as stack:
            if run.via == "gym":
                served = served_gym(run.task_repo, run.output, run.limits.command_seconds, run.git_url)
                url, token = stack.enter_context(served)
                say(f"gym: serving the tasks at {url}")
                gym = mini.GymSandbox(url, label)
                config = mini.configuration(run.endpoint, run.limits, gym=gym, actions=run.actions)
                folder = mini.write_gym_environment(run.output / "gym-environment")
                path = os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH")]))
                env |= {TOKEN_ENV: token, "PYTHONPATH": path}
            else:
                stack.callback(remove_sandboxes, run_id)
                build_images(run.task_repo, ids, run.output, say)
                config = mini.configuration(run.endpoint, run.limits, {RUN_LABEL: run_id}, actions=run.actions)
            config_path = mini.write_configuration(config, run.output / "config.yaml")
            command = mini.command(executable, dataset, config_path, trajectories, run.workers, run.actions)
            log = run.output / "mini-swe-agent.log"
            watched = watch(
                command,
                env=env,
                cwd=run.output,
                log=log,
                ids=ids,
                trajectories=trajectories,
                wall_seconds=run.limits.wall_seconds,
                say=say,
            )
    except (GymStartError, ImageBuildError) as exc:
        raise AgentRunError(str(exc)) from None
    if watched.returncode:  # it ends 0 whatever its tasks did: anything else is the agent failing
        tail = log.read_text(encoding="utf-8", errors="replace")[-1500:]
        raise AgentRunError(f"mini-swe-agent exited {watched.returncode}; its log ({log}) ends: {tail}")
    found = mini.exit_statuses(trajectories)
    ended = "WallTimeExceeded" if watched.stopped_at_wall_time else "NotStarted"
    statuses = {instance_id: found.get(instance_id, ended) for instance_id in ids}
    patches = submitted_patches(trajectories / "preds.json")
    predictions = write_predictions(run.output / PREDICTIONS, ids, patches, label)
    summary = {
        "agent": "mini-swe-agent",
        "run_id": run_id,
        "via": run.via,
        "actions": run.actions,
        "label": label,
        "model": run.endpoint.model,
        "endpoint": run.endpoint.url,
        "limits": vars(run.limits),
        "configuration": config,
        "task_repo": str(run.task_repo),
        "predictions": str(predictions),
        "trajectories": str(trajectories),
        "exit_statuses": statuses,
        "submitted": sorted(i for i in ids if patches.get(i, "").strip()),
        "stopped_at_wall_time": watched.stopped_at_wall_time,
        "seconds": round(time.monotonic() - started, 1),
    }
    (run.output / "run.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def remove_sandboxes(run_id: str) -> None:
    """Remove the containers the agent started in this run and left (a stopped run cannot remove its own)."""
    client = docker.from_env()
    try:
        for container in client.containers.list(
            all=True, ignore_removed=True, filters={"label": f"{RUN_LABEL}={run_id}"}
        ):
            with suppress(docker.errors.NotFound):
                container.remove(force=True)
    finally:
        client.close()


def submitted_patches(preds: Path) -> dict[str, str]:
    """instance id -> the patch the agent submitted, from mini-swe-agent's `preds.json` (none when absent, or cut
    short by a stop while it was written)."""
    try:
        entries = json.loads(preds.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {i: str(entry.get("model_patch") or "") for i, entry in entries.items()}


def write_predictions(path: Path, ids: list[str], patches: dict[str, str], label: str) -> Path:
    """SWE-bench's predictions (JSONL), one per instance, under `label` (an empty patch where none was submitted)."""
    lines = [{"instance_id": i, "model_name_or_path": label, "model_patch": patches.get(i, "")} for i in ids]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path
