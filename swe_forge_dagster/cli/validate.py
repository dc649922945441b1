"""`swe-forge validate`: the seed's `swe validate`, re-proving tasks by execution.

`-i` takes task directories (ours and the seed's, found at any depth; the seed's shell-command
checks are re-proved by exit code) or a SWE-bench JSON/JSONL/Parquet file:
its instances' environments are found from the repositories' own manifests (no LLM, no
`--env-spec` needed) and their lists compared in SWE-bench's id form.

Exit codes: 0 every task still valid; 1 some task invalid, changed or unreadable; 2 bad usage.
Which proof each input gets, and the executor, live in `tasks.revalidate_inputs`; this module parses
the options and prints.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from swe_forge_dagster.cli.common import err, input_dir, out, say, usage_error
from swe_forge_dagster.common.terminal import inert, markup_safe
from swe_forge_dagster.settings import get_settings


def validate(
    input_path: Annotated[
        Path | None, typer.Option("--input", "-i", help="task dirs (any depth), a SWE-bench file or task repository")
    ] = None,
    api_key: Annotated[str | None, typer.Option("--api-key", help="also score quality afresh with the LLM")] = None,
    after_runs: Annotated[int, typer.Option("--after-runs", min=3, help="suite runs with the fix")] = 3,
    as_json: Annotated[bool, typer.Option("--json", "-j", help="JSON output")] = False,
    git_url: Annotated[str | None, typer.Option(help="clone URL template [default: SWE_FORGE_GIT_URL]")] = None,
) -> None:
    """Re-prove exported tasks by execution in Docker: do FAIL_TO_PASS / PASS_TO_PASS still hold?"""
    from swe_forge_dagster.execution.runtime_record import describe
    from swe_forge_dagster.export.instance_files import is_task_repo
    from swe_forge_dagster.llm.client import LLMClient
    from swe_forge_dagster.tasks.revalidate import VALID
    from swe_forge_dagster.tasks.revalidate_inputs import (
        DockerUnavailable,
        Revalidator,
        UnreadableInput,
        connect_executor,
        directory_inputs,
        instance_inputs,
    )
    from swe_forge_dagster.wiring.shared_state import call_ledger

    settings = get_settings()
    if input_path is not None and (input_path.is_file() or is_task_repo(input_path)):
        try:
            inputs = instance_inputs(input_path)
        except UnreadableInput as exc:
            raise usage_error(f"--input {input_path}: {exc}") from None
    else:
        inputs = directory_inputs(input_dir(input_path))
    try:
        executor = connect_executor(
            settings.layout.repos,
            git_url or settings.git_url,
            settings.docker_image,
            settings.ca_bundle,
            settings.registry,
        )
    except DockerUnavailable as exc:
        say("error:", "red", f"no Docker engine answers ({exc}); validation runs the tests in containers")
        raise typer.Exit(1) from None
    llm = None
    if api_key:  # a fresh score (no answer cache), recorded in the call ledger like every call
        llm = LLMClient(
            settings.llm_base_url,
            api_key,
            settings.model,
            ledger=call_ledger(settings.layout),
            timeout=settings.llm_timeout,
            forced_choice=settings.llm_tool_choice,
            max_output_tokens=settings.llm_max_output,
        )
    revalidator = Revalidator(executor, inputs.root, settings.docker_image, after_runs, llm)
    root, results = inputs.root, []
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=as_json,
    ) as bar:
        job = bar.add_task("validating", total=len(inputs.jobs))
        for name, item in inputs.jobs:
            bar.update(job, description=markup_safe(f"validating {name}"))
            results.append(revalidator.revalidate(name, item))
            bar.advance(job)
    summary = {
        "input": str(root),
        "total": len(results),
        "by_status": {s: sum(r.status == s for r in results) for s in sorted({r.status for r in results})},
        "results": [{"instance_id": r.task_id, **asdict(r)} for r in results],
    }
    if as_json:
        out.print_json(json.dumps(summary))
    else:
        table = Table(title=inert(f"{len(results)} task(s) under {root}"))
        for column in ("task", "status", "F2P", "P2P", "seconds", "runtime", "reason"):
            table.add_column(column)
        for r in results:  # ids and reasons come from the files and the repositories: shown as plain text
            color = "green" if r.status == VALID else "red"
            table.add_row(
                inert(r.task_id),
                inert(r.status, color),
                str(len(r.fail_to_pass)),
                str(len(r.pass_to_pass)),
                f"{r.seconds:.1f}",
                inert(describe(r.runtime)),
                inert((r.reason or "")[:160]),
            )
        out.print(table)
        for r in results:  # per test id, why the lists differ from the input's, and what was set aside
            for test_id, cause in {**r.differences, **r.set_aside}.items():
                out.print(inert(f"{r.task_id}: {test_id}: {cause}"))
    raise typer.Exit(0 if all(r.status == VALID for r in results) else 1)
