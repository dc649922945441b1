"""`swe-forge ingest`: materialize the hourly assets for hours, in-process and recorded in the instance.

With `--submit` the runs go to the instance's run coordinator instead (the daemon launches them,
e.g. in containers with deploy/'s DockerRunLauncher): their ids are printed on stdout, one per line,
with where to follow them; `--wait` then blocks until they end and reports them like in-process runs.

Exit codes: 0 every hour materialized (with --submit alone: every hour submitted), 1 an hour failed
(or GH Archive is unreachable, or the runs cannot be submitted), 2 bad usage, 130 interrupted (Ctrl-C or
SIGTERM, also while a run waits for a pool slot: that run ends CANCELED; submitted runs go on).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from swe_forge_dagster.cli.common import err, out, say, usage_error
from swe_forge_dagster.common.dagster_names import CANDIDATES_JOB, GHARCHIVE_JOB, HOURLY_PIPELINE_JOB
from swe_forge_dagster.settings import get_settings

if TYPE_CHECKING:
    from swe_forge_dagster.settings import Settings

EXIT_INTERRUPTED = 130
JOBS = {"events": GHARCHIVE_JOB, "enriched": CANDIDATES_JOB, "classified": HOURLY_PIPELINE_JOB}


def ingest(
    hours: Annotated[list[str] | None, typer.Argument(help="hour keys, e.g. 2015-01-01-00:00")] = None,
    start: Annotated[str | None, typer.Option("--from", help="first hour of a range")] = None,
    end: Annotated[str | None, typer.Option("--to", help="last hour of a range (inclusive)")] = None,
    gharchive_url: Annotated[str | None, typer.Option(help="override SWE_FORGE_GHARCHIVE_URL")] = None,
    through: Annotated[
        str,
        typer.Option(
            help="last stage: events (gharchive_pr_events), enriched (+ pr_candidates, enriched_prs: needs "
            "GITHUB_TOKEN), classified (+ classified_prs: needs an LLM key too)"
        ),
    ] = "events",
    submit: Annotated[
        bool, typer.Option("--submit", help="launch through the instance's run coordinator (the daemon) instead")
    ] = False,
    wait: Annotated[bool, typer.Option("--wait", help="with --submit: block until the runs end")] = False,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", min=1, help="with --wait: give up after SECONDS (exit 1, run ids named)"),
    ] = None,
    workspace: Annotated[
        Path | None, typer.Option(help="with --submit: the deployment's workspace file (else SWE_FORGE_WORKSPACE)")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", "-j", help="print the runs as one JSON object on stdout (lines stay on stderr)")
    ] = False,
) -> None:
    """Materialize the hourly assets for hours, in-process and recorded in the instance (or --submit them)."""
    from swe_forge_dagster.definitions import build_definitions
    from swe_forge_dagster.demo.world_home import DemoWorldError
    from swe_forge_dagster.gharchive.download import DownloadError
    from swe_forge_dagster.gharchive.hours import InvalidHourError
    from swe_forge_dagster.orchestration.ingest import IngestUsageError, Submit, ingest_hours
    from swe_forge_dagster.orchestration.launcher import hour_range
    from swe_forge_dagster.orchestration.submit import SubmitError

    keys = list(hours or [])
    try:
        if start or end:
            if not (start and end):
                raise typer.BadParameter("--from and --to go together")
            keys += hour_range(start, end)
        if not keys:
            raise typer.BadParameter("give hour keys or --from/--to")
    except (InvalidHourError, ValueError) as exc:
        raise usage_error(str(exc)) from None
    if (wait or workspace) and not submit:
        raise usage_error("--wait and --workspace go with --submit")
    if timeout is not None and not wait:
        raise usage_error("--timeout goes with --submit --wait")
    if submit and gharchive_url:  # the runs read the deployment's settings (the daemon's environment), not ours
        raise usage_error(
            "--gharchive-url does not reach submitted runs: set SWE_FORGE_GHARCHIVE_URL where the "
            "daemon runs (deploy/start)"
        )
    settings = get_settings()
    if gharchive_url:
        settings = settings.model_copy(update={"gharchive_url": gharchive_url.rstrip("/")})
    if through not in JOBS:
        raise usage_error(f"--through must be one of {', '.join(JOBS)}, not {through!r}")
    try:
        with _demo_world(settings, submit) as (settings, secrets):
            ok = ingest_hours(
                settings,
                build_definitions(settings, *secrets),
                keys,
                err,
                job_name=JOBS[through],
                out=out,
                submit=Submit(workspace, wait, timeout) if submit else None,
                as_json=as_json,
            )
    except (DownloadError, SubmitError) as exc:  # e.g. GH Archive unreachable; no code location to submit to
        say("error:", "red", exc)
        raise typer.Exit(1) from None
    except (IngestUsageError, DemoWorldError) as exc:
        raise usage_error(str(exc)) from None
    except KeyboardInterrupt as exc:
        say("interrupted:", "red", exc or "stopped")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    raise typer.Exit(0 if ok else 1)


@contextmanager
def _demo_world(settings: Settings, submit: bool) -> Iterator[tuple[Settings, tuple[str, list[str]]]]:
    """On a demo's home, the settings and secret names of its world, its twins up while the runs go (in-process
    runs only: a submitted run reads the daemon's settings); elsewhere, `settings` and the usual secret names."""
    from swe_forge_dagster.demo.world_home import DEMO_LLM_KEY_ENV, DEMO_TOKEN_ENV, announced_demo_world

    if submit or settings.demo_world is None:
        yield settings, ("GITHUB_TOKEN", [])
        return
    with announced_demo_world(settings, lambda line: say("demo world:", "yellow", line)) as served:
        assert served is not None  # a demo world is set
        yield served[1], (DEMO_TOKEN_ENV, [DEMO_LLM_KEY_ENV])
