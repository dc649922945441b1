"""The LLM judgements the pipeline needs, each one forced tool call with a validated schema.

- `classify_difficulty`: triage from title, body, files and line counts, with the seed's tiers.
- `write_problem_statement`: a statement from PR text when no issue exists, without the solution.
- `score_quality`: difficulty and quality as separate judgements (the seed conflates them).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.llm.prompts import data, system, user

Difficulty = Literal["easy", "medium", "hard"]
# The seed's tiers and score ranges.
TIERS: dict[str, tuple[float, float]] = {"easy": (0.1, 0.35), "medium": (0.4, 0.65), "hard": (0.7, 1.0)}
TIER_TEXT = (
    "easy (score 0.10-0.35): typo fixes, config changes, single-file edits; "
    "medium (0.40-0.65): bug fixes, feature additions, API changes; "
    "hard (0.70-1.00): cross-cutting changes, architectural refactors, new subsystems, protocol changes."
)


def _check_tier(difficulty: str, score: float) -> None:
    low, high = TIERS[difficulty]
    if not low <= score <= high:
        raise ValueError(f"score {score} is outside the {difficulty} range {low}-{high}")


class DifficultyTriage(BaseModel):
    difficulty: Difficulty = Field(description="the tier")
    score: float = Field(ge=0, le=1, description="within the tier's range")
    reasoning: str = Field(min_length=1, max_length=2000, description="one or two sentences")

    @model_validator(mode="after")
    def _score_in_tier(self) -> DifficultyTriage:
        _check_tier(self.difficulty, self.score)
        return self


@dataclass(frozen=True)
class PRFacts:
    """What triage sees of a PR (all of it untrusted text except the numbers)."""

    repo: str
    number: int
    title: str
    body: str
    files: Sequence[str]
    additions: int
    deletions: int
    language: str | None = None

    @property
    def item(self) -> str:
        return f"{self.repo}#{self.number}"


def classify_difficulty(client: LLMClient, pr: PRFacts) -> DifficultyTriage:
    messages = [
        system(
            "You triage merged GitHub pull requests by how hard the change would be for a capable engineer "
            f"to reproduce from a problem description. Tiers: {TIER_TEXT} Answer with the classify_difficulty "
            "function only."
        ),
        user(
            f"repository: {pr.repo}\nlanguage: {pr.language or 'unknown'}\nfiles changed: {len(pr.files)}\n"
            f"added lines: {pr.additions}\ndeleted lines: {pr.deletions}",
            data("pr_title", pr.title, 500),
            data("pr_body", pr.body, 6000),
            data("changed_files", "\n".join(pr.files[:100]), 6000),
        ),
    ]
    return client.structured(
        "triage",
        messages,
        DifficultyTriage,
        tool_name="classify_difficulty",
        tool_description="Record the difficulty tier, score and reasoning.",
        item=pr.item,
    )


class ProblemStatement(BaseModel):
    title: str = Field(min_length=5, max_length=200)
    statement: str = Field(min_length=40, max_length=8000, description="what is wrong or missing, and expected")

    @field_validator("statement")
    @classmethod
    def _no_leaks(cls, value: str, info: ValidationInfo) -> str:
        """The statement must not hand over the solution: no diff, no changed or test file names."""
        if re.search(r"^(diff --git|@@ |\+\+\+ |--- a/)", value, re.MULTILINE):
            raise ValueError("the statement contains diff text; describe the problem, not the patch")
        for name in (info.context or {}).get("forbidden", []):
            if name and name.lower() in value.lower():
                raise ValueError(f"the statement mentions {name!r}, which reveals the solution or its tests")
        return value


def write_problem_statement(
    client: LLMClient, pr: PRFacts, test_files: Sequence[str] = (), item: str | None = None
) -> ProblemStatement:
    """A problem statement from the PR text, for PRs with no linked issue."""
    forbidden = sorted({p for p in [*pr.files, *test_files]} | {PurePosixPath(p).name for p in test_files})
    messages = [
        system(
            "You write the problem statement of a coding task from a merged pull request, as a user would "
            "report it in an issue: the observable problem or missing behaviour and what is expected. Do not "
            "describe the fix, do not name the files that change or the tests, do not include code from the "
            "patch. Answer with the write_problem_statement function only."
        ),
        user(f"repository: {pr.repo}", data("pr_title", pr.title, 500), data("pr_body", pr.body, 8000)),
    ]
    return client.structured(
        "statement",
        messages,
        ProblemStatement,
        tool_name="write_problem_statement",
        tool_description="Record the problem statement.",
        item=item or pr.item,
        context={"forbidden": forbidden},
    )


class QualityJudgement(BaseModel):
    """Difficulty and quality are separate judgements."""

    difficulty: Difficulty
    difficulty_score: float = Field(ge=0, le=1)
    difficulty_reasoning: str = Field(min_length=1, max_length=2000)
    statement_clear: bool = Field(description="the statement is clear and self-contained")
    tests_check_behaviour: bool = Field(description="the tests check behaviour, not implementation details")
    solvable_from_statement: bool = Field(description="a capable engineer could solve it from the statement")
    quality_score: float = Field(ge=0, le=1)
    quality_reasoning: str = Field(min_length=1, max_length=2000)

    @model_validator(mode="after")
    def _score_in_tier(self) -> QualityJudgement:
        _check_tier(self.difficulty, self.difficulty_score)
        return self

    @property
    def passed(self) -> bool:
        checks = self.statement_clear and self.tests_check_behaviour and self.solvable_from_statement
        return checks and self.quality_score >= 0.5


def score_quality(
    client: LLMClient, repo: str, statement: str, patch: str, test_patch: str, item: str | None = None
) -> QualityJudgement:
    messages = [
        system(
            "You review a coding task built from a merged pull request: its problem statement, the reference "
            f"patch and the tests that check it. Judge difficulty ({TIER_TEXT}) and, separately, quality: is "
            "the statement clear and self-contained, do the tests check behaviour rather than implementation, "
            "is the task solvable from the statement alone. Answer with the score_task function only."
        ),
        user(
            f"repository: {repo}",
            data("problem_statement", statement, 8000),
            data("patch", patch, 12000),
            data("test_patch", test_patch, 12000),
        ),
    ]
    return client.structured(
        "quality",
        messages,
        QualityJudgement,
        tool_name="score_task",
        tool_description="Record the difficulty and quality judgement.",
        item=item or repo,
    )
