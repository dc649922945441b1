"""`swe-forge harness`: run an agent on tasks in Docker and report, flag-compatible with the seed's `swe harness`.

    swe-forge harness --input ./tasks --agent-dir ./my-agent --agent-cmd "python -m myagent" \\
        --agent-timeout 600 --parallel 2 --json
    swe-forge harness --input ./tasks --agent oracle          # the gold patches: should resolve 100%
    swe-forge harness --input swebench.jsonl --env-spec envs.json --agent-dir ./agent
    swe-forge harness --input swebench.jsonl --agent oracle   # environments from the repositories' manifests
    swe-forge harness --input swebench.jsonl --predictions preds.jsonl   # SWE-bench's predictions and report

Exit codes (for CI): 0 every task evaluated, 1 some task could not be evaluated (setup_error or
test_error), 2 bad usage, 130 interrupted (Ctrl-C or SIGTERM: the summary and `--output` are still
written, with the finished tasks' results and every unfinished task as a `setup_error` saying the
run was interrupted). Progress goes to stderr in both modes (a line per finished task, and a bar
on a terminal); stdout holds the seed's JSON summary with `--json`, else a table of results.

Task ids, reasons and agent output are the agent's and the repositories' text: they are printed
as inert text (`common.terminal`), so markup in them (`[/x]`, `[green]resolved[/]`) is shown as
written, never obeyed or fatal, and escape sequences cannot recolour or rewrite the terminal.

Heavy imports (docker, pyarrow) happen inside the command, so `swe-forge --help` stays fast.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from swe_forge_dagster.cli.common import err, out, say, usage_error
from swe_forge_dagster.common.agent_kind import AgentKind
from swe_forge_dagster.common.sandbox_spec import DEFAULT_CPU, DEFAULT_MEMORY
from swe_forge_dagster.common.terminal import inert, markup_safe
from swe_forge_dagster.settings import DEFAULT_AGENT_CMD, DEFAULT_AGENT_TIMEOUT_S, DEFAULT_TEST_TIMEOUT_S

if TYPE_CHECKING:
    from swe_forge_dagster.harness.models import HarnessConfig, HarnessTask, TaskLoadError, TaskResult

    Items = list[HarnessTask | TaskLoadError]

EXIT_INTERRUPTED = 130
STATUS_STYLE = {
    "resolved": "green",
    "unresolved": "yellow",
    "agent_error": "red",
    "test_error": "magenta",
    "setup_error": "magenta",
    "sanity_fail": "cyan",
}


def harness(
    input_path: Annotated[
        Path, typer.Option("--input", "-i", help="task dirs (any depth), a SWE-bench file or task repository")
    ] = Path("./generated-swe"),
    agent_dir: Annotated[Path | None, typer.Option(help="the agent's directory, mounted read-only at /agent")] = None,
    agent_cmd: Annotated[
        str, typer.Option(help="run in /repo with --prompt <text> --workdir /repo")
    ] = DEFAULT_AGENT_CMD,
    agent: Annotated[  # text, parsed into `AgentKind` below (the harness package loads only when a command runs)
        str, typer.Option(help="command (run --agent-cmd) | oracle (apply the gold patch)")
    ] = "command",
    agent_timeout: Annotated[float, typer.Option(help="seconds")] = DEFAULT_AGENT_TIMEOUT_S,
    test_timeout: Annotated[float, typer.Option(help="seconds per test command")] = DEFAULT_TEST_TIMEOUT_S,
    docker_image: Annotated[
        str | None, typer.Option(help="image for tasks without their own [default: SWE_FORGE_DOCKER_IMAGE]")
    ] = None,
    parallel: Annotated[int, typer.Option(help="tasks running at all times")] = 1,
    keep_containers: Annotated[bool, typer.Option(help="keep containers after evaluation (debugging)")] = False,
    json_output: Annotated[bool, typer.Option("--json", "-j", help="print the JSON summary only")] = False,
    agent_env: Annotated[
        list[str] | None, typer.Option(help="forward this host variable to the agent (repeatable)")
    ] = None,
    network: Annotated[str, typer.Option(help="the agent's network: none | bridge | host")] = "none",
    env_spec: Annotated[Path | None, typer.Option(help="SWE-bench inputs: JSON repo -> {image, ...}")] = None,
    git_url: Annotated[str | None, typer.Option(help="clone URL template [default: SWE_FORGE_GIT_URL]")] = None,
    pull: Annotated[bool, typer.Option(help="pull a missing base image")] = False,
    cpus: Annotated[float, typer.Option(help="CPU cores per container")] = DEFAULT_CPU,
    memory: Annotated[str, typer.Option(help="memory per container")] = DEFAULT_MEMORY,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="also write the JSON summary here")] = None,
    record: Annotated[
        bool, typer.Option(help="record each result in the eval_results dataset of SWE_FORGE_HOME (SQL, eval_summary)")
    ] = True,
    pytest_plugin_autoload: Annotated[
        bool, typer.Option(help="let the test runners autoload entry-point plugins in the checks (off by default)")
    ] = False,
    predictions: Annotated[
        Path | None,
        typer.Option(
            help="SWE-bench predictions (instance_id, model_name_or_path, model_patch; JSON or JSONL): each patch is "
            "the agent's diff; SWE-bench's report is written beside --output (or in the home's reports/)"
        ),
    ] = None,
) -> None:
    """Run an agent on tasks in Docker and report which it resolved (the seed's `swe harness`)."""
    from pydantic import ValidationError

    from swe_forge_dagster.harness import HarnessConfig, InputError, load_env_spec, load_inputs
    from swe_forge_dagster.settings import get_settings

    usage = usage_error
    if not input_path.exists():  # the input first: an option's complaint about a run that cannot start misleads
        raise usage(f"--input {input_path}: no such file or directory")
    settings = get_settings()
    names = list(agent_env or [])
    try:
        kind = AgentKind.parse(agent, where="--agent", allowed=(AgentKind.COMMAND, AgentKind.ORACLE))
    except ValueError as exc:
        raise usage(str(exc)) from None
    loaded = _predictions(predictions, kind, agent_dir) if predictions is not None else None
    if loaded is not None:
        kind = AgentKind.PREDICTIONS
    elif kind is AgentKind.COMMAND and (agent_dir is None or not agent_dir.is_dir()):
        raise usage(f"--agent-dir {agent_dir or '(missing)'}: not a directory (or use --agent oracle)")
    unset = [name for name in names if name not in os.environ]
    if unset:
        raise usage(f"--agent-env {', '.join(unset)}: not set in this environment")
    try:
        config = HarnessConfig(
            agent=kind,
            agent_dir=agent_dir.resolve() if agent_dir else None,
            predictions={p.instance_id: p.patch for p in loaded[0]} if loaded else {},
            model_name=_model_name(loaded[0]) if loaded else "",
            agent_cmd=agent_cmd,  # type: ignore[arg-type]
            agent_timeout=agent_timeout,
            test_timeout=test_timeout,
            sandbox=settings.sandbox.but(
                image=docker_image or settings.docker_image, network=network, cpu=cpus, mem_limit=memory
            ),
            agent_env=tuple(names),
            keep_containers=keep_containers,
            pull=pull,
            git_url=git_url or settings.git_url,
            repo_cache_dir=settings.cache_dir / "repos",
            parallel=parallel,
            plugin_autoload=pytest_plugin_autoload,
            registry=settings.registry,
        )
        specs = load_env_spec(env_spec) if env_spec else None
        items = load_inputs(input_path, default_image=config.docker_image, env_specs=specs)
    except ValidationError as exc:
        raise usage("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None
    except InputError as exc:
        raise usage(str(exc)) from None
    if not items:
        raise usage(f"--input {input_path}: no tasks found (no workspace.yaml at any depth)")
    lake_dir = settings.lake_dir if record else None
    extra = None
    if loaded is not None:
        from swe_forge_dagster.cli.harness_predictions import predicted_items, report_writer

        extra = report_writer(
            items, config, loaded[0], output=output, json_output=json_output, reports_dir=settings.home_abs / "reports"
        )
        items = predicted_items(items, config, loaded)
    raise typer.Exit(_run(items, config, json_output=json_output, output=output, lake_dir=lake_dir, extra=extra))


def _predictions(path: Path, kind: AgentKind, agent_dir: Path | None) -> tuple[list, list]:
    """(good, bad) records of a predictions file; usage errors for a file that cannot be read or a second agent."""
    from swe_forge_dagster.harness.predictions import PredictionsError, load_predictions

    if kind is not AgentKind.COMMAND or agent_dir is not None:
        raise usage_error("--predictions is the agent: leave out --agent oracle and --agent-dir")
    try:
        good, bad = load_predictions(path)
    except PredictionsError as exc:
        raise usage_error(str(exc)) from None
    if not good and not bad:
        raise usage_error(f"--predictions {path}: no records")
    if len({p.model for p in good}) > 1:
        raise usage_error(f"--predictions {path}: more than one model_name_or_path; one run evaluates one model")
    return good, bad


def _model_name(good: list) -> str:
    """The predictions' model names the agent; with no good record, the agent is named after its kind."""
    return good[0].model if good else AgentKind.PREDICTIONS.value


def _run(
    items: Items,
    config: HarnessConfig,
    *,
    json_output: bool,
    output: Path | None,
    lake_dir: Path | None,
    extra: Any = None,
) -> int:
    """Evaluate, print the summary (JSON or a table), write --output; the exit code. `extra(results, summary)`
    adds to the summary before it is printed (the SWE-bench report of a predictions run)."""
    from swe_forge_dagster.harness import summarize
    from swe_forge_dagster.harness.summary import exit_code

    def stop(signum: int, _frame: object) -> None:  # a cancelled CI job: clean up as for Ctrl-C
        raise KeyboardInterrupt(f"signal {signum}")

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, stop) if in_main else None
    finished: list[TaskResult] = []
    interrupted = False
    try:
        results = _evaluate(items, config, finished=finished, lake_dir=lake_dir)
    except KeyboardInterrupt:
        interrupted = True
        results = _with_unfinished(items, finished)
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)
    summary = summarize(results, _runtimes(results))
    if extra is not None:
        extra(results, summary)
    text = json.dumps(summary, indent=2, ensure_ascii=False)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text + "\n", encoding="utf-8")
    if json_output:
        print(text)
    else:
        _print_table(results, summary)
    if interrupted:
        say("interrupted:", "red", "unfinished tasks are reported as setup_error")
        return EXIT_INTERRUPTED
    return exit_code(results)


def _runtimes(results: list[TaskResult]) -> dict[str, dict[str, str]]:
    """image -> what its environment records (versions, resolution date), for every image a result ran on."""
    import docker

    from swe_forge_dagster.execution.runtime_record import runtime_record

    images = {r.image for r in results if r.image}
    if not images:
        return {}
    try:
        client = docker.from_env()
    except docker.errors.DockerException:
        return {}
    try:
        return {image: runtime_record(client, image) for image in images}
    finally:
        client.close()


def _with_unfinished(items: Items, finished: list[TaskResult]) -> list[TaskResult]:
    """The results in input order after an interrupt: the finished ones, and a setup_error for the rest."""
    from swe_forge_dagster.harness.models import Status, TaskResult

    pending = list(finished)
    results = []
    for item in items:
        match = next((r for r in pending if r.task_id == item.task_id), None)
        if match is not None:
            pending.remove(match)
            results.append(match)
        else:
            results.append(
                TaskResult(
                    task_id=item.task_id,
                    repo=item.repo,
                    status=Status.SETUP_ERROR,
                    reason="not finished: the run was interrupted",
                )
            )
    return results


def _evaluate(
    items: Items, config: HarnessConfig, *, finished: list[TaskResult], lake_dir: Path | None
) -> list[TaskResult]:
    """Run the pool with a progress bar and a line per finished task on stderr (also with --json: stdout
    then holds only the JSON, and a CI log still shows which task is done).

    Every result is appended to `finished` as it arrives, so an interrupt loses none of them.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from swe_forge_dagster.harness import run_harness
    from swe_forge_dagster.harness.summary import counts

    columns = (
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=err, transient=False) as progress:
        bar = progress.add_task(markup_safe(f"{config.agent_label}: starting"), total=len(items))

        def on_result(result: TaskResult) -> None:
            finished.append(result)
            style = STATUS_STYLE.get(result.status.value, "white")
            reason = f": {result.reason[:160]}" if result.reason else ""
            line = Text.assemble((f"{result.status.value:<11}", style), " ", inert(result.task_id), inert(reason))
            progress.console.print(line, highlight=False)
            tally = ", ".join(f"{k} {v}" for k, v in counts(finished).items() if v)
            progress.update(bar, advance=1, description=tally)

        return run_harness(items, config, on_result=on_result, lake_dir=lake_dir)


def _print_table(results: list[TaskResult], summary: dict[str, Any]) -> None:
    table = Table(title="harness results", show_lines=False)
    from swe_forge_dagster.execution.runtime_record import describe

    for name in ("task", "status", "F2P", "P2P", "agent s", "runtime", "reason"):
        table.add_column(name, overflow="fold")
    for r, row in zip(results, summary["results"], strict=True):
        f2p = f"{sum(c.passed for c in r.fail_to_pass)}/{len(r.fail_to_pass)}"
        p2p = f"{sum(c.passed for c in r.pass_to_pass)}/{len(r.pass_to_pass)}"
        style = STATUS_STYLE.get(r.status.value, "white")
        table.add_row(
            inert(r.task_id),
            inert(r.status.value, style),
            f2p,
            p2p,
            f"{r.agent_duration_secs:.1f}",
            inert(describe(row.get("runtime") or {})),
            inert((r.reason or "")[:200]),
        )
    out.print(table)
    totals = ", ".join(f"{k} {v}" for k, v in summary.items() if isinstance(v, int) and k != "total")
    out.print(f"total {summary['total']}: {totals}; avg agent time {summary['avg_agent_time_secs']}s")
