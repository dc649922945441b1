"""`swe-forge export`: the seed's `swe export`, flat task directories plus SWE-bench JSONL and Parquet.

Task directories are found at any depth under `--input` (the seed's only look one level down).
Exit codes: 0 success; 1 some directory left out; 2 bad usage (missing input, output inside input).
"""

from __future__ import annotations

import json
import os
import shutil
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from swe_forge_dagster.cli.common import input_dir, out, say, usage_error
from swe_forge_dagster.cli.export_task_repo import export_task_repo
from swe_forge_dagster.common.terminal import inert


class ExportFormat(StrEnum):
    """What `export` writes."""

    SWE_FORGE = "swe-forge"
    SWEBENCH_TASK_REPO = "swebench-task-repo"


def export(
    input_path: Annotated[
        Path | None,
        typer.Option("--input", "-i", help="task directories (any depth), or for a task repository a SWE-bench file"),
    ] = None,
    output: Annotated[Path, typer.Option("--output", "-o", help="export directory")] = Path("exported-swe"),
    as_json: Annotated[bool, typer.Option("--json", "-j", help="JSON output")] = False,
    output_format: Annotated[
        ExportFormat, typer.Option("--format", "-f", help="swe-forge: task directories and the dataset files")
    ] = ExportFormat.SWE_FORGE,
    git_url: Annotated[
        str | None, typer.Option(help="clone URL template, for a task repository's trees [default: SWE_FORGE_GIT_URL]")
    ] = None,
) -> None:
    """Export task directories as flat swe-forge directories plus SWE-bench JSONL and Parquet, or as a SWE-bench 5
    task repository (`--format swebench-task-repo`)."""
    from swe_forge_dagster.export.dataset import export_dataset
    from swe_forge_dagster.export.seed_format import SeedFormatError, find_task_dirs, read_seed_workspace
    from swe_forge_dagster.export.task_dir import TaskDirError, check_task_id, read_task_dir, write_task_dir

    target = output.expanduser().resolve()
    if output_format is ExportFormat.SWEBENCH_TASK_REPO and input_path is not None and input_path.is_file():
        export_task_repo(input_path.expanduser().resolve(), target, git_url, as_json)  # a SWE-bench file
    root = input_dir(input_path)
    if target == root or root in target.parents:
        raise usage_error(f"the output {target} must not be inside the input {root}")
    if output_format is ExportFormat.SWEBENCH_TASK_REPO:
        export_task_repo(root, target, git_url, as_json)
    directories: list[str] = []
    seed_copies: set[str] = set()
    skipped: dict[str, str] = {}
    for path in find_task_dirs(root):
        try:
            directories.append(str(write_task_dir(target, read_task_dir(path))))
            continue
        except (TaskDirError, ValueError) as exc:
            problem = str(exc)
        try:  # the seed's own format: copied as is, under a flat, path-safe name
            seed = read_seed_workspace(path)
            name = check_task_id(seed.id.replace("/", "__"))
            shutil.rmtree(target / name, ignore_errors=True)  # a re-export replaces, never merges
            shutil.copytree(path, target / name, symlinks=True)  # links stay links: no host file is copied in
            directories.append(str(target / name))
            seed_copies.add(str(target / name))
        except (SeedFormatError, ValueError, OSError) as exc:
            skipped[str(path)] = f"{problem}; not a seed workspace either: {exc}"
    report = export_dataset(target, target)
    # Seed workspaces are exported as directories only: they carry no SWE-bench test ids for the dataset.
    skipped.update({k: v for k, v in report.skipped.items() if k not in seed_copies})
    summary: dict[str, Any] = {
        "input": str(root),
        "output": str(target),
        "directories": len(directories),
        "instances": len(report.instances),
        "jsonl": str(report.jsonl),
        "parquet": str(report.parquet),
        "skipped": skipped,
    }
    if as_json:
        out.print_json(json.dumps(summary))
    else:
        out.print(inert(f"{len(directories)} task directories → {target}"))
        out.print(inert(f"{len(report.instances)} SWE-bench instances → {report.jsonl.name}, {report.parquet.name}"))
        for path, why in skipped.items():  # paths and reasons quote the files: inert text
            say("left out", "yellow", f"{os.path.relpath(path, root)}: {why}")
    raise typer.Exit(0 if not skipped else 1)
