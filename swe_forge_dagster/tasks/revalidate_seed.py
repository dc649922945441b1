"""Re-prove a swe-forge (seed) task directory by execution: do its shell-command checks still hold?

The seed's checks are commands, not test ids, so the proof is by exit code, in the environment the
harness would give the task (`environments.seed`: the image its `install_config` asks for, the
install in a venv at `/tmp/venv`): every FAIL_TO_PASS command must fail at base + test_patch (+ the
seed's test files) and pass with the gold patch in every one of N runs; every PASS_TO_PASS command
must pass in all runs. A task that does not hold is `invalid`, and the reason names the commands and
what they printed, so a broken seed task is reported with its evidence.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from swe_forge_dagster.environments.environment import EnvRecipe
from swe_forge_dagster.environments.seed import seed_install_commands, seed_task_image, seed_test_files
from swe_forge_dagster.execution.repo_box import write_tree_archive
from swe_forge_dagster.execution.runtime_record import runtime_record
from swe_forge_dagster.execution.sandbox import CommandResult
from swe_forge_dagster.export.seed_format import SeedFormatError, SeedTask, read_seed_workspace
from swe_forge_dagster.tasks.prove import TaskBuildError, TaskExecutor, clip
from swe_forge_dagster.tasks.revalidate import ERROR, INVALID, VALID, Revalidation

CHECK_TIMEOUT_S = 900.0
SHOWN = 3  # commands quoted in a reason
TAIL = 400


def revalidate_seed(path: Path, executor: TaskExecutor, default_image: str, after_runs: int = 3) -> Revalidation:
    """The seed task in `path` re-proved (see the module docstring); never raises for a task problem."""
    started = time.perf_counter()
    try:
        seed = read_seed_workspace(path)
    except SeedFormatError as exc:
        return Revalidation(path.name, str(path), ERROR, f"unreadable task directory: {exc}")
    try:
        image, before, after = _runs(seed, executor, default_image, after_runs)
    except (TaskBuildError, ValueError) as exc:
        return Revalidation(seed.id, str(path), INVALID, clip(str(exc)))  # an install or a patch that fails
    except Exception as exc:  # the machine, not the task (Docker, git): reported, the scan goes on
        return Revalidation(seed.id, str(path), ERROR, f"could not run the proof: {type(exc).__name__}: {exc}")
    f2p_count = len(seed.fail_to_pass)
    problems = []
    for index, command in enumerate(seed.fail_to_pass):
        if before[index].ok:
            problems.append(f"FAIL_TO_PASS passes without the fix: {_shown(command, before[index])}")
        elif failing := next((run[index] for run in after if not run[index].ok), None):
            problems.append(f"FAIL_TO_PASS fails with the fix: {_shown(command, failing)}")
    for offset, command in enumerate(seed.pass_to_pass):
        index = f2p_count + offset
        if failing := next((run[index] for run in [before, *after] if not run[index].ok), None):
            problems.append(f"PASS_TO_PASS fails: {_shown(command, failing)}")
    seconds = round(time.perf_counter() - started, 2)
    report = Revalidation(
        seed.id,
        str(path),
        VALID,
        None,
        list(seed.fail_to_pass),
        list(seed.pass_to_pass),
        seconds=seconds,
        recipe=_image(seed, default_image),
        runtime=runtime_record(executor.client, image),
    )
    if problems:
        more = f" (+{len(problems) - SHOWN} more)" if len(problems) > SHOWN else ""
        report.status, report.reason = INVALID, "; ".join(problems[:SHOWN]) + more
    return report


def _runs(
    seed: SeedTask, executor: TaskExecutor, default_image: str, after_runs: int
) -> tuple[str, list[CommandResult], list[list[CommandResult]]]:
    """The environment image, and the checks' results at base + tests (once) and with the gold patch
    (`after_runs` times)."""
    recipe = EnvRecipe(
        seed_install_commands(seed.install_config), seed.install_config.get("test_cmd", ""), _image(seed, default_image)
    )
    executor.cache.ensure(seed.repo)
    executor.cache.fetch(seed.repo, [seed.base_commit])
    image, _cached = executor.environment_image(seed.repo, seed.base_commit, recipe)
    files = seed_test_files(seed.test_files)
    commands = [*seed.fail_to_pass, *seed.pass_to_pass]
    with tempfile.TemporaryDirectory(prefix="swe-forge-seed-") as tmp:
        archive = write_tree_archive(executor.cache, seed.repo, seed.base_commit, Path(tmp) / "tree.tar")
        tests = [("test_patch", seed.test_patch)]
        before = executor.run_commands(image, archive, tests, files, commands, CHECK_TIMEOUT_S)
        after = [
            executor.run_commands(image, archive, [*tests, ("patch", seed.patch)], files, commands, CHECK_TIMEOUT_S)
            for _ in range(after_runs)
        ]
    return image, before, after


def _image(seed: SeedTask, default_image: str) -> str:
    return seed_task_image(seed.install_config, seed.language or "", default_image)


def _shown(command: str, result: CommandResult) -> str:
    first_line = command.strip().splitlines()[-1][:160]
    return f"`{first_line}` (exit {result.exit_code}: {result.output.strip()[-TAIL:]})"
