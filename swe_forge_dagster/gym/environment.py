"""One environment: a task's sandbox driven tool call by tool call, ended by `answer` with a binary reward.

An environment is the harness's own evaluation of the task (`Harness.evaluate`) with the agent's turn
handed over to the caller: the harness builds or reuses the environment image, starts the sanity, agent
and verification containers, runs the sanity check, and then, where it would run an agent command, calls
this environment's `_agent_turn`, which publishes the agent container to the tools and waits. `answer`
lets the turn return the container's diff (`take_diff`, as for any agent), and the harness goes on exactly
as for `swe-forge harness`: protected paths dropped, the diff applied in the fresh verification container,
the task's tests, canaries and runner-configuration checks, the verdict. So the same diff gets the same
status both ways, and reward = 1.0 exactly when that status is `resolved`.

`close` (by the caller, or by the gym for an idle or overlong episode) ends the turn without a diff: the
harness reports `agent_error` with the reason, the reward is 0.0, and its containers are removed as for
any task. An episode ended because the gym stopped is `abandoned`, with no reward (as after `kill -9`).
Only answered episodes are written to `eval_results`, so an episode closed later never replaces a verdict.
The episode is concluded (recorded, its slot freed) when its harness run ends, whoever ended it. Calls are
serialized per environment (one shell session, one tree); `close` does not wait for a call in flight:
removing the container ends it.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from docker.errors import DockerException

from swe_forge_dagster.execution.repo_box import take_diff
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxError
from swe_forge_dagster.gym.config import GymConfig
from swe_forge_dagster.gym.episodes import ABANDONED, OPEN, Recorder, Transcript
from swe_forge_dagster.gym.toolbox import Observation, Toolbox, prepare_testbed
from swe_forge_dagster.gym.tools import ANSWER, TESTBED, TOOL_NAMES, ToolError, parse_arguments, tool_schemas
from swe_forge_dagster.harness.agent import AgentRun
from swe_forge_dagster.harness.models import HarnessTask, Status, TaskResult
from swe_forge_dagster.harness.run import Harness

log = logging.getLogger(__name__)
CLOSED = "the episode was closed before an answer"
STOPPED = "the gym was stopped during the episode"
REAPER_GRACE_S = 60.0  # past the gym's own limits, an episode ends itself (a reaper that died, no gym at all)
OnEnd = Callable[["Environment"], None]


class EpisodeEnded(RuntimeError):
    """The environment's episode is over (answered, closed or reaped): no more tool calls."""


class OpenFailed(RuntimeError):
    """The task could not be set up (or failed its sanity check): `result` says why; there is no episode."""

    def __init__(self, result: TaskResult) -> None:
        super().__init__(f"{result.task_id}: {result.status.value}: {result.reason}")
        self.result = result


@dataclass
class Answer:
    """How an episode ended: the reward and the harness's full result for the agent's diff."""

    reward: float | None  # None: abandoned (the gym stopped during the episode)
    result: TaskResult
    answered: bool = True  # False: closed (or reaped) without an answer
    abandoned: bool = False

    @property
    def status(self) -> str:
        return ABANDONED if self.abandoned else self.result.status.value

    def payload(self) -> dict[str, Any]:
        return {
            "reward": self.reward,
            "status": self.status,
            "reason": self.result.reason,
            "answered": self.answered,
            "done": True,
            "result": self.result.summary(),
            "model_patch": self.result.model_patch,
        }

    def observation(self) -> Observation:
        what = self.status + (f": {self.result.reason}" if self.result.reason else "")
        reward = "no reward" if self.reward is None else f"reward {self.reward:.1f}"
        return Observation(f"{reward} ({what[:2000]})", data={"reward": self.reward, "done": True})


@dataclass
class _Counts:
    steps: int = 0
    errors: int = 0
    tools: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOOL_NAMES, 0))


class Environment:
    """One episode on one task; made and started by `Gym.open` (or `start()` with a harness of your own)."""

    def __init__(
        self,
        harness: Harness,
        task: HarnessTask,
        config: GymConfig,
        *,
        agent: str = "agent",
        recorder: Recorder | None = None,
        on_end: OnEnd | None = None,
    ) -> None:
        self.id = uuid.uuid4().hex[:16]
        self.harness, self.task, self.config, self.agent = harness, task, config, agent
        self.recorder = recorder or Recorder(None, config.server_id)
        self.transcript = Transcript(config.transcripts_dir / f"{self.id}.jsonl")
        self.counts = _Counts()
        self.on_end = on_end
        self.opened_at = dt.datetime.now(dt.UTC)
        self.setup_seconds = 0.0
        self.started = self.last_active = time.monotonic()
        self.busy = 0
        self._toolbox: Toolbox | None = None
        self._calls = threading.Lock()  # one call at a time
        self._state = threading.Lock()  # the flags below
        self._done = False
        self._abandoned = False
        self._end_reason: str | None = None
        self._ready, self._settled, self._finish = threading.Event(), threading.Event(), threading.Event()
        self._thread: threading.Thread | None = None
        self._result: TaskResult | None = None
        self._answer: Answer | None = None

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> Environment:
        """Set the task up through the harness; returns when the sandbox is ready. OpenFailed when it is not."""
        began = time.monotonic()
        self._thread = threading.Thread(target=self._evaluate, name=f"gym-{self.id}", daemon=True)
        self._thread.start()
        self._settled.wait()
        self.setup_seconds = round(time.monotonic() - began, 3)
        if not self._ready.is_set():
            self._thread.join()
            assert self._result is not None
            self._record(status=self._result.status.value, reward=None, reason=self._result.reason)
            raise OpenFailed(self._result)
        self._record(status=OPEN, reward=None, reason=None)
        return self

    def _evaluate(self) -> None:
        try:
            self._result = self.harness.evaluate(self.task, agent=self._agent_turn)
        finally:
            self._settled.set()
        if self._ready.is_set():  # an episode: concluded here, however it ended (answer, close, reaper, timeout)
            self._settle()

    def _agent_turn(self, box: Sandbox, task: HarnessTask, base_sha: str) -> AgentRun:
        """The harness's agent step: hand the container to the tools, wait for the end, return the diff."""
        prepare_testbed(box)
        self._toolbox = Toolbox(box, bash_timeout=self.config.bash_timeout)
        self.started = self.last_active = time.monotonic()
        self._ready.set()
        self._settled.set()
        # the gym's reaper ends overlong and idle episodes; this bound only guards against a dead reaper
        self._finish.wait(self.config.episode_timeout + self.config.idle_timeout + REAPER_GRACE_S)
        with self._state:
            if not self._done:
                self._done, self._end_reason = True, f"the episode ran out of time ({self.config.episode_timeout:g}s)"
        seconds = round(time.monotonic() - self.started, 3)
        summary = f"gym episode {self.id} of {self.agent}: {self.counts.steps} calls"
        if self._end_reason is not None:
            return AgentRun(None, f"{summary}; {self._end_reason}", seconds, failure=self._end_reason)
        return AgentRun(0, summary, seconds, diff=take_diff(box, base_sha))

    @property
    def done(self) -> bool:
        return self._done

    @property
    def ready(self) -> bool:
        """The sandbox was handed to the tools (the episode began)."""
        return self._ready.is_set()

    def settled(self, timeout: float | None = None) -> bool:
        """Wait until the set-up is over (ready, or failed); whether it is."""
        return self._settled.wait(timeout)

    @property
    def seconds(self) -> float:
        return round(time.monotonic() - self.started, 3)

    def tools(self) -> list[dict[str, Any]]:
        """The six tools' schemas, with this environment's `bash` timeout."""
        return tool_schemas(self.config.bash_timeout)

    # -- calls ------------------------------------------------------------------------------------

    def call(self, name: str, arguments: dict[str, Any] | str | None = None) -> Observation:
        """One tool call and its observation; `answer` ends the episode (`Answer.observation`). A refused call
        is an error observation; EpisodeEnded once the episode is over."""
        began = time.monotonic()
        try:
            args = parse_arguments(name, arguments)
        except ToolError as exc:
            if self._done:
                raise EpisodeEnded(self.ended_because()) from None
            observation = Observation(str(exc), error=True)
            self._step(name, arguments, observation, began)
            return observation
        if name == ANSWER:
            return self.answer().observation()
        with self._calls:
            with self._state:
                if self._done:
                    raise EpisodeEnded(self.ended_because())
                self.busy += 1
                self.last_active = time.monotonic()
            try:
                assert self._toolbox is not None
                observation = self._toolbox.run(name, args)
            except ToolError as exc:
                observation = Observation(str(exc), error=True)
            except (DockerException, SandboxError, OSError) as exc:
                if self._done:  # the episode was closed under the call: its container is gone
                    raise EpisodeEnded(self.ended_because()) from None
                observation = Observation(f"the sandbox failed: {exc}", error=True)
            finally:
                with self._state:
                    self.busy -= 1
                    self.last_active = time.monotonic()
            self._step(name, args, observation, began)
        return observation

    def answer(self) -> Answer:
        """End the episode: the diff is graded as `swe-forge harness` grades it. Returns the same answer again."""
        began = time.monotonic()
        with self._calls:  # after a call in flight
            with self._state:
                if self._done and self._end_reason is not None:  # closed (or reaped) without an answer
                    raise EpisodeEnded(self.ended_because())
                answering, self._done = not self._done, True  # a second answer waits for the first one's
            if answering:
                self._finish.set()
                self._count(ANSWER, error=False)  # in the episode's row, which `_conclude` writes
        answer = self._conclude()
        if answering:
            self._log(self.counts.steps, ANSWER, {}, answer.observation(), began)
        return answer

    def close(self, reason: str = CLOSED, *, abandoned: bool = False) -> Answer:
        """End the episode now (a call in flight ends with it); without an answer it is an `agent_error`, reward 0
        (`abandoned`: no reward, status `abandoned`, as for the gym stopping)."""
        with self._state:
            if not self._done:
                self._done, self._end_reason, self._abandoned = True, reason, abandoned
        self._finish.set()
        return self._conclude()

    def ended_because(self) -> str:
        if self._answer is not None and self._answer.answered:
            return f"the episode {self.id} is over: it was answered (reward {self._answer.reward:.1f})"
        return f"the episode {self.id} is over: {self._end_reason or 'it ended'}"

    # -- bookkeeping ------------------------------------------------------------------------------

    def _conclude(self) -> Answer:
        assert self._thread is not None
        self._thread.join()
        return self._settle()

    def _settle(self) -> Answer:
        """The episode's answer from the harness's result, recorded once (then the gym forgets the environment)."""
        with self._state:
            first = self._answer is None
            if self._answer is None:
                assert self._result is not None
                result, answered = self._result, self._end_reason is None
                abandoned = self._abandoned and not answered
                reward = None if abandoned else 1.0 if result.status is Status.RESOLVED else 0.0
                self._answer = Answer(reward, result, answered=answered, abandoned=abandoned)
                self._record(status=self._answer.status, reward=reward, reason=result.reason)
                if answered:  # a verdict: never replaced by a later episode that was closed or reaped
                    self.recorder.result(result, self.agent, self.id)
            answer = self._answer
        if first and self.on_end is not None:
            self.on_end(self)
        return answer

    def _step(self, name: str, arguments: object, observation: Observation, began: float) -> None:
        self._log(self._count(name, error=observation.error), name, arguments, observation, began)

    def _count(self, name: str, *, error: bool) -> int:
        with self._state:
            self.counts.steps += 1
            self.counts.errors += error
            if name in self.counts.tools:
                self.counts.tools[name] += 1
            return self.counts.steps

    def _log(self, step: int, name: str, arguments: object, observation: Observation, began: float) -> None:
        try:  # long arguments and observations are cut there; text that is not UTF-8 is escaped
            self.transcript.append(
                {
                    "step": step,
                    "tool": name,
                    "arguments": arguments,
                    "observation": observation.text,
                    "error": observation.error,
                    "data": observation.data,
                    "seconds": round(time.monotonic() - began, 3),
                }
            )
        except (OSError, ValueError) as exc:
            log.warning("transcript of %s: %s", self.id, exc)

    def _record(self, *, status: str, reward: float | None, reason: str | None) -> None:
        ended = status != OPEN
        self.recorder.episode(
            self.recorder.row(
                episode_id=self.id,
                task_id=self.task.task_id,
                repo=self.task.repo,
                agent=self.agent,
                status=status,
                reward=reward,
                steps=self.counts.steps,
                tool_counts=dict(self.counts.tools),
                errors=self.counts.errors,
                seconds=self.seconds if ended and self._ready.is_set() else 0.0,
                setup_seconds=self.setup_seconds,
                reason=reason,
                transcript_path=str(self.transcript.path),
                started_at=self.opened_at,
                ended_at=dt.datetime.now(dt.UTC) if ended else None,
            )
        )

    def describe(self) -> dict[str, Any]:
        """What the server shows of an open environment."""
        return {
            "env_id": self.id,
            "task_id": self.task.task_id,
            "agent": self.agent,
            "steps": self.counts.steps,
            "seconds": self.seconds,
            "idle_seconds": round(time.monotonic() - self.last_active, 3),
            "busy": bool(self.busy),
            "done": self._done,
            "workdir": TESTBED,
        }
