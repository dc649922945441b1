"""`swe-forge mine`: hours → tasks through the same Dagster jobs the UI and sensors run, in-process.

Walks GH Archive hours from the newest published one backwards: each hour goes through
`hourly_pipeline_job` (skipped when this home already classified it), then each classified PR of
the target difficulty in that hour becomes a task partition and runs `task_job`, until
`max_tasks` tasks are exported. Every run is recorded in the instance, so the UI shows them.
Without `once`, it then stays on and mines each new hour as it is published.

The runs execute in-process (`InProcessRuns`) or, with `swe-forge mine --submit`, go through the
instance's run coordinator and are followed to their end (`submit.SubmittedRuns`): the walk decides
what to run next from the same lake either way.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import dagster as dg

from swe_forge_dagster.candidates.datasets import partition_file
from swe_forge_dagster.common.dagster_names import HOURLY_PIPELINE_JOB, TASK_JOB, TASK_PARTITIONS
from swe_forge_dagster.gharchive.hours import parse_partition_key, partition_key
from swe_forge_dagster.orchestration.launcher import RunOutcome, materialize_hours, run_partitions
from swe_forge_dagster.tasks.lookup import eligible_task_ids
from swe_forge_dagster.tasks.status import read_status
from swe_forge_dagster.triage.pipeline import CLASSIFIED_PRS

HOUR = dt.timedelta(hours=1)


@dataclass
class MineOptions:
    max_tasks: int = 1
    once: bool = True
    difficulties: list[str] = field(default_factory=list)
    max_hours: int = 168  # hours walked backwards before giving up
    probe_hours: int = 48  # how far back from now to look for the newest published hour
    poll_seconds: float = 300.0
    newest: str | None = None  # start the walk here instead of at the newest published hour


@dataclass
class HourResult:
    key: str
    status: str  # mined | already mined | not published | failed
    new_tasks: int = 0
    errors: list[str] = field(default_factory=list)


@dataclass
class MineReport:
    hours: list[HourResult] = field(default_factory=list)
    tasks: list[dict[str, Any]] = field(default_factory=list)

    @property
    def exported(self) -> list[dict[str, Any]]:
        return [t for t in self.tasks if t["status"] == "accepted"]

    @property
    def failed(self) -> bool:
        return any(h.status == "failed" for h in self.hours) or any(t["status"] == "error" for t in self.tasks)


class Progress:
    """What the CLI shows while mining; the default says nothing."""

    def hour(self, key: str, status: str) -> None: ...

    def task(self, task_id: str, status: str, reason: str | None) -> None: ...


class Runs(Protocol):
    """How the miner's runs are executed: in this process, or submitted and waited for."""

    def hours(self, keys: list[str], job_name: str) -> list[RunOutcome]: ...

    def partitions(self, job_name: str, keys: list[str]) -> dict[str, bool]: ...


class InProcessRuns:
    """The runs in this process (`launcher`), the default."""

    def __init__(self, defs: dg.Definitions, instance: dg.DagsterInstance) -> None:
        self.defs, self.instance = defs, instance

    def hours(self, keys: list[str], job_name: str) -> list[RunOutcome]:
        return materialize_hours(self.defs, self.instance, keys, job_name=job_name, log_level="WARNING")

    def partitions(self, job_name: str, keys: list[str]) -> dict[str, bool]:
        return run_partitions(self.defs, self.instance, job_name, keys)


def run_tasks(
    defs: dg.Definitions, instance: dg.DagsterInstance, task_ids: list[str], lake_dir: Any, runs: Runs | None = None
) -> list[dict[str, Any]]:
    """Add the partitions and run `task_job` for each task (in-process by default); the task's `tasks` row after it."""
    (runs or InProcessRuns(defs, instance)).partitions(TASK_JOB, task_ids)
    return [read_status(lake_dir, t) or {"task_id": t, "status": "error", "reason": "no row"} for t in task_ids]


def newest_published(is_published: Callable[[dt.datetime], bool], now: dt.datetime, probe_hours: int) -> str | None:
    hour = now.replace(minute=0, second=0, microsecond=0) - HOUR  # the last complete hour
    for _ in range(probe_hours):
        if is_published(hour):
            return partition_key(hour)
        hour -= HOUR
    return None


class Miner:
    def __init__(
        self,
        defs: dg.Definitions,
        instance: dg.DagsterInstance,
        lake_dir: Any,
        is_published: Callable[[dt.datetime], bool],
        options: MineOptions,
        progress: Progress | None = None,
        first_hour: dt.datetime | None = None,
        runs: Runs | None = None,
    ) -> None:
        self.defs, self.instance, self.lake_dir = defs, instance, lake_dir
        self.runs = runs or InProcessRuns(defs, instance)
        self.is_published, self.options = is_published, options
        self.progress = progress or Progress()
        self.first_hour = first_hour
        self.report = MineReport()

    def done(self) -> bool:
        return len(self.report.exported) >= self.options.max_tasks

    def mine_hour(self, key: str) -> HourResult:
        """One hour: the hourly stages unless already classified here, then its new tasks, until done."""
        if partition_file(self.lake_dir, CLASSIFIED_PRS, key).is_file():
            result = HourResult(key, "already mined")
        elif not self.is_published(parse_partition_key(key)):
            result = HourResult(key, "not published")
        else:
            (outcome,) = self.runs.hours([key], HOURLY_PIPELINE_JOB)
            result = HourResult(key, "mined" if outcome.success else "failed", errors=outcome.errors)
        self.progress.hour(key, result.status)
        if result.status in ("mined", "already mined"):
            existing = set(self.instance.get_dynamic_partitions(TASK_PARTITIONS))
            new, _ = eligible_task_ids(self.lake_dir, self.options.difficulties, existing, 10_000, hours=[key])
            result.new_tasks = len(new)
            for task_id in new:
                if self.done():
                    break
                (row,) = run_tasks(self.defs, self.instance, [task_id], self.lake_dir, self.runs)
                self.report.tasks.append(row)
                self.progress.task(task_id, row["status"], row.get("reason"))
        self.report.hours.append(result)
        return result

    def walk_back(self, now: dt.datetime) -> str | None:
        """Newest published hour backwards until enough tasks; returns the newest hour walked."""
        start = self.options.newest or newest_published(self.is_published, now, self.options.probe_hours)
        if start is None:
            return None
        hour = parse_partition_key(start)
        for _ in range(self.options.max_hours):
            if self.done() or (self.first_hour is not None and hour < self.first_hour):
                break
            self.mine_hour(partition_key(hour))
            hour -= HOUR
        return start

    def follow(
        self,
        newest: str,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC),
    ) -> None:
        """Mine each hour after `newest` once it is published (a late hour is waited for, never skipped)."""
        following = parse_partition_key(newest) + HOUR
        while True:
            if following + HOUR <= clock() and self.is_published(following):
                self.mine_hour(partition_key(following))
                following += HOUR
                continue
            sleep(self.options.poll_seconds)
