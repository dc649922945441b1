"""The task stages, declared once: patch → environment → tests → validation → quality → export.

Everything that walks or names the stages is derived from `STAGES` (and the constants below):
the work folder's stage order (`tasks.work.STAGES`), `TaskBuilder.run` (which stage takes an LLM
client), the `tasks` view's columns taken from each stage's saved file (`tasks.status`), and the
Dagster stage assets with their names, pools, descriptions and order (`assets.tasks`). Adding a
stage is one `Stage(...)` here plus its own code: a `TaskBuilder` method of the same name (and,
when its file fills a column of the `tasks` view, that column in `tasks.status.TASKS_SCHEMA`).
`tests/test_stage_declaration.py` fails when a stage name is written as a string anywhere else.

No Dagster here: a pool (`common.dagster_names`) and an asset name are plain names, and the domain stays
Dagster-free.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from swe_forge_dagster.common.dagster_names import LLM_API_POOL, TASK_BUILD_POOL


class LLMUse(enum.Enum):
    """Whether a stage is given an LLM client factory: never, when there is one, or always."""

    NONE = "none"
    OPTIONAL = "optional"
    REQUIRED = "required"


@dataclass(frozen=True)
class Stage:
    """One task stage.

    `name` is the work folder's `<name>.json`, the `tasks` view's `stage` and the `TaskBuilder` method;
    `asset` the Dagster asset (op) that runs it, in `pool` (None: no pool); `status_columns` maps a
    column of the `tasks` view to the field of the stage's saved file it shows; `transcript`: the
    stage keeps an agent transcript. `code_version` is its asset's.
    """

    name: str
    asset: str
    llm: LLMUse
    pool: str | None
    description: str
    status_columns: Mapping[str, str] = field(default_factory=dict)
    transcript: bool = False
    code_version: str = "1"

    def __post_init__(self) -> None:
        object.__setattr__(self, "status_columns", MappingProxyType(dict(self.status_columns)))

    @property
    def transcript_file(self) -> str | None:
        """The agent's transcript in the task's work folder, for the stages that run an agent."""
        return f"{self.name}.transcript.jsonl" if self.transcript else None


PATCH = Stage(
    "patch",
    "task_patch",
    LLMUse.OPTIONAL,  # the statement writer, only for a PR without linked issues
    TASK_BUILD_POOL,
    "The PR's change at its merge-base, split into patch and test_patch (both must apply), and its problem\n"
    "statement (the linked issues, else the LLM writer).",
    {"base_commit": "base_commit", "statement_source": "statement_source"},
)
ENVIRONMENT = Stage(
    "environment",
    "task_environment",
    LLMUse.REQUIRED,
    TASK_BUILD_POOL,
    "Install and test commands (the repo's stored recipe, else the environment agent), proven by replay and\n"
    "cached as an image per (repo, recipe).",
    {"recipe_source": "recipe_source", "image": "image"},
    transcript=True,
)
TESTS = Stage(
    "tests",
    "task_tests",
    LLMUse.REQUIRED,
    TASK_BUILD_POOL,
    "The PR's own tests, or for a PR without tests the test agent's (transcript kept per task).",
    {"test_source": "source"},
    transcript=True,
)
VALIDATION = Stage(
    "validation",
    "task_validation",
    LLMUse.NONE,
    TASK_BUILD_POOL,
    "FAIL_TO_PASS / PASS_TO_PASS by execution in Docker: once at base+tests, N times with the fix.",
    {"fail_to_pass": "FAIL_TO_PASS", "pass_to_pass": "PASS_TO_PASS", "validation_seconds": "seconds"},
)
QUALITY = Stage(
    "quality",
    "task_quality",
    LLMUse.REQUIRED,
    LLM_API_POOL,
    "Difficulty and, separately, quality (clear statement, behavioural tests, solvable); low quality rejects.",
    {
        "difficulty": "difficulty",
        "difficulty_score": "difficulty_score",
        "quality_score": "quality_score",
        "quality_passed": "passed",
    },
)
EXPORT = Stage(
    "export",
    "swe_task",
    LLMUse.NONE,
    None,  # no Docker and no LLM: writing a directory needs no slot
    "The task as a SWE-bench instance: an accepted task's exported directory (workspace.yaml, prompt.md, "
    "checks.txt, environment.json, patches/), or, for a rejected one, the stage and reason (check `accepted`).",
    {"task_dir": "task_dir"},
    code_version="3",
)

STAGES: tuple[Stage, ...] = (PATCH, ENVIRONMENT, TESTS, VALIDATION, QUALITY, EXPORT)
"""In order: each stage reads what the stages before it saved. The last one exports the task."""
STAGE_NAMES: tuple[str, ...] = tuple(stage.name for stage in STAGES)
FINAL = STAGES[-1]


def stage_named(name: str) -> Stage:
    """The declared stage called `name`; a ValueError names the declared ones otherwise."""
    for stage in STAGES:
        if stage.name == name:
            return stage
    raise ValueError(f"no task stage {name!r} (the stages: {', '.join(STAGE_NAMES)})")
