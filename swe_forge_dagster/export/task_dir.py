"""Our task directory: one flat, path-safe folder per task that both we and swe-forge can read.

Why a directory as well as the JSONL/Parquet dataset: a person or an agent harness wants one task
with its patches as files (`git apply patches/test_patch.diff`), its prompt, its runnable checks
and its environment recipe, and the seed project (swe-forge) consumes exactly such folders.

Layout of `<out>/<owner>__<repo>-<pr>/` (written into a temp dir, then renamed into place):

- `workspace.yaml`: the authoritative record. Top level holds swe-forge's `SweTask` keys with
  the types its serde loader requires (so `swe harness` can load it): id, repo, base_commit,
  merge_commit, language (str), difficulty_score (int tier 1-3), created_at (RFC 3339 UTC),
  patch, test_patch, fail_to_pass / pass_to_pass (*shell commands*), install_config and meta
  (string-to-string maps), prompt, quality_score, quality_passed, docker_passed, workspace_path,
  status. Next to them the SWE-bench keys swe-forge does not have: instance_id,
  problem_statement, hints_text, version, environment_setup_commit, FAIL_TO_PASS / PASS_TO_PASS
  (*test ids*, plain YAML lists: YAML is typed, so SWE-bench's JSON-string trick is not needed),
  difficulty, license, original_pr_url. Where the seed's typed key cannot hold our exact value
  (created_at string, float difficulty_score, language=None), the exact value is kept under
  `swebench_values`; unknown instance fields are kept under `swebench_extra`.
- `prompt.md` (`# <task id>\\n\\n<statement>\\n`, as the seed writes it), `checks.txt` (fail-to-pass
  then pass-to-pass commands, one per line, as the seed), `environment.json` (image, install
  commands, test command, runner, test files), `patches/patch.diff`, `patches/test_patch.diff`:
  derived views for people and tools; `read_task_dir` reads workspace.yaml and environment.json.

Limitation: swe-forge's harness never applies `test_patch` (it only copies `meta.test_files`, which
holds file contents we do not have): it loads our tasks, but our checks will not find the PR's tests.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from swe_forge_dagster.export.swebench import SWEBenchInstance, parse_created_at
from swe_forge_dagster.export.yaml_io import yaml_dump, yaml_load
from swe_forge_dagster.languages.registry import runner_of

TEMP_DIR_PREFIX = ".swe-forge-tmp-"
"""Prefix of in-progress and being-replaced task dirs; `find_task_dirs` skips them."""

WORKSPACE_FILE = "workspace.yaml"
ENVIRONMENT_FILE = "environment.json"
SOURCE = "swe-forge-dagster"
DIFFICULTY_TIERS = {"easy": 1, "medium": 2, "hard": 3}

_TASK_ID_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
_SWEBENCH_KEYS = (
    "instance_id",
    "problem_statement",
    "hints_text",
    "version",
    "environment_setup_commit",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "difficulty",
    "license",
    "fail_to_pass_full",
    "pass_to_pass_full",
)


class TaskDirError(ValueError):
    """A task directory that cannot be read back (the message names the file and the problem)."""


# --- the record ---


def check_task_id(task_id: str) -> str:
    """Return `task_id` if it is safe as one path component, else raise ValueError saying why.

    Task ids come from GitHub data; a crafted repo or id must not write outside the output dir.
    """
    if not task_id:
        raise ValueError("unsafe task id: empty")
    if "\x00" in task_id:
        raise ValueError(f"unsafe task id {task_id!r}: contains NUL")
    if "/" in task_id or "\\" in task_id:
        raise ValueError(f"unsafe task id {task_id!r}: contains a path separator")
    if ".." in task_id:
        raise ValueError(f"unsafe task id {task_id!r}: contains '..' (path traversal)")
    if task_id.startswith("."):
        raise ValueError(f"unsafe task id {task_id!r}: starts with a dot (hidden or special name)")
    if len(task_id) > 200 or not _TASK_ID_RE.match(task_id):
        raise ValueError(f"unsafe task id {task_id!r}: only A-Z a-z 0-9 . _ - allowed, at most 200 characters")
    return task_id


def _single_line(commands: list[str], field: str) -> list[str]:
    for command in commands:
        if not command.strip():
            raise ValueError(f"{field}: empty command")
        if "\n" in command or "\r" in command or "\x00" in command:
            raise ValueError(f"{field}: commands must be one line (checks.txt is line-based): {command[:80]!r}")
    return commands


class TaskRecord(BaseModel):
    """A SWE-bench instance plus what it takes to run it: environment recipe and runnable checks.

    Difficulty and quality live on `instance` (difficulty, difficulty_score, quality_score), so
    the dataset row and the task directory cannot disagree; the properties below expose them.
    """

    model_config = ConfigDict(extra="forbid")

    instance: SWEBenchInstance
    image: str = Field(min_length=1)
    install_commands: list[str] = Field(default_factory=list)
    test_command: str
    test_files: list[str] = Field(default_factory=list)
    fail_to_pass_commands: list[str] = Field(min_length=1)
    pass_to_pass_commands: list[str] = Field(default_factory=list)
    original_pr_url: str | None = None
    quality_passed: bool = True
    docker_passed: bool = True
    runner: str = ""  # the adapter reading `test_command`'s results (`execution.runners`); derived when empty

    @field_validator("fail_to_pass_commands", "pass_to_pass_commands")
    @classmethod
    def _commands(cls, value: list[str], info: ValidationInfo) -> list[str]:
        return _single_line(value, info.field_name or "commands")

    @field_validator("test_files")
    @classmethod
    def _test_files(cls, value: list[str]) -> list[str]:
        for path in value:
            parts = Path(path).parts
            if not path or "\x00" in path or Path(path).is_absolute() or ".." in parts:
                raise ValueError(f"test file {path!r} must be a relative path inside the repository")
        return value

    @model_validator(mode="after")
    def _no_null_test_patch(self) -> TaskRecord:
        # The seed's test_patch is a required string; a task has "" rather than null.
        if self.instance.test_patch is None:
            self.instance = self.instance.model_copy(update={"test_patch": ""})
        if not self.runner:
            self.runner = runner_of(self.test_command).name
        return self

    @property
    def task_id(self) -> str:
        return self.instance.instance_id

    @property
    def difficulty(self) -> str | None:
        return self.instance.difficulty

    @property
    def difficulty_score(self) -> float | None:
        return self.instance.difficulty_score

    @property
    def quality_score(self) -> float | None:
        return self.instance.quality_score


# --- writing ---


def difficulty_tier(difficulty: str | None, score: float | None) -> int:
    """swe-forge's integer difficulty_score (1 easy, 2 medium, 3 hard; 0 unknown).

    From the label when there is one, else from the score with the seed's README bands.
    """
    if difficulty in DIFFICULTY_TIERS:
        return DIFFICULTY_TIERS[difficulty]
    if score is None:
        return 0
    return 1 if score < 0.4 else 2 if score < 0.7 else 3


def _diff_stats(patch: str) -> dict[str, str]:
    added = removed = files = 0
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            files += 1
        elif line.startswith("+") and not line.startswith("+++ "):
            added += 1
        elif line.startswith("-") and not line.startswith("--- "):
            removed += 1
    return {"added_lines": str(added), "removed_lines": str(removed), "files_changed": str(files)}


def _rfc3339(created_at: str | None, task_id: str) -> str:
    if created_at is None:
        raise ValueError(f"{task_id}: created_at is required (swe-forge's workspace.yaml needs it)")
    try:
        parsed = parse_created_at(created_at)
    except ValueError as exc:
        raise ValueError(f"{task_id}: created_at {created_at!r} is not an ISO 8601 timestamp") from exc
    return parsed.isoformat().replace("+00:00", "Z")


def workspace_data(task: TaskRecord) -> dict[str, Any]:
    """The workspace.yaml mapping (see the module docstring for the key decisions)."""
    inst = task.instance
    meta = {"source": SOURCE, **_diff_stats(inst.patch)}
    if inst.difficulty is not None:
        meta["difficulty"] = inst.difficulty
    if task.original_pr_url:
        meta["pr_url"] = task.original_pr_url
    install_config = {
        "install": " && ".join(task.install_commands),
        "test_cmd": task.test_command,
        "image": task.image,
        "runner": task.runner,
    }
    data: dict[str, Any] = {
        "id": task.task_id,
        "repo": inst.repo,
        "base_commit": inst.base_commit,
        "merge_commit": "",
        "language": inst.language or "unknown",
        "difficulty_score": difficulty_tier(inst.difficulty, inst.difficulty_score),
        "created_at": _rfc3339(inst.created_at, task.task_id),
        "patch": inst.patch,
        "test_patch": inst.test_patch or "",
        "fail_to_pass": list(task.fail_to_pass_commands),
        "pass_to_pass": list(task.pass_to_pass_commands),
        "install_config": install_config,
        "meta": meta,
        "prompt": inst.problem_statement,
        "quality_score": inst.quality_score,
        "quality_passed": task.quality_passed,
        "docker_passed": task.docker_passed,
        "workspace_path": None,
        "status": "ready",
    }
    dumped = inst.model_dump()
    for key in _SWEBENCH_KEYS:
        data[key] = dumped[key]
    data["original_pr_url"] = task.original_pr_url
    data["swebench_values"] = {
        "created_at": inst.created_at,
        "difficulty_score": inst.difficulty_score,
        "language": inst.language,
    }
    data["swebench_extra"] = dict(inst.model_extra or {})
    return data


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _fill_task_dir(root: Path, task: TaskRecord) -> None:
    inst = task.instance
    _write(root / WORKSPACE_FILE, yaml_dump(workspace_data(task)))
    _write(root / "prompt.md", f"# {task.task_id}\n\n{inst.problem_statement}\n")
    checks = task.fail_to_pass_commands + task.pass_to_pass_commands
    _write(root / "checks.txt", "".join(f"{command}\n" for command in checks))
    environment = {
        "image": task.image,
        "install_commands": task.install_commands,
        "test_command": task.test_command,
        "runner": task.runner,
        "test_files": task.test_files,
    }
    _write(root / ENVIRONMENT_FILE, json.dumps(environment, indent=2, ensure_ascii=False) + "\n")
    _write(root / "patches" / "patch.diff", inst.patch)
    _write(root / "patches" / "test_patch.diff", inst.test_patch or "")


def write_task_dir(out_dir: str | Path, task: TaskRecord) -> Path:
    """Write `<out_dir>/<task id>/` atomically (temp dir, then rename), replacing any old one.

    Readers see the old directory or the new one, never half of one; the only window is the
    instant between moving the old one aside and renaming the new one in (a directory cannot be
    swapped atomically with a plain rename). Assumes one writer per task id at a time.
    """
    name = check_task_id(task.task_id)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    final = out / name
    tmp = Path(tempfile.mkdtemp(prefix=f"{TEMP_DIR_PREFIX}{name}.", dir=out))
    try:
        _fill_task_dir(tmp, task)
        tmp.chmod(0o755)
        old: Path | None = None
        if final.exists() or final.is_symlink():
            old = out / f"{TEMP_DIR_PREFIX}{name}.old-{uuid.uuid4().hex}"
            os.rename(final, old)
        try:
            os.rename(tmp, final)
        except BaseException:
            if old is not None:
                os.rename(old, final)
            raise
        if old is not None:
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink(missing_ok=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return final


# --- reading ---


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskDirError(f"{path}: cannot read: {exc}") from exc


def read_task_dir(path: str | Path) -> TaskRecord:
    """Read a task directory written by `write_task_dir` back into the identical `TaskRecord`."""
    root = Path(path)
    ws_path = root / WORKSPACE_FILE
    try:
        data = yaml_load(_read_text(ws_path))
    except yaml.YAMLError as exc:
        raise TaskDirError(f"{ws_path}: invalid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise TaskDirError(f"{ws_path}: expected a mapping, got {type(data).__name__}")
    env_path = root / ENVIRONMENT_FILE
    try:
        env = json.loads(_read_text(env_path))
    except json.JSONDecodeError as exc:
        raise TaskDirError(f"{env_path}: invalid JSON: {exc}") from exc
    missing = [k for k in ("instance_id", "repo", "base_commit", "patch", "fail_to_pass") if k not in data]
    if missing or "swebench_values" not in data:
        raise TaskDirError(f"{ws_path}: not written by write_task_dir (missing {missing or ['swebench_values']})")
    bad = [key for key in ("swebench_values", "swebench_extra") if not isinstance(data.get(key) or {}, dict)]
    if bad or not isinstance(env, dict):  # a hand edit: this task's error, not a crash of the whole scan
        raise TaskDirError(f"{ws_path}: {bad[0]} is not a mapping" if bad else f"{env_path}: expected a mapping")
    exact = data.get("swebench_values") or {}
    fields: dict[str, Any] = dict(data.get("swebench_extra") or {})
    fields.update({key: data.get(key) for key in _SWEBENCH_KEYS})
    fields.update(
        repo=data["repo"],
        base_commit=data["base_commit"],
        patch=data["patch"],
        test_patch=data.get("test_patch", ""),
        quality_score=data.get("quality_score"),
        created_at=exact.get("created_at"),
        difficulty_score=exact.get("difficulty_score"),
        language=exact.get("language"),
    )
    for name, key in (("patch.diff", "patch"), ("test_patch.diff", "test_patch")):
        diff_path = root / "patches" / name
        if diff_path.exists() and _read_text(diff_path) != (fields[key] or ""):
            raise TaskDirError(f"{diff_path}: differs from {key} in {WORKSPACE_FILE} (edited or half-written)")
    try:
        return TaskRecord(
            instance=SWEBenchInstance.model_validate(fields),
            image=env.get("image", ""),
            install_commands=env.get("install_commands", []),
            test_command=env.get("test_command", ""),
            runner=env.get("runner", ""),
            test_files=env.get("test_files", []),
            fail_to_pass_commands=data.get("fail_to_pass") or [],
            pass_to_pass_commands=data.get("pass_to_pass") or [],
            original_pr_url=data.get("original_pr_url"),
            quality_passed=bool(data.get("quality_passed", True)),
            docker_passed=bool(data.get("docker_passed", True)),
        )
    except (ValueError, TypeError) as exc:
        raise TaskDirError(f"{root}: invalid task: {exc}") from exc
