"""Runs handed to the instance's run coordinator instead of executed here: `--submit` of ingest and mine.

In-process runs (`launcher`) execute in the `swe-forge` process with its settings. A submitted run
is created from the deployment's code location (a workspace file, `SWE_FORGE_WORKSPACE`, e.g.
deploy/workspace.yaml: the gRPC server in the project image) and passed to `instance.submit_run`:
with the QueuedRunCoordinator it waits in the run queue (run and pool limits of the instance),
the daemon dequeues it and the instance's launcher starts it (DockerRunLauncher: one container
per run, settings forwarded from the daemon's environment). The runs are the same as in-process
ones: contiguous hours in one run as a partition range, one run per task partition, tagged
`swe_forge/launched_by=cli-submit` and without the process-identity tags (the submitting process
may exit at once; the daemon watches the run's container instead).

`wait` follows runs in the instance until they end and reads their outcome from the event log
(which the run containers write to the shared Postgres), so `mine --submit` can decide what to
run next exactly as in-process mining does. A run that failed and is retried (run retries: tag
`dagster/will_retry=true`) is followed along its retry chain to the last run. Runs are only
submitted while the daemon heartbeats (it dequeues them), waiting stops with an error naming the
runs when it stops heartbeating while a run still needs it, or after `timeout` seconds.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from swe_forge_dagster.orchestration.launcher import RunOutcome, contiguous_blocks

WORKSPACE_SETTING = "SWE_FORGE_WORKSPACE"
LOCATION_NAME = "swe_forge"
SUBMITTED_BY = {"swe_forge/launched_by": "cli-submit"}
ENDED = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}
QUEUED_HINT_SECONDS = 60.0
DAEMON_CHECK_SECONDS = 30.0
WILL_RETRY, RETRY_RUN_ID, PARENT_RUN_ID = "dagster/will_retry", "dagster/auto_retry_run_id", "dagster/parent_run_id"


class SubmitError(RuntimeError):
    """The runs cannot be submitted (no workspace, the code location does not load, no daemon), or waiting for
    them stopped (the daemon stopped, the timeout passed): the message names the runs."""


def daemon_problem(instance: dg.DagsterInstance) -> str | None:
    """Why the daemon would not dequeue a run (no recent heartbeat of its run coordinator), else None."""
    from dagster._core.run_coordinator import QueuedRunCoordinator
    from dagster._daemon.run_coordinator.queued_run_coordinator_daemon import QueuedRunCoordinatorDaemon

    if not isinstance(instance.run_coordinator, QueuedRunCoordinator):
        return None
    daemon = QueuedRunCoordinatorDaemon.daemon_type()
    status = instance.get_daemon_statuses([daemon]).get(daemon)
    if status is not None and status.healthy:
        return None
    return (
        "the Dagster daemon is not running (no recent heartbeat of its run queue in the instance): "
        "start it (deploy/start)"
    )


@dataclass(frozen=True)
class SubmittedRun:
    run_id: str
    job_name: str
    keys: list[str]  # the hours of the run, or its one task partition

    @property
    def span(self) -> str:
        return self.keys[0] if len(self.keys) == 1 else f"{self.keys[0]}..{self.keys[-1]}"


def workspace_file(given: Path | None = None) -> Path:
    """`given`, else `SWE_FORGE_WORKSPACE`; an error naming the setting when neither is a file."""
    path = given or (Path(os.environ[WORKSPACE_SETTING]) if os.environ.get(WORKSPACE_SETTING) else None)
    if path is None:
        raise SubmitError(
            f"--submit needs the deployment's workspace file: set {WORKSPACE_SETTING} "
            "(deploy/start prints it; e.g. deploy/workspace.yaml) or pass --workspace"
        )
    if not path.is_file():
        raise SubmitError(f"workspace file {path} ({WORKSPACE_SETTING} / --workspace) does not exist")
    return path.resolve()


class RunSubmitter:
    """Creates runs from the code location of a workspace file and submits them to the instance."""

    def __init__(self, instance: dg.DagsterInstance, workspace: Path, location: str = LOCATION_NAME) -> None:
        self.instance = instance
        self.workspace_path = workspace
        self.location_name = location
        self._stack = ExitStack()
        self._request_context = None

    def __enter__(self) -> RunSubmitter:
        from dagster._core.workspace.context import WorkspaceProcessContext
        from dagster._core.workspace.load_target import WorkspaceFileTarget

        target = WorkspaceFileTarget(paths=[str(self.workspace_path)])
        process_context = WorkspaceProcessContext(self.instance, target, code_server_log_level="ERROR")
        self._stack.enter_context(process_context)
        self._request_context = process_context.create_request_context()
        names = self._request_context.code_location_names
        if self.location_name not in names:
            self.close()
            raise SubmitError(
                f"{self.workspace_path} has no code location {self.location_name!r} (it has: "
                f"{', '.join(names) or 'none'})"
            )
        if self._request_context.has_code_location_error(self.location_name):
            error = self._request_context.get_code_location_error(self.location_name)
            self.close()
            message = getattr(error, "message", str(error)).strip().splitlines()
            raise SubmitError(
                f"code location {self.location_name!r} of {self.workspace_path} does not load "
                f"(is its server running? deploy/start): {message[0] if message else error}"
            )
        if problem := daemon_problem(self.instance):
            self.close()
            raise SubmitError(f"{problem}; no run was submitted")
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._stack.close()

    def submit(self, job_name: str, tags: dict[str, str], run_config: dict | None = None) -> str:
        """Create a run of `job_name` with `tags` (and `run_config`) from the code location, submit it; its run id."""
        from dagster._core.definitions.selector import JobSubsetSelector

        assert self._request_context is not None, "use RunSubmitter as a context manager"
        location = self._request_context.get_code_location(self.location_name)
        (repository,) = location.get_repositories().values()
        selector = JobSubsetSelector(
            location_name=location.name, repository_name=repository.name, job_name=job_name, op_selection=None
        )
        remote_job = location.get_job(selector)
        plan = location.get_execution_plan(
            remote_job, run_config or {}, step_keys_to_execute=None, known_state=None, instance=self.instance
        ).execution_plan_snapshot
        run = self.instance.create_run(
            job_name=job_name,
            run_id=None,
            run_config=run_config or {},
            resolved_op_selection=None,
            step_keys_to_execute=plan.step_keys_to_execute,
            op_selection=None,
            status=None,
            root_run_id=None,
            parent_run_id=None,
            tags={**remote_job.tags, **SUBMITTED_BY, **tags},
            job_snapshot=remote_job.job_snapshot,
            execution_plan_snapshot=plan,
            parent_job_snapshot=remote_job.parent_job_snapshot,
            remote_job_origin=remote_job.get_remote_origin(),
            job_code_origin=remote_job.get_python_origin(),
            asset_selection=None,
            asset_check_selection=None,
            asset_graph=repository.asset_graph,
        )
        self.instance.submit_run(run.run_id, self._request_context)
        return run.run_id

    def submit_hours(
        self,
        job_name: str,
        keys: Sequence[str],
        max_per_run: int = 24,
        on_submit: Callable[[SubmittedRun], None] | None = None,
    ) -> list[SubmittedRun]:
        """One run per block of contiguous hours (a partition range, as a multi-run backfill makes);
        `on_submit` hears of each run as soon as it is submitted."""
        runs = []
        for block in contiguous_blocks(keys, max_per_run):
            tags = {"dagster/asset_partition_range_start": block[0], "dagster/asset_partition_range_end": block[-1]}
            runs.append(SubmittedRun(self.submit(job_name, tags), job_name, block))
            if on_submit is not None:
                on_submit(runs[-1])
        return runs

    def submit_partitions(self, job_name: str, keys: Sequence[str], partitions_name: str | None) -> list[SubmittedRun]:
        """One run per partition key of `job_name` (dynamic partitions `partitions_name` added first)."""
        if partitions_name and keys:
            self.instance.add_dynamic_partitions(partitions_name, list(keys))
        return [SubmittedRun(self.submit(job_name, {"dagster/partition": key}), job_name, [key]) for key in keys]


def retry_of(instance: dg.DagsterInstance, record: dg.DagsterRun) -> str | None:
    """The run that retries `record` (run retries), once the daemon created it."""
    if record.tags.get(RETRY_RUN_ID):
        return record.tags[RETRY_RUN_ID]
    children = instance.get_runs(filters=dg.RunsFilter(tags={PARENT_RUN_ID: record.run_id}), limit=1)
    return children[0].run_id if children else None


def wait(
    instance: dg.DagsterInstance,
    runs: Sequence[SubmittedRun],
    notify: Callable[[str], None],
    poll_seconds: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
    timeout: float | None = None,
) -> list[RunOutcome]:
    """Block until every run ended (a retried run: its last retry); their outcomes, from the event log.

    Says once on `notify` when a run is still queued after a minute. Raises SubmitError naming the runs
    when the daemon stops heartbeating while a run waits for it (queued, or a retry not created yet), or
    when `timeout` seconds passed. Ctrl-C raises KeyboardInterrupt here; the runs go on.
    """
    started, hinted, checked = time.monotonic(), False, time.monotonic()
    current = {run.run_id: run.run_id for run in runs}  # submitted run -> the run of its retry chain to follow
    pending = set(current)
    while pending:
        needs_daemon = []
        for first in list(pending):
            record = instance.get_run_by_id(current[first])
            if (
                record is not None
                and record.status == dg.DagsterRunStatus.FAILURE
                and record.tags.get(WILL_RETRY) == "true"
            ):
                retry = retry_of(instance, record)
                if retry is None:
                    needs_daemon.append(current[first])
                    continue
                notify(f"run {current[first][:8]} failed and is retried as run {retry[:8]}")
                current[first] = retry
                record = instance.get_run_by_id(retry)
            if record is None or record.status in ENDED:
                pending.discard(first)
            elif record.status in (dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED):
                needs_daemon.append(record.run_id)
                if (
                    record.status == dg.DagsterRunStatus.QUEUED
                    and not hinted
                    and (time.monotonic() - started > QUEUED_HINT_SECONDS)
                ):
                    notify(
                        f"run {record.run_id[:8]} is still queued after {QUEUED_HINT_SECONDS:.0f}s (run or pool "
                        "limits?). Waiting; Ctrl-C stops waiting, not the runs."
                    )
                    hinted = True
        if not pending:
            break
        if needs_daemon and time.monotonic() - checked > DAEMON_CHECK_SECONDS:
            checked = time.monotonic()
            if problem := daemon_problem(instance):
                raise SubmitError(f"{problem}; runs waiting for it: {', '.join(sorted(needs_daemon))}")
        if timeout is not None and time.monotonic() - started > timeout:
            ids = ", ".join(sorted(current[first] for first in pending))
            raise SubmitError(
                f"--timeout: {len(pending)} run(s) still not ended after {timeout:.0f}s: {ids} "
                "(they go on; follow them in the Dagster UI)"
            )
        sleep(poll_seconds)
    return [outcome(instance, SubmittedRun(current[run.run_id], run.job_name, run.keys)) for run in runs]


def outcome(instance: dg.DagsterInstance, run: SubmittedRun) -> RunOutcome:
    """What a finished run did, from the event log: hours materialized per asset, step errors."""
    record = instance.get_run_by_id(run.run_id)
    by_asset: dict[str, set[str]] = {}
    for entry in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION):
        if entry.dagster_event:
            materialization = entry.dagster_event.event_specific_data.materialization
            by_asset.setdefault(materialization.asset_key.to_user_string(), set()).add(materialization.partition)
    errors = []
    for entry in instance.all_logs(
        run.run_id, of_type={dg.DagsterEventType.STEP_FAILURE, dg.DagsterEventType.RUN_FAILURE}
    ):
        data = entry.dagster_event.event_specific_data if entry.dagster_event else None
        error = getattr(data, "error", None)
        message = getattr(error, "message", None) or (entry.dagster_event.message if entry.dagster_event else None)
        if message:
            errors.append(str(message).strip().splitlines()[0])
    success = record is not None and record.status == dg.DagsterRunStatus.SUCCESS
    materialized = sorted(set().union(*by_asset.values())) if by_asset else []
    return RunOutcome(
        run.run_id,
        list(run.keys),
        success,
        materialized,
        errors,
        {asset: sorted(keys) for asset, keys in by_asset.items()},
    )


class SubmittedRuns:
    """The miner's runs (`mine.Runs`) submitted through `submitter` and waited for."""

    def __init__(self, defs: dg.Definitions, submitter: RunSubmitter, notify: Callable[[str], None]) -> None:
        self.defs, self.submitter, self.notify = defs, submitter, notify

    def hours(self, keys: list[str], job_name: str) -> list[RunOutcome]:
        return wait(self.submitter.instance, self.submitter.submit_hours(job_name, keys), self.notify)

    def partitions(self, job_name: str, keys: list[str]) -> dict[str, bool]:
        partitions = self.defs.resolve_job_def(job_name).partitions_def
        name = partitions.name if isinstance(partitions, dg.DynamicPartitionsDefinition) else None
        runs = self.submitter.submit_partitions(job_name, keys, name)
        return {result.keys[0]: result.success for result in wait(self.submitter.instance, runs, self.notify)}


@contextmanager
def submitter(instance: dg.DagsterInstance, workspace: Path | None = None) -> Iterator[RunSubmitter]:
    """A `RunSubmitter` on `workspace` (else `SWE_FORGE_WORKSPACE`)."""
    with RunSubmitter(instance, workspace_file(workspace)) as opened:
        yield opened
