"""The stages of one task partition, each a plain function over the task's working folder.

patch → environment → tests → validation → quality → export. Each stage reads what the stages
before it saved (`TaskWork`), does one thing, and saves its result. A task that cannot be a task
(patch does not apply, no tests can be written, nothing fails before the fix, low quality) is
*rejected* with the reason, which is an answer and not an error: the stages after it pass the
rejection on, and the `tasks` view shows it. An exception (Docker down, LLM outage) is an error:
the stage fails, is retried alone, and nothing it half-did is read by a later stage.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from swe_forge_dagster.common.store import StorePath
from swe_forge_dagster.environments.environment import EnvRecipe
from swe_forge_dagster.execution.patch import check_applies, patch_adding_files, split_diff
from swe_forge_dagster.execution.sandbox import SandboxConfig
from swe_forge_dagster.export.task_dir import read_task_dir, write_task_dir
from swe_forge_dagster.languages.registry import is_default, is_test_path, toolchain_tags
from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.llm.functions import QualityJudgement, score_quality
from swe_forge_dagster.tasks.agent_tools import AgentFailed
from swe_forge_dagster.tasks.agents import find_environment, toolchain_image
from swe_forge_dagster.tasks.build import PRContext, Proof, make_task_record, problem_statement
from swe_forge_dagster.tasks.environment_record import environment_record, recipe_of, stage_image
from swe_forge_dagster.tasks.lookup import find_pr
from swe_forge_dagster.tasks.manifest_env import buildable_problem, find_manifest_environment
from swe_forge_dagster.tasks.prove import TaskBuildError, TaskExecutor
from swe_forge_dagster.tasks.recipes import RecipeStore
from swe_forge_dagster.tasks.stage_declaration import (
    ENVIRONMENT,
    EXPORT,
    PATCH,
    QUALITY,
    TESTS,
    VALIDATION,
    LLMUse,
    Stage,
    stage_named,
)
from swe_forge_dagster.tasks.test_agent import write_tests
from swe_forge_dagster.tasks.work import TaskWork, split_task_id

ClientFactory = Callable[[], LLMClient]


@dataclass
class StageOutcome:
    """What a stage did: `done`, `rejected` (by this stage) or `passed_on` (an earlier rejection)."""

    status: str
    reason: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass
class TaskBuilder:
    """Everything the stages share; built by the Dagster resource, the CLI and the tests alike."""

    executor: TaskExecutor
    lake_dir: StorePath
    work_root: Path
    output_dir: Path
    recipes: RecipeStore
    base_image: str
    agent_sandbox: SandboxConfig
    after_runs: int = 3
    env_max_turns: int = 30
    test_max_turns: int = 200
    env_max_tokens: int | None = None  # None: no token budget (`agent_tools.Guard`)
    test_max_tokens: int | None = None
    test_timeout: float = 900.0

    def work(self, task_id: str) -> TaskWork:
        return TaskWork(self.work_root, task_id)

    def run(self, stage: str | Stage, task_id: str, llm: ClientFactory | None) -> StageOutcome:
        """One stage by name or declaration (`stage_declaration.STAGES` order), given the LLM client factory
        its declaration asks for: for the Dagster assets and for callers that walk every stage outside Dagster."""
        spec = stage if isinstance(stage, Stage) else stage_named(stage)
        method = getattr(self, spec.name)
        if spec.llm is LLMUse.NONE:
            return method(task_id)
        if spec.llm is LLMUse.REQUIRED and llm is None:
            raise ValueError(f"stage {spec.name} needs an LLM client factory")
        return method(task_id, llm)

    # -- patch ------------------------------------------------------------------------------------
    def patch(self, task_id: str, llm: ClientFactory | None) -> StageOutcome:
        work = self.work(task_id)
        if (passed := work.begin(PATCH.name)) is not None:
            return StageOutcome("passed_on", passed["reason"])
        repo, number = split_task_id(task_id)
        pr, _ = find_pr(self.lake_dir, repo, number)
        cache = self.executor.cache
        cache.fetch(repo, [pr.base_sha, pr.head_sha])
        base = cache.merge_base(repo, pr.base_sha, pr.head_sha)
        split = split_diff(cache.diff(repo, base, pr.head_sha), is_test_path)
        facts = {
            "base_commit": base,
            "src_files": split.src_files,
            "test_files": split.test_files,
            "binary_files": split.binary_files,
        }
        if not split.patch.strip():
            return self._reject(work, PATCH.name, "the PR changes no source files (only tests)", facts)
        with cache.worktree(repo, base) as tree:
            for name, text in (("patch", split.patch), ("test_patch", split.test_patch)):
                if problem := check_applies(tree, text):
                    return self._reject(work, PATCH.name, f"{name} does not apply at {base[:12]}: {problem}", facts)
        if problem := buildable_problem(self.executor, repo, base, split):  # before any LLM is paid for
            return self._reject(work, PATCH.name, problem, facts)
        needs_writer = llm is not None and not pr.closing_issues
        try:
            with llm() if needs_writer else contextlib.nullcontext() as client:
                statement, source = problem_statement(pr, split.test_files + split.src_files, client)
        except TaskBuildError as exc:
            return self._reject(work, PATCH.name, str(exc), facts)
        work.save("pr", _pr_json(pr))
        work.save(
            PATCH.name,
            {
                **facts,
                "patch": split.patch,
                "test_patch": split.test_patch,
                "problem_statement": statement,
                "statement_source": source,
            },
        )
        return StageOutcome("done", facts={**facts, "statement_source": source})

    # -- environment ------------------------------------------------------------------------------
    def environment(self, task_id: str, llm: ClientFactory) -> StageOutcome:
        work = self.work(task_id)
        if (passed := work.begin(ENVIRONMENT.name)) is not None:
            return StageOutcome("passed_on", passed["reason"])
        pr = _pr_from(work.load("pr"))
        base = work.load(PATCH.name)["base_commit"]
        # an agent's recipe is kept for the image it was found on: the configured one, or a toolchain image
        images = (self.base_image, *toolchain_tags())
        stored = next(filter(None, (self.recipes.get(pr.repo, image) for image in images)), None)
        if stored is not None:
            try:
                image, cached = self.executor.environment_image(pr.repo, base, stored)
                return self._save_environment(work, stored, image, cached, "store")
            except TaskBuildError:
                self.recipes.drop(pr.repo)  # no longer installs at this commit: find a new one
        patch = work.load(PATCH.name)
        manifest = find_manifest_environment(
            self.executor, pr.repo, base, patch.get("test_files") or (), patch.get("src_files") or ()
        )
        if manifest.recipe is not None and manifest.image is not None:
            self.recipes.put(pr.repo, manifest.recipe, base, source="manifest")
            return self._save_environment(work, manifest.recipe, manifest.image, manifest.image_cached, "manifest")
        toolchain = None if is_default(manifest.toolchain) else manifest.toolchain
        with tempfile.TemporaryDirectory(prefix="swe-forge-env-") as tmp:
            tree = self.executor.export_tree(pr.repo, base, Path(tmp) / "tree")
            # another toolchain: the agent works on its image, with that language's prompt and runners
            image = toolchain_image(self.executor.client, tree, toolchain) if toolchain else self.base_image
            if image is None:
                return self._reject(
                    work,
                    ENVIRONMENT.name,
                    f"no {toolchain} toolchain image on this Docker engine "
                    f"(scripts/build-toolchain-image.sh {toolchain}); manifest recipes: "
                    f"{manifest.problem}",
                )
            try:
                with llm() as client:
                    recipe = find_environment(
                        client,
                        self.executor.client,
                        tree,
                        base_image=image,
                        toolchain=toolchain,
                        max_turns=self.env_max_turns,
                        max_tokens=self.env_max_tokens,
                        sandbox=self.agent_sandbox,
                        transcript_path=work.path(str(ENVIRONMENT.transcript_file)),
                        item=task_id,
                    )
            except AgentFailed as exc:
                why = f"environment agent: {exc} (before it, manifest recipes: {manifest.problem})"
                return self._reject(work, ENVIRONMENT.name, why)
        try:
            image, cached = self.executor.environment_image(pr.repo, base, recipe)
        except TaskBuildError as exc:
            return self._reject(work, ENVIRONMENT.name, str(exc))
        self.recipes.put(pr.repo, recipe, base, source="agent")
        return self._save_environment(work, recipe, image, cached, "agent", manifest.problem)

    def _save_environment(
        self,
        work: TaskWork,
        recipe: EnvRecipe,
        image: str,
        cached: bool,
        source: str,
        manifest_problem: str | None = None,
    ) -> StageOutcome:
        """Save the environment (`environment_record`: with the image's registry digest, for later stages elsewhere)."""
        data, facts = environment_record(self.executor, recipe, image, cached, source, manifest_problem)
        work.save(ENVIRONMENT.name, data)
        return StageOutcome("done", facts=facts)

    # -- tests ------------------------------------------------------------------------------------
    def tests(self, task_id: str, llm: ClientFactory) -> StageOutcome:
        work = self.work(task_id)
        if (passed := work.begin(TESTS.name)) is not None:
            return StageOutcome("passed_on", passed["reason"])
        patch = work.load(PATCH.name)
        if patch["test_patch"].strip():
            tests = {"test_patch": patch["test_patch"], "test_files": patch["test_files"], "source": "pr"}
            work.save(TESTS.name, tests)
            return StageOutcome("done", facts={"test_source": "pr", "test_files": patch["test_files"]})
        pr, env = _pr_from(work.load("pr")), work.load(ENVIRONMENT.name)
        try:  # this host may not be the one that built the image: pulled by digest, or built here from the recipe
            image = stage_image(self.executor, pr.repo, patch["base_commit"], env)
        except TaskBuildError as exc:
            return self._reject(work, TESTS.name, f"the environment image could not be made on this host: {exc}")
        with tempfile.TemporaryDirectory(prefix="swe-forge-tests-") as tmp:
            fixed = self.executor.export_tree(pr.repo, pr.head_sha, Path(tmp) / "fixed")
            try:
                with llm() as client:
                    files = write_tests(
                        client,
                        self.executor.client,
                        fixed,
                        pr_title=pr.title,
                        pr_body=pr.body,
                        patch=patch["patch"],
                        recipe=recipe_of(env),
                        image=image.tag,
                        max_turns=self.test_max_turns,
                        max_tokens=self.test_max_tokens,
                        sandbox=self.agent_sandbox,
                        transcript_path=work.path(str(TESTS.transcript_file)),
                        item=task_id,
                    )
            except AgentFailed as exc:
                return self._reject(work, TESTS.name, f"test agent: {exc}")
        tests = {"test_patch": patch_adding_files(files), "test_files": sorted(files), "source": "agent"}
        work.save(TESTS.name, {**tests, "image": image.tag, "image_source": image.source})
        return StageOutcome(
            "done", facts={"test_source": "agent", "test_files": sorted(files), "image_source": image.source}
        )

    # -- validation -------------------------------------------------------------------------------
    def validation(self, task_id: str) -> StageOutcome:
        work = self.work(task_id)
        if (passed := work.begin(VALIDATION.name)) is not None:
            return StageOutcome("passed_on", passed["reason"])
        pr, env, tests = _pr_from(work.load("pr")), work.load(ENVIRONMENT.name), work.load(TESTS.name)
        extra = tests["test_patch"] if tests["source"] == "agent" else None
        try:  # the environment stage's image: here, pulled by its digest, or built here from the recipe
            image = stage_image(self.executor, pr.repo, work.load(PATCH.name)["base_commit"], env)
            result = self.executor.validate_pr(
                pr.repo,
                pr.base_sha,
                pr.head_sha,
                recipe_of(env),
                after_runs=self.after_runs,
                timeout=self.test_timeout,
                extra_test_patch=extra,
                image=image,
            )
        except TaskBuildError as exc:
            return self._reject(work, VALIDATION.name, str(exc))
        verdict = result.validation
        runs = [
            {
                "phase": "before",
                "exit_code": result.before.exit_code,
                "seconds": result.before.seconds,
                "error": result.before.error,
            }
        ] + [
            {"phase": f"after {i}", "exit_code": run.exit_code, "seconds": run.seconds, "error": run.error}
            for i, run in enumerate(result.after, 1)
        ]
        data = {
            "accepted": verdict.accepted,
            "reason": verdict.reason,
            "FAIL_TO_PASS": verdict.fail_to_pass,
            "PASS_TO_PASS": verdict.pass_to_pass,
            "flaky": verdict.flaky,
            "broken": verdict.broken,
            "fail_to_pass_commands": result.fail_to_pass_commands,
            "pass_to_pass_commands": result.pass_to_pass_commands,
            "base_commit": result.base_commit,
            "image": result.image,
            "image_source": image.source,
            "runs": runs,
            "seconds": result.seconds,
            "environment_setup_commit": result.environment_setup_commit,
            "before_output_tail": result.before.output[-3000:],
        }
        work.save(VALIDATION.name, data)
        facts = {
            "fail_to_pass": len(verdict.fail_to_pass),
            "pass_to_pass": len(verdict.pass_to_pass),
            "runs": len(runs),
            "seconds": result.seconds,
            "image_source": image.source,
        }
        if not verdict.accepted:
            return self._reject(work, VALIDATION.name, verdict.reason or "rejected", facts)
        return StageOutcome("done", facts=facts)

    # -- quality ----------------------------------------------------------------------------------
    def quality(self, task_id: str, llm: ClientFactory) -> StageOutcome:
        work = self.work(task_id)
        if (passed := work.begin(QUALITY.name)) is not None:
            return StageOutcome("passed_on", passed["reason"])
        pr, patch, tests = _pr_from(work.load("pr")), work.load(PATCH.name), work.load(TESTS.name)
        with llm() as client:
            judgement = score_quality(
                client, pr.repo, patch["problem_statement"], patch["patch"], tests["test_patch"], item=task_id
            )
        work.save(QUALITY.name, {**judgement.model_dump(), "passed": judgement.passed})
        facts = {
            "difficulty": judgement.difficulty,
            "difficulty_score": judgement.difficulty_score,
            "quality_score": judgement.quality_score,
            "quality_passed": judgement.passed,
        }
        if not judgement.passed:
            return self._reject(work, QUALITY.name, f"quality gate: {judgement.quality_reasoning}", facts)
        return StageOutcome("done", facts=facts)

    # -- export -----------------------------------------------------------------------------------
    def export(self, task_id: str) -> StageOutcome:
        work = self.work(task_id)
        passed = work.begin(EXPORT.name)
        target = self.output_dir / task_id
        if passed is not None:
            shutil.rmtree(target, ignore_errors=True)  # a task rejected on a re-run is no longer exported
            return StageOutcome("passed_on", passed["reason"])
        pr, patch, tests = _pr_from(work.load("pr")), work.load(PATCH.name), work.load(TESTS.name)
        env, proven, quality = work.load(ENVIRONMENT.name), work.load(VALIDATION.name), work.load(QUALITY.name)
        proof = Proof(
            base_commit=proven["base_commit"],
            patch=patch["patch"],
            test_patch=tests["test_patch"],
            test_files=tests["test_files"],
            fail_to_pass=proven["FAIL_TO_PASS"],
            pass_to_pass=proven["PASS_TO_PASS"],
            fail_to_pass_commands=proven["fail_to_pass_commands"],
            pass_to_pass_commands=proven["pass_to_pass_commands"],
            environment_setup_commit=proven.get("environment_setup_commit"),
        )
        judgement = QualityJudgement.model_validate({k: v for k, v in quality.items() if k != "passed"})
        release = self.executor.cache.release_version(pr.repo, proven["base_commit"])
        record = make_task_record(pr, proof, recipe_of(env), patch["problem_statement"], judgement, release)
        path = write_task_dir(self.output_dir, record)
        read_task_dir(path)  # what we wrote must read back
        work.save(EXPORT.name, {"task_dir": str(path), "instance_id": record.task_id})
        return StageOutcome("done", facts={"task_dir": str(path)})

    def _reject(self, work: TaskWork, stage: str, reason: str, facts: dict[str, Any] | None = None) -> StageOutcome:
        work.reject(stage, reason)
        return StageOutcome("rejected", reason, facts or {})


def _pr_json(pr: PRContext) -> dict[str, Any]:
    return {**vars(pr), "closing_issues": list(pr.closing_issues)}


def _pr_from(data: dict[str, Any]) -> PRContext:
    return PRContext(**{**data, "closing_issues": tuple(data.get("closing_issues") or ())})
