"""Prove a task by running it: FAIL_TO_PASS and PASS_TO_PASS come from execution, never an LLM.

For one PR: take its change at the merge-base, split it into `patch` and `test_patch`, check
both apply, then in Docker (never on the host) run the tests touched by `test_patch` once at
base+test_patch and N times (3 by default) at base+test_patch+patch. Every run is a fresh
no-network container from the environment image (`environments.environment`), its /repo the base
commit (`execution.repo_box`, the same preparation the harness uses), the suite run and read by
`execution.suite` (the same as the harness's checks). `validation.validate` turns the per-test
outcomes into the lists, or a rejection with its reason.
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import docker

from swe_forge_dagster.environments.environment import EnvironmentBuildError, Environments, EnvRecipe
from swe_forge_dagster.environments.image_source import StageImage, built_source, obtain_image
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.patch import SplitPatch, check_applies, split_diff
from swe_forge_dagster.execution.repo_box import PatchRejected, WorkspaceError, start_repo_box, write_tree_archive
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.runners import Runner
from swe_forge_dagster.execution.sandbox import CommandResult, SandboxConfig
from swe_forge_dagster.execution.sandbox_config import ImageHook
from swe_forge_dagster.execution.suite import MAX_OUTPUT, SuiteRun, run_suite
from swe_forge_dagster.execution.test_user import test_command_script
from swe_forge_dagster.languages.registry import DEFAULT_RUNNER, install_outputs, is_test_path, runner_of
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE
from swe_forge_dagster.tasks.validation import Validation, validate

log = logging.getLogger(__name__)

CLIPPED = 1_500
"""Characters of an error kept in a reason (`clip`)."""


def clip(text: str, limit: int = CLIPPED) -> str:
    """`text` within `limit` characters, its head and its tail: an install error's command comes first and its
    exception last, and the cause is in either (a plain cut dropped the exception)."""
    if len(text) <= limit:
        return text
    head = limit // 4
    return f"{text[:head]} [...] {text[-(limit - head) :]}"


class TaskBuildError(Exception):
    """The task cannot be built (patch does not apply, environment does not install)."""


@dataclass
class TaskValidation:
    repo: str
    base_commit: str
    split: SplitPatch
    validation: Validation
    image: str
    image_cached: bool
    before: SuiteRun
    after: list[SuiteRun]
    fail_to_pass_commands: list[str] = field(default_factory=list)
    pass_to_pass_commands: list[str] = field(default_factory=list)
    seconds: float = 0.0
    environment_setup_commit: str | None = None  # the commit the image's environment was installed from
    runner: str = DEFAULT_RUNNER.name  # the adapter that ran and read the suite (`execution.runners`)


class TaskExecutor:
    """The task builder's access to the execution layer: environments, trees and the proof."""

    def __init__(
        self, client: docker.DockerClient, cache: RepoCache, sandbox: SandboxConfig | None = None, registry: str = ""
    ) -> None:
        """`registry`: where environment images are pulled from and pushed to (`SWE_FORGE_REGISTRY`; "" = none)."""
        self.client = client
        self.cache = cache
        sandbox = sandbox or sandbox_config(image=DEFAULT_BASE_IMAGE, build=True)
        self.environments = Environments(client, cache, sandbox, registry=registry)
        self._recipes: dict[str, tuple[str, str, EnvRecipe]] = {}
        """tag -> (repo, base, recipe) of the environment images this executor made or was handed: what the sandbox
        hook builds again when such an image is neither here nor pullable."""
        # A stage after `task_environment` may run on another machine (a worker host) than the one that built the
        # image: a missing environment image is pulled from the registry (by its digest when known) before its
        # sandbox starts, and built here from its recipe when that fails.
        self.sandbox = sandbox.model_copy(update={"ensure_image": self._ensure_image(sandbox.ensure_image)})

    def _ensure_image(self, first: ImageHook | None) -> ImageHook:
        def ensure(client: docker.DockerClient, image: str) -> object:
            made = first(client, image) if first is not None else None
            if not self.environments.fetch(image) and image in self._recipes:
                repo, base, recipe = self._recipes[image]
                built, reused = self.environment_image(repo, base, recipe)
                why = "the sandbox's image was neither on this engine nor pullable"
                log.warning("%s: %s", image, built_source(why, built, reused))
                if built != image:  # the sandbox's start names the missing image
                    log.warning(
                        "%s: its recipe gives %s on this engine, not the image the sandbox asks for", image, built
                    )
            return made

        return ensure

    def export_tree(self, repo: str, sha: str, into: Path) -> Path:
        """The files of `sha` (no .git) in a host folder, for the agents' containers."""
        return self.environments.export_tree(repo, sha, into)

    def environment_image(self, repo: str, base_sha: str, recipe: EnvRecipe) -> tuple[str, bool]:
        """(tag, reused) of the repo's environment image (see `environments.environment`)."""
        try:
            tag, reused = self.environments.image(repo, base_sha, recipe)
        except EnvironmentBuildError as exc:
            raise TaskBuildError(str(exc)) from exc
        self._recipes[tag] = (repo, base_sha, recipe)
        return tag, reused

    def stage_image(self, repo: str, base_sha: str, recipe: EnvRecipe, tag: str, digest: str | None) -> StageImage:
        """The image a stage after the environment stage runs in: `tag` as that stage saved it, pulled by `digest`
        when it is not on this engine, else made here from `recipe` (`environments.image_source`: its `source` says
        which, and why no pull served)."""
        self._recipes[tag] = (repo, base_sha, recipe)
        return obtain_image(self.environments, tag, digest, lambda: self.environment_image(repo, base_sha, recipe))

    def run_tests(
        self,
        image: str,
        archive: Path,
        patches: list[tuple[str, str]],
        recipe: EnvRecipe,
        test_files: list[str],
        timeout: float,
    ) -> SuiteRun:
        """A fresh no-network container from `image`: the base tree, `patches` applied, the tests run."""
        started = time.perf_counter()
        config = self.sandbox.model_copy(update={"image": image, "network": "none", "workdir": "/repo"})
        try:
            box, _sha = start_repo_box(
                self.client, config, archive, name_hint="suite", patches=patches, kept=install_outputs()
            )
        except PatchRejected as exc:
            raise TaskBuildError(f"in the sandbox, {exc}") from exc
        except WorkspaceError as exc:
            raise TaskBuildError(f"could not prepare the base tree: {exc}") from exc
        with box:
            # Validation runs the suite as the repository's own configuration asks (plugins autoloaded).
            run = run_suite(
                box,
                recipe.test_command,
                test_files,
                timeout,
                runner=runner_of(recipe.test_command),
                plugin_autoload=True,
            )
        run.seconds = round(time.perf_counter() - started, 2)  # the whole run: container, tree, patches, tests
        return with_unlisted(run, runner_of(recipe.test_command))

    def run_commands(
        self,
        image: str,
        archive: Path,
        patches: list[tuple[str, str]],
        files: dict[str, str],
        commands: list[str],
        timeout: float,
    ) -> list[CommandResult]:
        """A fresh no-network container: the base tree, `patches`, `files` written; each command's result.

        Each command runs in /repo in a subshell (its `cd`/`export` do not leak into the next), with a
        timeout that kills its process group: how the seed's shell-command checks are run.
        """
        config = self.sandbox.model_copy(update={"image": image, "network": "none", "workdir": "/repo"})
        try:
            box, _sha = start_repo_box(
                self.client,
                config,
                archive,
                name_hint="checks",
                patches=patches,
                repo_files=files,
                kept=install_outputs(),
            )
        except PatchRejected as exc:
            raise TaskBuildError(f"in the sandbox, {exc}") from exc
        except WorkspaceError as exc:
            raise TaskBuildError(f"could not prepare the base tree: {exc}") from exc
        with box:
            return [
                box.run(test_command_script(command), timeout=timeout, max_output=MAX_OUTPUT) for command in commands
            ]

    # -- the whole proof ------------------------------------------------------------------
    def validate_pr(
        self,
        repo: str,
        base_sha: str,
        head_sha: str,
        recipe: EnvRecipe,
        *,
        after_runs: int = 3,
        timeout: float = 900,
        extra_test_patch: str | None = None,
        image: StageImage | None = None,
    ) -> TaskValidation:
        """The proof of a PR's change (`prove`), in `image` when the caller already has it (`stage_image`), else in
        the recipe's image (`environment_image`)."""
        started = time.perf_counter()
        self.cache.ensure(repo)
        self.cache.fetch(repo, [base_sha, head_sha])
        base = self.cache.merge_base(repo, base_sha, head_sha)
        split = split_diff(self.cache.diff(repo, base, head_sha), is_test_path)
        test_patch = extra_test_patch if extra_test_patch is not None else split.test_patch
        if not split.patch:
            raise TaskBuildError("the PR changes no source files (only tests)")
        if not test_patch:
            raise TaskBuildError("the PR has no tests (the test agent must write them)")
        if extra_test_patch is not None:
            split = SplitPatch(split.patch, test_patch, split.src_files, _patch_files(test_patch), split.binary_files)
        return self.prove(
            repo, base, split, recipe, after_runs=after_runs, timeout=timeout, started=started, image=image
        )

    def prove(
        self,
        repo: str,
        base: str,
        split: SplitPatch,
        recipe: EnvRecipe,
        *,
        after_runs: int = 3,
        timeout: float = 900,
        started: float | None = None,
        image: StageImage | None = None,
    ) -> TaskValidation:
        """Run `split.test_patch`'s tests at `base` (+test_patch) once and with `split.patch` N times.

        Also what `swe-forge validate` re-runs on an exported task: the same proof, from its files.
        """
        started = time.perf_counter() if started is None else started
        self.cache.fetch(repo, [base])
        with tempfile.TemporaryDirectory() as tmp, self.cache.worktree(repo, base) as worktree:
            for name, patch in (("test_patch", split.test_patch), ("patch", split.patch)):
                problem = check_applies(worktree, patch)
                if problem:
                    raise TaskBuildError(f"{name} does not apply at {base[:12]}: {problem}")
            archive = write_tree_archive(self.cache, repo, base, Path(tmp) / "tree.tar")
            tag, cached = (image.tag, image.cached) if image is not None else self.environment_image(repo, base, recipe)
            runner = runner_of(recipe.test_command)
            tests = [f for f in split.test_files if runner.runs(f)] or list(split.test_files)
            with_tests = [("test_patch", split.test_patch)]
            before = self.run_tests(tag, archive, with_tests, recipe, tests, timeout)
            after = [
                self.run_tests(tag, archive, [*with_tests, ("patch", split.patch)], recipe, tests, timeout)
                for _ in range(after_runs)
            ]
        outcomes = [run.outcomes for run in after]
        verdict = validate(before.outcomes, outcomes, no_report_before_fails=not runner.in_process)
        verdict = _with_run_errors(verdict, before, after)
        return TaskValidation(
            repo=repo,
            base_commit=base,
            split=split,
            validation=verdict,
            image=tag,
            image_cached=cached,
            before=before,
            after=after,
            fail_to_pass_commands=[runner.single_test(t, tests) for t in verdict.fail_to_pass],
            pass_to_pass_commands=[runner.single_test(t, tests) for t in verdict.pass_to_pass],
            runner=runner.name,
            seconds=round(time.perf_counter() - started, 2),
            environment_setup_commit=self.environments.built_at(tag) or base,
        )


def _with_run_errors(verdict: Validation, before: SuiteRun, after: list[SuiteRun]) -> Validation:
    """A "did not start" verdict with why each run gave no results (a timeout, no report, a broken one)."""
    if verdict.accepted or not (verdict.reason or "").startswith("test suite did not start"):
        return verdict
    named = [("before", before), *((f"after run {i}", run) for i, run in enumerate(after, 1))]
    why = "; ".join(f"{name}: {run.error}" for name, run in named if run.outcomes is None and run.error)
    return dataclasses.replace(verdict, reason=f"{verdict.reason}: {clip(why)}") if why else verdict


def _patch_files(patch: str) -> list[str]:
    split = split_diff(patch, is_test_path)
    return split.test_files + split.src_files


def with_unlisted(run: SuiteRun, runner: Runner) -> SuiteRun:
    """The run with the passes its console names as unexpected (`Runner.unlisted`: pytest's `XPASS`) read as
    `xpassed`, so that validation lists them nowhere, as SWE-bench's datasets do."""
    if run.outcomes is None or runner.unlisted is None:
        return run
    for test_id in runner.unlisted(run.output):
        if run.outcomes.get(test_id) == "passed":
            run.outcomes[test_id] = "xpassed"
    return run
