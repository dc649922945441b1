"""The sanity run (base + the task's tests, no agent code): its limit, its canaries, and the one retry each allows.

Split from `harness.checks` (which runs and judges checks) because the sanity run is the one place that decides which
canaries a task keeps and how long its verification may take; `harness.run` calls it once per task.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import replace

from swe_forge_dagster.execution.canaries import Planted
from swe_forge_dagster.execution.repo_box import REPO_DIR, put_files
from swe_forge_dagster.execution.sandbox import Sandbox
from swe_forge_dagster.harness.checks import (
    CheckRun,
    read_repo_file,
    run_checks,
    sanity_problems,
    set_aside_unreachable,
)
from swe_forge_dagster.harness.models import HarnessTask

SLOWER_THAN_SANITY = 3.0
"""How much longer than the sanity run the verification run may take before it is stopped: the same tests on the
same image, after a fix that may do more work, on a machine whose load changes between the two."""


def sized_timeout(configured: float, sanity_s: float) -> float:
    """The verification run's limit: the configured one, or `SLOWER_THAN_SANITY` times what the sanity run measured
    when that is longer. A fixed limit is too short for a real test file on 2 cores (Django's admin_scripts tests
    took over 120 s after the gold patch on a loaded machine, and the sanity run had taken nearly as long); sized
    from the measurement, a slow suite gets room while a hung one is still stopped."""
    return max(configured, SLOWER_THAN_SANITY * sanity_s)


def run_sanity(
    box: Sandbox, task: HarnessTask, timeout: float, *, plugin_autoload: bool, canaries: Planted | None
) -> tuple[CheckRun, Planted | None]:
    """The sanity run (base + the task's tests, no agent code) and the canaries that work in it: they must give
    their own outcomes there, and a twin the task's command does not select is left out. When the run with them
    gives no verdict, or calls the task broken, or they do not behave (a `-k` in the command leaves them out; a
    Go or C++ file with them no longer compiles, because a name they drew is declared in a file the task does not
    list or the copied test sat in an `#if`), the run is made again without them: their files as they were, and
    what the first run created in the tree removed. A canary never changes the task's own verdict. A run stopped by
    the configured limit is made once more with `SLOWER_THAN_SANITY` times the room: no agent code runs here, so the
    limit, not the task, stopped it (Django's admin_scripts tests took over 120 s at base beside two other corpus
    runs); one that took nearly the whole of that is not repeated again."""
    originals = {path: read_repo_file(box, path) for path in canaries.files()} if canaries is not None else {}
    before = _untracked(box)
    sanity = run_checks(box, task, timeout, plugin_autoload=plugin_autoload, canaries=canaries, at_base=True)
    if sanity.error is not None and sanity.duration_s >= 0.9 * timeout:
        _restore(box, originals, before)
        timeout *= SLOWER_THAN_SANITY
        sanity = run_checks(box, task, timeout, plugin_autoload=plugin_autoload, canaries=canaries, at_base=True)
    if canaries is None:
        return sanity, None
    if sanity.error is None and sanity.canaries_ok and not _problems_after_set_aside(task, sanity):
        return sanity, canaries.without_twin() if sanity.twin_ok is False else canaries
    if sanity.duration_s >= 0.9 * timeout:
        return sanity, None
    _restore(box, originals, before)
    return run_checks(box, task, timeout, plugin_autoload=plugin_autoload, at_base=True), None


def defences(prepared: Planted | None, kept: Planted | None) -> str:
    """What a verdict was judged with, for its reader: the canaries and whether twins run apart, or why none."""
    if prepared is None:
        return "no canaries: the task's runner plants none where its tests are"
    if kept is None:
        return "no canaries: the sanity run with them gave no verdict, or they did not give their own outcomes there"
    return "canaries, and twins run apart" if kept.apart() is not None else "canaries (no twin run apart)"


def _restore(box: Sandbox, originals: Mapping[str, bytes | None], before: set[str] | None) -> None:
    """The tree as it was before a run: planted files as they were, and what the run created removed."""
    put_files(box, {f"{REPO_DIR}/{path}": data for path, data in originals.items() if data is not None})
    created = [path for path in _untracked(box) - before if path not in originals] if before is not None else []
    created += [path for path, data in originals.items() if data is None]
    if created:
        box.run(f"cd {REPO_DIR} && rm -rf -- {' '.join(shlex.quote(path) for path in created)}", timeout=120)


def _problems_after_set_aside(task: HarnessTask, sanity: CheckRun) -> list[str]:
    """`sanity_problems` of a copy of `sanity` once the checks that cannot be judged here are set aside."""
    copy = replace(sanity, fail_to_pass=list(sanity.fail_to_pass), pass_to_pass=list(sanity.pass_to_pass))
    set_aside_unreachable(task, copy)
    return sanity_problems(copy)


def _untracked(box: Sandbox) -> set[str] | None:
    """The paths git shows as untracked or ignored in the tree (an ignored directory as one path), or None."""
    done = box.run(
        f"git -C {REPO_DIR} -c safe.directory='*' status --porcelain -z --untracked-files=normal --ignored",
        timeout=120,
        max_output=4 << 20,
    )
    if done.exit_code != 0 or done.truncated:  # a partial list could name a file the tests' patch added
        return None
    entries = done.output.split("\0")
    return {entry[3:].rstrip("/") for entry in entries if entry[:3] in ("?? ", "!! ")}
