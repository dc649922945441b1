"""Re-derive a SWE-bench instance's FAIL_TO_PASS / PASS_TO_PASS by execution, with no environment given.

`swe-forge validate -i instances.jsonl` runs this per instance: the environment is found from the
repository's own manifests (`environments.candidates`: for Python a base image per Python version,
nearest to what the project declares, and its test extras or requirements in a venv; for the other
toolchains their image and the runner adapter the project uses), each candidate built and
proven in turn until one gives a verdict; then the proof of the validation stage (the test patch's
files once at base, N times with the gold patch) gives the lists, which are compared with the
instance's in the instance's own id form (SWE-bench's cut ids, `runners.swebench_ids`). No LLM call.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from docker.errors import ImageNotFound

from swe_forge_dagster.environments.candidates import environment_candidates
from swe_forge_dagster.environments.environment import image_available
from swe_forge_dagster.execution.failures import needs_network
from swe_forge_dagster.execution.manifest import remember
from swe_forge_dagster.execution.patch import SplitPatch, split_diff, split_sections
from swe_forge_dagster.execution.repo_box import fetch_base
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.runners import swebench_ids
from swe_forge_dagster.execution.runtime_record import runtime_record
from swe_forge_dagster.export.swebench import SWEBenchInstance
from swe_forge_dagster.export.task_repo import carried_recipe, carried_tree
from swe_forge_dagster.languages.registry import is_test_path, runner_for
from swe_forge_dagster.tasks.differences import explain_differences, set_aside, unreachable
from swe_forge_dagster.tasks.given_files import files_of_given_ids
from swe_forge_dagster.tasks.prove import TaskBuildError, TaskExecutor, TaskValidation, clip
from swe_forge_dagster.tasks.revalidate import CHANGED, ERROR, INVALID, NOT_JUDGEABLE, VALID, Revalidation
from swe_forge_dagster.tasks.validation import NOT_STARTED


def instance_split(inst: SWEBenchInstance, cache: RepoCache | None = None) -> SplitPatch:
    """The instance's patches as a split: the test files are those its test patch touches that host its given ids
    (`given_files`: the files the dataset's lists were made from; read at the base commit from `cache`)."""
    src, tests = split_diff(inst.patch, is_test_path), split_diff(inst.test_patch or "", is_test_path)
    files = tests.test_files or tests.src_files
    if cache is not None:
        files = files_of_given_ids(files, [*inst.FAIL_TO_PASS, *inst.PASS_TO_PASS], _patched_text(inst, cache))
    return SplitPatch(inst.patch, inst.test_patch or "", src.src_files + src.test_files, files, src.binary_files)


def _patched_text(inst: SWEBenchInstance, cache: RepoCache) -> Callable[[str], str]:
    """A test file's text at the base commit followed by the lines the test patch adds to it."""
    added = {
        section.path: "\n".join(
            line[1:] for line in section.text.split("\n") if line.startswith("+") and not line.startswith("+++ ")
        )
        for section in split_sections(inst.test_patch or "")
    }

    def text_of(path: str) -> str:
        base = cache.show_file(inst.repo, inst.base_commit, path) or b""
        return base.decode("utf-8", "replace") + "\n" + added.get(path, "")

    return text_of


def prove_with_manifests(
    inst: SWEBenchInstance, executor: TaskExecutor, after_runs: int = 3
) -> tuple[TaskValidation | None, str | None, list[str]]:
    """(the first proof that gives a verdict, why none did, the recipes tried as `image: install`).

    When none does, the reason is the best attempt's (an install that worked and tests that ran, over a suite
    that did not start, over an install that failed, over a missing image), named by its image: the last
    candidate's failure is seldom the cause. A proof whose failing FAIL_TO_PASS tests all failed for lack of a
    network host gives a verdict: the environment works, the tests cannot pass here whatever it is."""
    fetch_base(executor.cache, inst.repo, inst.base_commit, carried_tree(inst))
    split = instance_split(inst, executor.cache)
    found = environment_candidates(
        executor.cache,
        inst.repo,
        inst.base_commit,
        split.src_files,
        available=partial(image_available, executor.client),
    )
    carried = carried_recipe(inst)  # read from a task repository we exported: the recipe it was proven with, first
    recipes = [carried, *(r for r in found.recipes if r != carried)] if carried else found.recipes
    if not recipes:
        return None, found.problem, []
    tried: list[str] = []
    best: tuple[int, str] | None = None  # (rank, why it stopped), the first of the highest rank
    for recipe in recipes:
        tried.append(f"{recipe.base_image}: {recipe.install_commands[-1]}")
        try:
            result = executor.prove(inst.repo, inst.base_commit, split, recipe, after_runs=after_runs)
        except ImageNotFound:
            attempt = (0, f"base image {recipe.base_image} is not built (scripts/build-base-image.sh)")
        except TaskBuildError as exc:
            attempt = (1, f"on {recipe.base_image}: {clip(str(exc))}")
        else:
            verdict = result.validation
            started = not (verdict.reason or "").startswith(NOT_STARTED)
            if started and (verdict.fail_to_pass or not verdict.stuck or _offline(inst, result)):
                remember(executor.cache, inst.repo, inst.base_commit, recipe)
                return result, None, tried
            # an old code base on a new Python (no report, or modules that fail to import): the next candidate
            attempt = (3 if started else 2, f"installed on {recipe.base_image}, then {clip(verdict.reason or '')}")
        if best is None or attempt[0] > best[0]:
            best = attempt
    assert best is not None
    more = f" (best of {len(tried)} recipes tried)" if len(tried) > 1 else ""
    return None, best[1] + more, tried


def _offline(inst: SWEBenchInstance, result: TaskValidation) -> bool:
    """Whether every given FAIL_TO_PASS test that is not FAIL_TO_PASS here failed for lack of a network host."""
    runner = runner_for(result.runner)
    derived = set(swebench_ids(runner, result.validation.fail_to_pass))
    network = unreachable(result, runner)
    left = [t for t in inst.FAIL_TO_PASS if t not in derived]
    return bool(left) and all(t in network for t in left)


def revalidate_instance(
    inst: SWEBenchInstance, executor: TaskExecutor, source: str, after_runs: int = 3
) -> Revalidation:
    """Valid when the lists re-derived by execution equal the instance's, id for id (in its id form), once the
    ids that cannot be judged here are set aside (`differences.set_aside`: malformed ids, tests that need the
    network); `not_judgeable` when that leaves no FAIL_TO_PASS."""
    try:
        result, problem, tried = prove_with_manifests(inst, executor, after_runs)
    except Exception as exc:  # the machine, not the task (a Docker or git failure): reported, the scan goes on
        return Revalidation(inst.instance_id, source, ERROR, f"could not run the proof: {type(exc).__name__}: {exc}")
    if result is None:
        if needs_network(problem):  # the build fetches from the internet (matplotlib's freetype): not ours to judge
            why = f"no environment: the install needs a network host the sandbox does not reach: {problem}"
            return Revalidation(inst.instance_id, source, NOT_JUDGEABLE, why, recipes_tried=tried)
        return Revalidation(
            inst.instance_id, source, INVALID, f"no environment from the manifests: {problem}", recipes_tried=tried
        )
    runner = runner_for(result.runner)
    given = {*inst.FAIL_TO_PASS, *inst.PASS_TO_PASS}
    unnamed_flaky = [t for t in result.validation.flaky if runner.grading_id(t) not in given]
    verdict = result.validation.sparing(unnamed_flaky)
    f2p = swebench_ids(runner, verdict.fail_to_pass)
    p2p = [t for t in swebench_ids(runner, verdict.pass_to_pass) if t not in f2p]
    report = Revalidation(
        inst.instance_id,
        source,
        VALID,
        None,
        f2p,
        p2p,
        seconds=result.seconds,
        recipe=f"{result.image} ({tried[-1]})",
        recipes_tried=tried,
    )
    report.runtime = runtime_record(executor.client, result.image)
    report.set_aside = set_aside(result, runner, [*inst.FAIL_TO_PASS, *inst.PASS_TO_PASS])
    given_f2p = [t for t in inst.FAIL_TO_PASS if t not in report.set_aside]
    given_p2p = [t for t in inst.PASS_TO_PASS if t not in report.set_aside]
    report.fail_to_pass_missing = sorted(set(given_f2p) - set(f2p))
    report.fail_to_pass_extra = sorted(set(f2p) - set(given_f2p))
    report.pass_to_pass_missing = sorted(set(given_p2p) - set(p2p))
    report.pass_to_pass_extra = sorted(set(p2p) - set(given_p2p))
    report.missing_fail_to_pass = report.fail_to_pass_missing
    differing = (
        report.fail_to_pass_missing
        + report.fail_to_pass_extra
        + report.pass_to_pass_missing
        + report.pass_to_pass_extra
    )
    report.differences = explain_differences(result, runner, differing, set(given_f2p), set(f2p))
    aside = _aside_note(report.set_aside)
    if inst.FAIL_TO_PASS and not given_f2p:
        report.status = NOT_JUDGEABLE
        report.reason = f"every FAIL_TO_PASS test is set aside on {result.image}: {aside}"
    elif not verdict.accepted:
        report.status, report.reason = INVALID, verdict.reason
    elif differing:
        report.status = CHANGED
        report.reason = (
            f"FAIL_TO_PASS {len(given_f2p)} given / {len(f2p)} now, PASS_TO_PASS {len(given_p2p)} / {len(p2p)}"
        )
        if not report.fail_to_pass_missing and not report.pass_to_pass_missing:
            report.reason += f"; {superset_cause(inst)}"
    if report.set_aside and report.status != NOT_JUDGEABLE:
        report.reason = f"{report.reason + '; ' if report.reason else ''}not judged here: {aside}"
    if unnamed_flaky and verdict.accepted:
        flaky = f"flaky here, in no given list: {', '.join(swebench_ids(runner, unnamed_flaky))}"
        report.reason = f"{report.reason}; {flaky}" if report.reason else flaky
    return report


SUPERSET = (
    "every given test behaves as given; the lists here have more tests than the given ones "
    "(the dataset's lists were made on other releases, or list part of what the test patch fixes)"
)
"""The reason's tail when nothing given is missing, only more tests here: the environment reproduces every verdict
the dataset gives. SWE-bench Lite's flask 2.0 rows were made with Werkzeug 2.3.7 of 2023, whose deprecations fail
128 of flask's tests under its `filterwarnings = error` (127 more PASS_TO_PASS here); SWE-bench Lite's pylint 2.15
rows were made where pylint's `_query_cpu` counted one CPU (cgroup v1's `cpu.shares`, 1024 by Docker's default), so
its `needs_two_cores` tests were skipped there; here (cgroup v2) it counts two (3 more PASS_TO_PASS here)."""


def _aside_note(aside: dict[str, str]) -> str:
    """`N ids: <cause> (first id)` per distinct cause kind, for a one-line reason."""
    kinds: dict[str, list[str]] = {}
    for test_id, cause in aside.items():
        kinds.setdefault(cause.split(" (", 1)[0].split(":", 1)[0], []).append(test_id)
    return "; ".join(f"{len(ids)} {kind} (e.g. {ids[0]!r}: {aside[ids[0]]})" for kind, ids in kinds.items())


def superset_cause(inst: SWEBenchInstance) -> str:
    """`SUPERSET`, and when the row says it was re-based onto another tree (`upstream_base_commit`, as the fixtures
    made from release sdists keep it: Django's, SymPy's), that the extra tests may be the later tree's own."""
    upstream = str((inst.model_extra or {}).get("upstream_base_commit") or "")
    if not upstream or upstream == inst.base_commit:
        return SUPERSET
    return (
        f"{SUPERSET}; the row was re-based from upstream {upstream[:12]} onto {inst.base_commit[:12]}: tests added "
        "between the two are in this tree, and lists made at the upstream commit cannot have them"
    )
