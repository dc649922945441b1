"""A validated PR becomes a task record: the SWE-bench instance plus what rebuilds its environment.

The problem statement is the linked issue(s) when the PR closes any (a user's own words, no
solution in them); only without one does the LLM write a statement from the PR text, and that
writer refuses statements that name the changed or test files. Difficulty and quality stay
separate fields.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from swe_forge_dagster.environments.environment import EnvRecipe
from swe_forge_dagster.execution.runners import swebench_ids
from swe_forge_dagster.export.swebench import SWEBenchInstance, dataset_timestamp
from swe_forge_dagster.export.task_dir import TaskRecord
from swe_forge_dagster.languages.registry import runner_of
from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.llm.functions import PRFacts, QualityJudgement, write_problem_statement
from swe_forge_dagster.tasks.prove import TaskBuildError, TaskValidation


@dataclass(frozen=True)
class PRContext:
    """What the candidate stages know about a PR (from `enriched_prs` and `classified_prs`)."""

    repo: str
    number: int
    title: str
    body: str
    base_sha: str
    head_sha: str
    created_at: str | None = None
    closing_issues: Sequence[dict] = field(default_factory=tuple)  # {number, title, body}
    language: str | None = None
    license: str | None = None
    difficulty: str | None = None
    difficulty_score: float | None = None
    hints_text: str = ""  # SWE-bench's: the closing issues' comments before the first commit (tasks/hints.py)

    @property
    def instance_id(self) -> str:
        owner, _, name = self.repo.partition("/")
        return f"{owner}__{name}-{self.number}"


def problem_statement(pr: PRContext, test_files: Sequence[str], client: LLMClient | None = None) -> tuple[str, str]:
    """(statement, source): the linked issues' text, else an LLM-written statement."""
    issues = [i for i in pr.closing_issues if (i.get("title") or i.get("body"))]
    if issues:
        text = "\n\n".join(f"{i.get('title') or ''}\n\n{i.get('body') or ''}".strip() for i in issues)
        return text, "issue"
    if client is None:
        raise TaskBuildError("the PR closes no issue and no LLM is configured to write a problem statement")
    facts = PRFacts(
        repo=pr.repo,
        number=pr.number,
        title=pr.title,
        body=pr.body,
        files=[],
        additions=0,
        deletions=0,
        language=pr.language,
    )
    written = write_problem_statement(client, facts, test_files=list(test_files), item=pr.instance_id)
    return f"{written.title}\n\n{written.statement}", "llm"


UNRELEASED_VERSION = "0.0"
"""The version of a repository with no release tag: SWE-bench's field is a string, and its JavaScript log parsers
compare it as a number (`float(test_spec.version) >= 3`)."""


def swebench_version(release: str | None) -> str:
    """SWE-bench's `version`: the package's `major.minor` at the base commit (`3.0.0rc3` -> `3.0`), here
    from the newest release tag reachable from it; `UNRELEASED_VERSION` when the repository has no release tag."""
    match = re.match(r"(\d+)\.(\d+)", release or "")
    return f"{match.group(1)}.{match.group(2)}" if match else UNRELEASED_VERSION


@dataclass(frozen=True)
class Proof:
    """What validation by execution established about a task (the parts of the record it decides)."""

    base_commit: str
    patch: str
    test_patch: str
    test_files: list[str]
    fail_to_pass: list[str]
    pass_to_pass: list[str]
    fail_to_pass_commands: list[str]
    pass_to_pass_commands: list[str]
    environment_setup_commit: str | None = None  # where the environment was installed; the base when unknown


def task_record(
    pr: PRContext,
    result: TaskValidation,
    recipe: EnvRecipe,
    statement: str,
    quality: QualityJudgement | None = None,
) -> TaskRecord:
    """The exportable task of an accepted validation."""
    if not result.validation.accepted:
        raise TaskBuildError(f"not a task: {result.validation.reason}")
    proof = Proof(
        base_commit=result.base_commit,
        patch=result.split.patch,
        test_patch=result.split.test_patch,
        test_files=result.split.test_files,
        fail_to_pass=result.validation.fail_to_pass,
        pass_to_pass=result.validation.pass_to_pass,
        fail_to_pass_commands=result.fail_to_pass_commands,
        pass_to_pass_commands=result.pass_to_pass_commands,
        environment_setup_commit=result.environment_setup_commit,
    )
    return make_task_record(pr, proof, recipe, statement, quality)


def make_task_record(
    pr: PRContext,
    proof: Proof,
    recipe: EnvRecipe,
    statement: str,
    quality: QualityJudgement | None = None,
    release: str | None = None,
) -> TaskRecord:
    """The task directory's record (and the dataset row) from the PR, its proof and its recipe.

    FAIL_TO_PASS / PASS_TO_PASS are in SWE-bench's form (what its log parser makes of our run's log:
    `runners.swebench_ids`), so its grader can match them; the full ids are kept beside them. An id
    that stands for tests of both lists is FAIL_TO_PASS only: SWE-bench reads one status per id, and
    a failing test makes it fail before the fix.
    """
    runner = runner_of(recipe.test_command)
    fail_to_pass = swebench_ids(runner, proof.fail_to_pass)
    pass_to_pass = [test_id for test_id in swebench_ids(runner, proof.pass_to_pass) if test_id not in fail_to_pass]
    instance = SWEBenchInstance(
        instance_id=pr.instance_id,
        repo=pr.repo,
        base_commit=proof.base_commit,
        patch=proof.patch,
        test_patch=proof.test_patch,
        problem_statement=statement,
        hints_text=pr.hints_text,
        created_at=dataset_timestamp(pr.created_at),
        version=swebench_version(release),
        environment_setup_commit=proof.environment_setup_commit or proof.base_commit,
        FAIL_TO_PASS=fail_to_pass,
        PASS_TO_PASS=pass_to_pass,
        fail_to_pass_full=proof.fail_to_pass,
        pass_to_pass_full=proof.pass_to_pass,
        difficulty=quality.difficulty if quality else pr.difficulty,
        difficulty_score=quality.difficulty_score if quality else pr.difficulty_score,
        quality_score=quality.quality_score if quality else None,
        language=pr.language,
        license=pr.license,
    )
    return TaskRecord(
        instance=instance,
        image=recipe.base_image,  # with install_commands, what rebuilds the environment anywhere
        install_commands=list(recipe.install_commands),
        test_command=recipe.test_command,
        runner=runner.name,
        test_files=proof.test_files,
        fail_to_pass_commands=proof.fail_to_pass_commands,
        pass_to_pass_commands=proof.pass_to_pass_commands,
        original_pr_url=f"https://github.com/{pr.repo}/pull/{pr.number}",
        quality_passed=quality.passed if quality else True,
        docker_passed=True,
    )
