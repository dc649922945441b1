"""A task's working folder: what each stage proved, kept as small JSON files next to its transcripts.

Why files and not an IO manager: every stage of a task partition is retried alone from the UI, so
its inputs must outlive the run that produced them, be readable by a person (`cat patch.json`) and
survive a crash of a later stage. Each file is written whole and renamed into place. A rejection
is recorded once (`rejected.json`, with the stage that rejected); the stages after it pass it on
without work, and re-running the rejecting stage (or an earlier one) clears it.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from swe_forge_dagster.export.task_dir import check_task_id
from swe_forge_dagster.tasks.stage_declaration import STAGE_NAMES

STAGES = STAGE_NAMES
"""The stages' names in order (`tasks.stage_declaration`): a rejection passes on to the ones after it."""
REJECTED = "rejected"
ERROR = "error"


class StageMissing(RuntimeError):
    """A stage ran before the stage it reads from."""


class TaskWork:
    def __init__(self, root: Path, task_id: str) -> None:
        self.task_id = check_task_id(task_id)
        self.dir = Path(root) / self.task_id

    def path(self, name: str) -> Path:
        return self.dir / name

    def save(self, stage: str, data: dict[str, Any]) -> Path:
        return self._write(f"{stage}.json", data)

    def has(self, stage: str) -> bool:
        return self.path(f"{stage}.json").is_file()

    def load(self, stage: str) -> dict[str, Any]:
        path = self.path(f"{stage}.json")
        try:
            return json.loads(path.read_text())
        except FileNotFoundError:
            raise StageMissing(f"task {self.task_id}: stage '{stage}' has not run ({path} missing)") from None

    def load_optional(self, stage: str) -> dict[str, Any] | None:
        return self.load(stage) if self.has(stage) else None

    # -- rejections and errors ------------------------------------------------------------------
    def rejection(self) -> dict[str, Any] | None:
        return self.load_optional(REJECTED)

    def reject(self, stage: str, reason: str) -> None:
        self._write(f"{REJECTED}.json", {"stage": stage, "reason": reason})

    def begin(self, stage: str) -> dict[str, Any] | None:
        """Start `stage`: the earlier rejection it must pass on, or None after clearing stale ones.

        A rejection by this stage or a later one is stale (its inputs are being recomputed); the
        stage's own output and those after it are removed too, so nothing downstream can read a
        result of the previous attempt.
        """
        rejected = self.rejection()
        if rejected is not None and STAGES.index(rejected["stage"]) < STAGES.index(stage):
            return rejected
        for later in STAGES[STAGES.index(stage) :]:
            self.path(f"{later}.json").unlink(missing_ok=True)
        self.path(f"{REJECTED}.json").unlink(missing_ok=True)
        self.path(f"{ERROR}.json").unlink(missing_ok=True)
        return None

    def fail(self, stage: str, message: str) -> None:
        self._write(f"{ERROR}.json", {"stage": stage, "message": message[:4000]})

    def error(self) -> dict[str, Any] | None:
        return self.load_optional(ERROR)

    def last_stage(self) -> str | None:
        done = [stage for stage in STAGES if self.has(stage)]
        return done[-1] if done else None

    def _write(self, name: str, data: dict[str, Any]) -> Path:
        self.dir.mkdir(parents=True, exist_ok=True)
        final = self.path(name)
        fd, tmp = temp_file(self.dir, name)
        try:
            with os.fdopen(fd, "w") as handle:
                json.dump(data, handle, indent=1, default=str)
            os.replace(tmp, final)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return final


def temp_file(directory: Path, name: str) -> tuple[int, str]:
    """A new temporary file for `name` in `directory`, open for writing: `.<name>.<random>.tmp`, the name the
    store's folder sync never sends (`common.store`), so one left by a crash stays on this machine."""
    return tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)


def split_task_id(task_id: str) -> tuple[str, int]:
    """`owner__name-123` → (`owner/name`, 123). GitHub owners have no `_`, so the first `__` splits."""
    owner, sep, rest = check_task_id(task_id).partition("__")
    name, dash, number = rest.rpartition("-")
    if not (sep and dash and owner and name and number.isdigit()):
        raise ValueError(f"task id {task_id!r} is not of the form owner__repo-123")
    return f"{owner}/{name}", int(number)


def task_id_of(repo: str, number: int) -> str:
    owner, slash, name = repo.partition("/")
    if not slash or not owner or not name or "/" in name:
        raise ValueError(f"repository {repo!r} is not of the form owner/name")
    return check_task_id(f"{owner}__{name}-{int(number)}")
