"""`swe-forge mine`: the seed's `swe mine`, over the same Dagster jobs as the UI and the sensors.

With `--submit` every run (hours, then tasks) goes through the instance's run coordinator (the
daemon launches it, e.g. in a container with deploy/'s DockerRunLauncher) and is followed until it
ends; the walk is the same. Submitted runs use the deployment's settings (the daemon's
environment), so the flags that only configure runs (--model, --min-stars, --languages, --output,
--pr-file, --api-key) are refused with --submit: set the settings where the daemon runs.

Exit codes: 0 the asked number of tasks was exported (or, without --once, stopped with Ctrl-C);
1 fewer tasks and something failed (an hour or a task stage errored: see the summary; or the runs
cannot be submitted); 2 bad usage; 3 every hour in reach was mined and fewer tasks than asked came
out of them.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from swe_forge_dagster.cli.common import err, out, refresh_catalog_or_warn, say, usage_error
from swe_forge_dagster.common.invocation import next_step
from swe_forge_dagster.common.terminal import inert
from swe_forge_dagster.settings import Settings, get_settings, parse_tiers

if TYPE_CHECKING:
    from swe_forge_dagster.orchestration.mine import MineOptions, Miner

LLM_KEY_ENV = "SWE_FORGE_LLM_API_KEY"


class ConsoleProgress:
    def __init__(self, console: Console) -> None:
        self.console = console

    def hour(self, key: str, status: str) -> None:
        color = {"mined": "green", "already mined": "cyan", "failed": "red"}.get(status, "yellow")
        self.console.print(f"hour {key}: [{color}]{status}[/]")

    def task(self, task_id: str, status: str, reason: str | None) -> None:
        color = {"accepted": "green", "rejected": "yellow"}.get(status, "red")
        detail = f" ({reason[:160]})" if reason else ""  # ids and reasons come from repositories: inert text
        self.console.print(Text.assemble("  task ", inert(task_id), ": ", inert(status, color), inert(detail)))


def mine(
    output: Annotated[Path | None, typer.Option("--output", "-o", help="task directories go here")] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="LLM model id")] = None,
    max_tasks: Annotated[int, typer.Option("--max-tasks", "-n", min=1, help="tasks to export")] = 1,
    difficulty: Annotated[str | None, typer.Option("--difficulty", "-d", help="easy, medium, hard")] = None,
    min_stars: Annotated[int | None, typer.Option("--min-stars", min=0, help="minimum repo stars")] = None,
    languages: Annotated[str | None, typer.Option("--languages", help="comma-separated, e.g. python,go")] = None,
    pr_file: Annotated[Path | None, typer.Option("--pr-file", help="processed-PR ledger (JSONL)")] = None,
    once: Annotated[bool, typer.Option("--once", help="stop after --max-tasks instead of following new hours")] = False,
    api_key: Annotated[str | None, typer.Option("--api-key", help="LLM key (else the environment)")] = None,
    max_hours: Annotated[int, typer.Option("--max-hours", min=1, help="hours walked backwards at most")] = 168,
    newest: Annotated[str | None, typer.Option("--newest", help="start at this hour instead of the newest")] = None,
    poll_seconds: Annotated[float, typer.Option("--poll-seconds", min=1, help="wait between checks")] = 300,
    as_json: Annotated[bool, typer.Option("--json", help="print the summary as JSON")] = False,
    submit: Annotated[
        bool, typer.Option("--submit", help="launch the runs through the instance's run coordinator (the daemon)")
    ] = False,
    workspace: Annotated[
        Path | None, typer.Option(help="with --submit: the deployment's workspace file (else SWE_FORGE_WORKSPACE)")
    ] = None,
) -> None:
    """Mine GH Archive hours into validated tasks, newest first, through the Dagster jobs."""
    from swe_forge_dagster.definitions import build_definitions
    from swe_forge_dagster.gharchive.download import ArchiveFetcher
    from swe_forge_dagster.gharchive.hours import InvalidHourError, parse_partition_key
    from swe_forge_dagster.orchestration.instance import open_instance
    from swe_forge_dagster.orchestration.mine import MineOptions, Miner
    from swe_forge_dagster.orchestration.submit import SubmitError, SubmittedRuns, submitter

    if workspace and not submit:
        raise usage_error("--workspace goes with --submit")
    if submit:
        run_side = {
            "--model": model,
            "--min-stars": min_stars,
            "--languages": languages,
            "--output": output,
            "--pr-file": pr_file,
            "--api-key": api_key,
        }
        if given := [flag for flag, value in run_side.items() if value is not None]:
            raise usage_error(
                f"{', '.join(given)} would not reach submitted runs (they read the deployment's "
                "settings): set them where the daemon runs, or mine in-process"
            )
    try:
        settings = _mine_settings(get_settings(), output, model, difficulty, min_stars, languages, pr_file)
        if newest:
            parse_partition_key(newest)
    except (ValueError, InvalidHourError) as exc:
        raise usage_error(str(exc)) from None
    if api_key:
        os.environ[LLM_KEY_ENV] = api_key  # this process only; resources read it by name at run start
    instance = open_instance(settings)
    defs = build_definitions(settings)
    fetcher = ArchiveFetcher(settings.gharchive_url, settings.cache_dir)
    first = dt.datetime.combine(settings.start_date, dt.time(), tzinfo=dt.UTC)
    options = MineOptions(
        max_tasks=max_tasks,
        once=once,
        difficulties=settings.difficulty_list,
        max_hours=max_hours,
        poll_seconds=poll_seconds,
        newest=newest,
    )
    with contextlib.ExitStack() as stack:
        runs = None
        if submit:
            try:
                runs = SubmittedRuns(
                    defs,
                    stack.enter_context(submitter(instance, workspace)),
                    lambda message: err.print(message, style="yellow", markup=False),
                )
            except SubmitError as exc:
                say("error:", "red", exc)
                raise typer.Exit(1) from None
            err.print(
                inert(
                    f"submitting runs through {runs.submitter.workspace_path}; follow them at {settings.ui_url}/runs"
                ),
                soft_wrap=True,
            )
        miner = Miner(
            defs,
            instance,
            settings.lake_dir,
            fetcher.is_published,
            options,
            None if as_json else ConsoleProgress(err),
            first_hour=first,
            runs=runs,
        )
        _walk(miner, settings, options, max_tasks, once, as_json)


def _walk(miner: Miner, settings: Settings, options: MineOptions, max_tasks: int, once: bool, as_json: bool) -> None:
    """Mine back from the newest hour (then follow new ones without --once), print the summary, exit."""
    from swe_forge_dagster.gharchive.download import DownloadError

    tiers = ", ".join(settings.difficulty_list) or "any difficulty"
    err.print(inert(f"mining {max_tasks} task(s) of {tiers} from {settings.gharchive_url} into {settings.output_dir}"))
    interrupted = exhausted = False
    try:
        newest_walked = miner.walk_back(dt.datetime.now(dt.UTC))
        if newest_walked is None:
            err.print(f"[yellow]no published hour in the last {options.probe_hours} hours[/] (try --newest)")
        exhausted = not miner.done()
        if not once and newest_walked is not None:
            err.print("following new hours (Ctrl-C to stop)")
            miner.follow(newest_walked)
    except KeyboardInterrupt:
        interrupted = True
    except DownloadError as exc:
        say("error:", "red", exc)
        raise typer.Exit(1) from None
    refresh_catalog_or_warn(settings.catalog_path, settings.lake_dir)
    summary = _summary(miner, settings, interrupted)
    if as_json:
        out.print_json(json.dumps(summary))
    else:
        _print_summary(summary)
    if miner.done() or (interrupted and not once):
        raise typer.Exit(0)
    raise typer.Exit(1 if miner.report.failed else 3 if exhausted else 0)


def _mine_settings(
    settings: Settings,
    output: Path | None,
    model: str | None,
    difficulty: str | None,
    min_stars: int | None,
    languages: str | None,
    pr_file: Path | None,
) -> Settings:
    update: dict[str, Any] = {}
    if output is not None:
        update["output"] = output
    if model:
        update["model"] = model
    if difficulty is not None:
        update["difficulty"] = parse_tiers(difficulty)
    if min_stars is not None:
        update["min_stars"] = min_stars
    if languages is not None:
        update["languages"] = languages
    if pr_file is not None:
        update["pr_file"] = pr_file
    return settings.model_copy(update=update)


def _summary(miner: Any, settings: Settings, interrupted: bool) -> dict[str, Any]:
    report = miner.report
    by_status: dict[str, int] = {}
    for task in report.tasks:
        by_status[task["status"]] = by_status.get(task["status"], 0) + 1
    return {
        "exported": len(report.exported),
        "max_tasks": miner.options.max_tasks,
        "output": str(settings.output_dir),
        "hours": [
            {"hour": h.key, "status": h.status, "new_tasks": h.new_tasks, "errors": h.errors} for h in report.hours
        ],
        "tasks_by_status": by_status,
        "tasks": [
            {
                "task_id": t["task_id"],
                "status": t["status"],
                "stage": t.get("stage"),
                "reason": t.get("reason"),
                "difficulty": t.get("difficulty"),
                "task_dir": t.get("task_dir"),
            }
            for t in report.tasks
        ],
        "interrupted": interrupted,
    }


def _print_summary(summary: dict[str, Any]) -> None:
    table = Table(title=inert(f"{summary['exported']}/{summary['max_tasks']} task(s) exported to {summary['output']}"))
    for column in ("task", "status", "stage", "reason / directory"):
        table.add_column(column)
    for task in summary["tasks"]:
        detail = task["task_dir"] if task["status"] == "accepted" else (task["reason"] or "")[:100]
        table.add_row(*(inert(cell) for cell in (task["task_id"], task["status"], task["stage"] or "", detail)))
    out.print(table)
    hours = summary["hours"]
    out.print(
        f"hours walked: {len(hours)} ({sum(h['status'] == 'mined' for h in hours)} mined now, "
        f"{sum(h['status'] == 'already mined' for h in hours)} already mined, "
        f"{sum(h['status'] == 'not published' for h in hours)} not published, "
        f"{sum(h['status'] == 'failed' for h in hours)} failed)"
    )
    step = next_step("sql", "SELECT status, stage, reason, count(*) FROM tasks GROUP BY ALL")
    out.print(Text(f"next: {step}"), soft_wrap=True)
