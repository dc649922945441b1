"""`swe-forge agents run`: the field's agents on our tasks, as their users run them, graded by both harnesses.

    swe-forge llm start                                            # or any OpenAI-compatible endpoint
    swe-forge agents run mini-swe-agent -i ./tasks -o ./msa \\
        --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder-1.5b
    swe-forge harness -i ./msa/task-repo --predictions ./msa/predictions.jsonl
    swebench eval swe-forge/tasks -p ./msa/predictions.jsonl --task-repo ./msa/task-repo

The input is a SWE-bench 5 task repository, or our task directories or a SWE-bench file proved here (exported first into
`<output>/task-repo`, as `swe-forge export --format swebench-task-repo` does). mini-swe-agent runs through its own
SWE-bench loop (`mini-extra swebench`), installed pinned in an environment of its own under the cache, in the images
SWE-bench builds for the tasks (`agents.run`). The API key, when the endpoint needs one, is read from
SWE_FORGE_LLM_API_KEY, OPENROUTER_API_KEY or OPENAI_API_KEY and passed in the agent's environment, never written to a
file. Exit codes: 0 every task ended (whatever its verdict), 1 the run failed (an image, the install, the agent) or
stopped at its wall time, 2 bad usage.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from swe_forge_dagster.cli.common import err, out, say, usage_error
from swe_forge_dagster.common.terminal import inert
from swe_forge_dagster.settings import get_settings

AGENTS = ("mini-swe-agent",)
KEY_NAMES = ("SWE_FORGE_LLM_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_KEY")
agents_app = typer.Typer(
    name="agents", help="The field's agents (mini-swe-agent) on our tasks.", no_args_is_help=True, add_completion=False
)


@agents_app.command("run")
def run(
    agent: Annotated[str, typer.Argument(help="the agent: mini-swe-agent")],
    input_path: Annotated[Path, typer.Option("--input", "-i", help="a task repository, task dirs or SWE-bench file")],
    output: Annotated[Path, typer.Option("--output", "-o", help="folder for predictions, trajectories, run.json")],
    model: Annotated[str | None, typer.Option(help="model name at the endpoint [default: SWE_FORGE_MODEL]")] = None,
    base_url: Annotated[str | None, typer.Option(help="[default: SWE_FORGE_LLM_BASE_URL]")] = None,
    instance: Annotated[list[str] | None, typer.Option("--instance", help="only this task (repeatable)")] = None,
    steps: Annotated[int, typer.Option(min=1, help="model turns per task")] = 30,
    reply_tokens: Annotated[int, typer.Option(min=16, help="tokens per model reply")] = 2048,
    command_seconds: Annotated[int, typer.Option(min=1, help="seconds per command in the sandbox")] = 120,
    wall_seconds: Annotated[int, typer.Option(min=1, help="seconds for the agent's run")] = 3600,
    workers: Annotated[int, typer.Option(min=1, help="tasks at once")] = 1,
    actions: Annotated[str, typer.Option(help="tool-calls | text: how the model gives its commands")] = "tool-calls",
    via: Annotated[
        str, typer.Option(help="swebench: its own loop in SWE-bench's images | gym: a gym episode")
    ] = "swebench",
    git_url: Annotated[str | None, typer.Option(help="clone URL template [default: SWE_FORGE_GIT_URL]")] = None,
    as_json: Annotated[bool, typer.Option("--json", "-j", help="JSON summary on stdout")] = False,
) -> None:
    """Run an agent on the tasks: its predictions file, trajectories and a summary of how each task ended."""
    from swe_forge_dagster.agents.mini_swe_agent import Endpoint, Limits
    from swe_forge_dagster.agents.run import AgentRun, AgentRunError, run_mini_swe_agent, task_rows
    from swe_forge_dagster.common.secrets import secret_from_env
    from swe_forge_dagster.export.instance_files import is_task_repo

    if agent not in AGENTS:
        raise usage_error(f"{agent}: not an agent we run ({', '.join(AGENTS)})")
    if actions not in ("tool-calls", "text"):
        raise usage_error(f"--actions {actions}: tool-calls or text")
    if via not in ("swebench", "gym"):
        raise usage_error(f"--via {via}: swebench or gym")
    if not input_path.exists():
        raise usage_error(f"--input {input_path}: no such file or folder")
    settings = get_settings()
    input_path, output = input_path.resolve(), output.resolve()  # the agent and its servers run in `output`
    task_repo = input_path if is_task_repo(input_path) else _exported(input_path, output / "task-repo", git_url)
    key = secret_from_env(KEY_NAMES) or "none"  # a local server takes any key; litellm wants one
    endpoint = Endpoint(base_url or settings.llm_base_url, model or settings.model, key)
    limits = Limits(steps, reply_tokens, command_seconds, wall_seconds)
    chosen = tuple(instance or ())
    try:
        task_rows(task_repo, chosen)  # an unknown --instance is bad usage, said before anything is installed
    except AgentRunError as exc:
        raise usage_error(str(exc)) from None
    tools = settings.cache_dir / "agents"
    job = AgentRun(task_repo, output, endpoint, limits, chosen, workers, actions, via, tools, git_url)
    progress = (lambda line: err.print(line, markup=False, highlight=False)) if not as_json else (lambda _line: None)
    try:
        summary = run_mini_swe_agent(job, progress)
    except AgentRunError as exc:
        say("error:", "red", exc)
        raise typer.Exit(1) from None
    if as_json:
        out.print_json(json.dumps(summary))
    else:
        for instance_id, status in summary["exit_statuses"].items():
            out.print(inert(f"{instance_id}: {status}"))
        out.print(
            inert(
                f"{len(summary['submitted'])} of {len(summary['exit_statuses'])} submitted a patch; "
                f"{summary['seconds']} s; predictions {summary['predictions']} ({summary['label']})"
            )
        )
        repo, predictions = summary["task_repo"], summary["predictions"]
        out.print(inert(f"grade: swe-forge harness -i {repo} --predictions {predictions}"))
        out.print(inert(f"grade: swebench eval swe-forge/tasks -p {predictions} --task-repo {repo}"))
    raise typer.Exit(1 if summary["stopped_at_wall_time"] else 0)


def _exported(source: Path, target: Path, git_url: str | None) -> Path:
    """Our tasks at `source` as a task repository at `target` (what `swe-forge export` writes); exit 1 when none
    could be written."""
    from swe_forge_dagster.cli.export_task_repo import write_repo

    written, skipped = write_repo(source, target, git_url)
    for label, why in skipped.items():
        say("left out", "yellow", f"{label}: {why}")
    if not written:
        why = "each is named above" if skipped else "none found there"
        say("error:", "red", f"no task of {source} could be exported for the agent ({why})")
        raise typer.Exit(1)
    return target
