"""One task, end to end: environment, sanity check, agent, diff, verification, status.

    environment image (built once per repo+recipe, cached by tag)
    ├── sanity container:  base + test_patch           -> FAIL_TO_PASS fail, PASS_TO_PASS pass?
    ├── agent container:   base minus the task's tests -> the agent runs -> its diff
    ├── verify container:  base + test_patch + diff (protected paths reset) -> every check passes?
    ├── twin container:    the same, with the twins in place of the FAIL_TO_PASS tests -> every twin fails?
    └── reference container (only when a twin passed): the twins with the gold patch -> does it pass one too?

The containers (the twin one where the runner's twins run apart: `harness.verify`) are started together, each
already prepared (base commit, test_patch and the prompt in place): none depends on another's result, and container
starts are most of the harness's own overhead. Each is fresh, separate and used for exactly one purpose; the
verification and twin containers never see anything of the agent's but its diff, whose changes to protected paths
(`protection.apply_agent_diff`) are reset after it applies.
Every failure becomes a status with a reason, never an exception out of `evaluate`: a broken
input, a missing repo or image, or a dead Docker engine is a `setup_error` for that task only.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import docker
from docker.errors import DockerException, ImageNotFound

from swe_forge_dagster.common.agent_kind import AgentKind
from swe_forge_dagster.environments.environment import Environments
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.ownership import KEEP_LABEL
from swe_forge_dagster.execution.repo_box import (
    PatchRejected,
    WorkspaceError,
    fetch_base,
    start_repo_box,
    write_tree_archive,
)
from swe_forge_dagster.execution.repo_cache import RepoCache, RepoCacheError
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxConfig, SandboxError
from swe_forge_dagster.harness.agent import AGENT_DIR, AgentRun, agent_environment, prompt_files, run_agent
from swe_forge_dagster.harness.baseline import read_baseline
from swe_forge_dagster.harness.checks import CheckRun, prepare_canaries, sanity_problems, set_aside_unreachable
from swe_forge_dagster.harness.cleanup import harness_labels, keep, remove_stale
from swe_forge_dagster.harness.inputs import checked
from swe_forge_dagster.harness.models import HarnessConfig, HarnessTask, Status, TaskResult
from swe_forge_dagster.harness.outcome import HarnessOutcome
from swe_forge_dagster.harness.protection import ConfigChanged, filter_diff
from swe_forge_dagster.harness.review import merged, review_notes
from swe_forge_dagster.harness.sanity import defences, run_sanity, sized_timeout
from swe_forge_dagster.harness.task_environment import task_environment
from swe_forge_dagster.harness.verify import twins_run_apart, verify
from swe_forge_dagster.languages.registry import install_outputs

log = logging.getLogger(__name__)
StageHook = Callable[[str], None]
AgentStep = Callable[[Sandbox, HarnessTask, str], AgentRun]
"""The agent's turn in its prepared container (box, task, base sha) -> its run and diff: `run_agent` unless given
(the gym's interactive episodes plug in here, so they are set up and graded by this same flow)."""


class Harness:
    """Evaluates tasks with one configuration; thread-safe, so a pool shares one instance.

    Open it once per run (it connects to Docker and removes stale containers of crashed runs),
    call `evaluate` per task, then `close()` (it waits for background container removal).
    """

    def __init__(
        self, config: HarnessConfig, client: docker.DockerClient | None = None, cache: RepoCache | None = None
    ) -> None:
        self.config = config
        self.cache = cache or RepoCache(config.repo_cache_dir, config.git_url)
        self.client: docker.DockerClient | None = client
        self.docker_error: str | None = None
        if client is None:
            try:
                self.client = docker.from_env(max_pool_size=max(10, 4 * config.parallel))
                self.client.ping()
            except DockerException as exc:
                self.client = None
                where = os.environ.get("DOCKER_HOST") or "the default socket"
                self.docker_error = f"the Docker engine at {where} is not reachable: {exc}"
        self.forwarded = {name: os.environ[name] for name in config.agent_env if name in os.environ}
        self._reaper = ThreadPoolExecutor(max_workers=2, thread_name_prefix="harness-reaper")
        self.removed_stale: list[str] = []
        self._live: set[Sandbox] = set()
        self._live_guard = threading.Lock()
        self.aborted = False
        if self.client is not None:
            self.removed_stale = remove_stale(self.client)
        sandbox = sandbox_config(
            config.sandbox,
            build=True,
            network=config.build_network,
            labels=harness_labels(config.run_id, "environment", "build"),
        )
        self.environments = (
            Environments(self.client, self.cache, sandbox, registry=config.registry)
            if self.client is not None
            else None
        )

    def __enter__(self) -> Harness:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._reaper.shutdown(wait=True)

    def abort(self) -> None:
        """Remove every container of the tasks still running (their evaluations then fail fast)."""
        with self._live_guard:
            self.aborted = True
            live, self._live = list(self._live), set()
        for box in live:
            box.close()

    # -- one task ---------------------------------------------------------------------------------

    def evaluate(
        self, task: HarnessTask, on_stage: StageHook | None = None, agent: AgentStep | None = None
    ) -> TaskResult:
        """The task's result; never raises for a task problem (see the module docstring)."""
        started = time.perf_counter()
        result = TaskResult(task_id=task.task_id, repo=task.repo, status=Status.SETUP_ERROR)
        try:
            self._evaluate(task, result, on_stage or (lambda _stage: None), agent)
        except HarnessOutcome as outcome:
            result.status, result.reason = outcome.status, outcome.reason
        except Exception as exc:  # a harness bug or an engine failure: this task's setup_error, not a crash
            if self.aborted:
                result.status, result.reason = Status.SETUP_ERROR, "the run was interrupted"
            else:
                log.exception("evaluating %s failed", task.task_id)
                result.status, result.reason = Status.SETUP_ERROR, f"harness failure: {type(exc).__name__}: {exc}"
        result.total_duration_secs = round(time.perf_counter() - started, 3)
        result.finished_at = dt.datetime.now(dt.UTC)
        return result

    def _evaluate(self, task: HarnessTask, result: TaskResult, on_stage: StageHook, agent: AgentStep | None) -> None:
        setup = Status.SETUP_ERROR
        try:
            checked(task)
        except ValueError as exc:
            raise HarnessOutcome(setup, f"invalid task: {exc}") from exc
        if self.client is None or self.environments is None:
            raise HarnessOutcome(setup, self.docker_error or "no Docker client")
        on_stage("environment")
        try:
            fetch_base(self.cache, task.repo, task.base_commit, task.carried)
        except RepoCacheError as exc:
            raise HarnessOutcome(
                setup, f"repository {task.repo} is not available at {task.base_commit[:12]}: {exc}"
            ) from exc
        if not task.fail_to_pass:
            raise HarnessOutcome(
                Status.SANITY_FAIL, "the task has no FAIL_TO_PASS checks: nothing could show it was solved"
            )
        result.image, test_command = task_environment(self.environments, self.client, self.cache, self.config, task)
        task = task.model_copy(update={"test_command": test_command})
        # the repository's archive is only needed to start the boxes: gone before the (maybe long) agent turn
        with tempfile.TemporaryDirectory(prefix="swe-forge-harness-") as tmp:
            archive = write_tree_archive(self.cache, task.repo, task.base_commit, Path(tmp) / "tree.tar")
            boxes = self._start_boxes(task, result.image, archive)
        try:
            self._flow(task, result, boxes, on_stage, agent)
        finally:
            for box, _sha in boxes.values():
                self._dispose(box, result)

    def _flow(
        self,
        task: HarnessTask,
        result: TaskResult,
        boxes: dict[str, tuple[Sandbox, str]],
        on_stage: StageHook,
        agent: AgentStep | None,
    ) -> None:
        config = self.config
        sanity_box, _ = boxes["sanity"]
        on_stage("sanity")
        prepared = prepare_canaries(sanity_box, task)
        sanity, canaries = run_sanity(  # the canaries must work where no agent code runs
            sanity_box, task, config.test_timeout, plugin_autoload=config.plugin_autoload, canaries=prepared
        )
        result.defences = defences(prepared, canaries)
        baseline = read_baseline(sanity_box, task, sanity, config.agent)
        result.test_duration_secs = round(sanity.duration_s, 3)
        self._dispose(boxes.pop("sanity")[0], result)
        task, result.unjudged = set_aside_unreachable(task, sanity)
        problems = sanity_problems(sanity)
        if problems:
            result.fail_to_pass, result.pass_to_pass = sanity.fail_to_pass, sanity.pass_to_pass
            raise HarnessOutcome(Status.SANITY_FAIL, "; ".join(problems))
        result.sanity_check = True

        on_stage("agent")
        agent_box, base_sha = boxes["agent"]
        try:
            run = agent(agent_box, task, base_sha) if agent else run_agent(agent_box, task, config, base_sha)
        except WorkspaceError as exc:
            raise HarnessOutcome(Status.AGENT_ERROR, f"no usable diff: {exc}") from exc
        self._dispose(boxes.pop("agent")[0], result)
        result.agent_exit_code, result.agent_output = run.exit_code, run.output
        result.agent_duration_secs = run.duration_s
        if run.failure:
            raise HarnessOutcome(Status.AGENT_ERROR, run.failure)
        try:
            trusted = config.agent is AgentKind.ORACLE  # the gold patch applies whole; protection is for agents' diffs
            diff, result.dropped_paths = (
                (run.diff, []) if trusted else filter_diff(run.diff, task.protected_files, task.fix_files)
            )
        except ValueError as exc:
            raise HarnessOutcome(Status.AGENT_ERROR, f"the agent's diff is not a git diff: {exc}") from exc
        result.model_patch = diff
        result.review = [] if trusted else review_notes(diff)
        if not diff.strip():
            result.fail_to_pass, result.pass_to_pass = sanity.fail_to_pass, sanity.pass_to_pass
            paths = ", ".join(result.dropped_paths)
            what = (
                "only changed protected paths (tests, the runner's configuration, install outputs), which are not "
                f"applied: {paths}"
            )
            raise HarnessOutcome(Status.UNRESOLVED, f"the agent {what if result.dropped_paths else 'changed nothing'}")

        on_stage("verify")
        try:
            verified = verify(
                boxes["verify"][0],
                boxes["twin"][0] if "twin" in boxes else None,
                task,
                diff,
                agent=config.agent,
                plugin_autoload=config.plugin_autoload,
                timeout=sized_timeout(config.test_timeout, sanity.duration_s),
                canaries=canaries,
                baseline=baseline,
                reference_box=lambda: self._reference_box(task, result),
            )
        except PatchRejected as exc:
            raise HarnessOutcome(Status.AGENT_ERROR, f"{exc} (at base)") from exc
        except ConfigChanged as exc:
            raise HarnessOutcome(Status.UNRESOLVED, str(exc)) from exc
        except (DockerException, SandboxError, WorkspaceError) as exc:
            raise HarnessOutcome(Status.TEST_ERROR, f"the verification container failed: {exc}") from exc
        final = verified.checks
        result.dropped_paths += [path for path in verified.reset if path not in result.dropped_paths]
        result.review = merged(result.review, verified.review)
        result.test_duration_secs = round(result.test_duration_secs + final.duration_s, 3)
        result.fail_to_pass, result.pass_to_pass = final.fail_to_pass, final.pass_to_pass
        if final.tampered is not None:
            raise HarnessOutcome(Status.UNRESOLVED, f"tampered test results: {final.tampered}")
        if final.error is not None and config.agent is AgentKind.ORACLE:  # the gold patch broke it: the task's fault
            raise HarnessOutcome(Status.TEST_ERROR, f"the checks give no verdict after the gold patch: {final.error}")
        if final.error is not None:  # the sanity run gave a verdict on the same image: the diff broke the run
            raise HarnessOutcome(
                Status.UNRESOLVED,
                f"the checks give no verdict after the agent's diff (they did before it): {final.error}",
            )
        if not final.all_pass:
            raise HarnessOutcome(Status.UNRESOLVED, _unresolved_reason(final))
        result.status = Status.RESOLVED
        result.reason = f"resolved; not judged here: {'; '.join(result.unjudged)}" if result.unjudged else None

    # -- environment and containers ---------------------------------------------------------------

    def _settings(self, task: HarnessTask, image: str, role: str, **more: object) -> SandboxConfig:
        """A container of the task's, labelled with its role (kept when asked)."""
        extra = {KEEP_LABEL: "1"} if self.config.keep_containers else {}
        labels = {**harness_labels(self.config.run_id, task.safe_id, role), **extra}
        return sandbox_config(self.config.sandbox, image=image, workdir="/repo", labels=labels, **more)

    @contextlib.contextmanager
    def _reference_box(self, task: HarnessTask, result: TaskResult) -> Iterator[Sandbox]:
        """A container prepared as the verify one (base + test_patch, no network), for the gold patch's run of the
        twins (`harness.verify`): started only when a twin passed, so honest runs never pay for it."""
        assert self.client is not None
        with tempfile.TemporaryDirectory(prefix="swe-forge-harness-") as tmp:
            archive = write_tree_archive(self.cache, task.repo, task.base_commit, Path(tmp) / "tree.tar")
            box, _ = start_repo_box(
                self.client,
                self._settings(task, result.image, "reference", network="none"),
                archive,
                name_hint=f"{task.safe_id}-reference",
                on_start=self._register,
                kept=install_outputs(),
                patches=[("test_patch", task.test_patch)],
                repo_files=task.extra_test_files,
            )
        try:
            yield box
        finally:
            self._dispose(box, result)

    def _start_boxes(self, task: HarnessTask, image: str, archive: Path) -> dict[str, tuple[Sandbox, str]]:
        """The containers of one task (three, or four with a twin run), started concurrently; all or none."""
        assert self.client is not None
        config = self.config

        def settings(role: str, **more: object) -> SandboxConfig:
            return self._settings(task, image, role, **more)

        command = config.agent is AgentKind.COMMAND
        mounts = {config.agent_dir: (AGENT_DIR, "ro")} if command and config.agent_dir else None
        tests = {"patches": [("test_patch", task.test_patch)], "repo_files": task.extra_test_files}
        prompt = prompt_files(task.prompt) if mounts else {}
        plans: dict[str, tuple[SandboxConfig, dict[str, Any]]] = {
            "sanity": (settings("sanity", network="none"), tests),
            "agent": (
                settings("agent", env=agent_environment(task, self.forwarded)),
                {"hide": task.hidden_files + tuple(task.extra_test_files), "files": prompt, "mounts": mounts},
            ),
            "verify": (settings("verify", network="none"), tests),
        }
        if twins_run_apart(task):  # `harness.verify`
            plans["twin"] = (settings("twin", network="none"), tests)
        with ThreadPoolExecutor(max_workers=len(plans), thread_name_prefix="harness-start") as pool:
            futures = {
                role: pool.submit(
                    start_repo_box,
                    self.client,
                    sandbox,
                    archive,
                    name_hint=f"{task.safe_id}-{role}",
                    on_start=self._register,
                    kept=install_outputs(),
                    **options,
                )
                for role, (sandbox, options) in plans.items()
            }
            boxes, errors, rejected = {}, [], None
            for role, future in futures.items():
                try:
                    boxes[role] = future.result()
                except PatchRejected as exc:
                    rejected = exc
                except Exception as exc:
                    errors.append(f"{role} container: {_describe(exc)}")
        if errors or rejected:
            for box, _ in boxes.values():
                with self._live_guard:
                    self._live.discard(box)
                box.close()
            if errors:
                raise HarnessOutcome(Status.SETUP_ERROR, "; ".join(errors))
            raise HarnessOutcome(Status.SANITY_FAIL, f"{rejected} (at base)")
        return boxes

    def _register(self, box: Sandbox) -> None:
        """Track a new container so `abort` can remove it; after an abort, refuse it (its starter closes it)."""
        with self._live_guard:
            if self.aborted:
                raise HarnessOutcome(Status.SETUP_ERROR, "the run was interrupted")
            self._live.add(box)

    def _dispose(self, box: Sandbox, result: TaskResult) -> None:
        """Remove a container in the background (it is off the critical path), or keep it when asked."""
        with self._live_guard:
            self._live.discard(box)
        if self.config.keep_containers:
            if box.name not in result.containers:
                keep(box)
                result.containers.append(box.name)
            return
        self._reaper.submit(box.close)


def _describe(exc: Exception) -> str:
    if isinstance(exc, ImageNotFound):
        return f"image not found: {exc}"
    return f"{type(exc).__name__}: {exc}"


def _unresolved_reason(run: CheckRun) -> str:
    failing = [c.test_id or c.command for c in run.fail_to_pass + run.pass_to_pass if not c.passed]
    shown = ", ".join(failing[:5]) + (f" and {len(failing) - 5} more" if len(failing) > 5 else "")
    return f"{run.counts()}; failing: {shown}"
