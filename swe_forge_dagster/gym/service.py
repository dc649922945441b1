"""A gym: many environments at once over one harness, under a cap, with idle and overlong episodes reaped.

    with Gym(GymConfig(state_dir=...), lake_dir=settings.lake_dir) as gym:
        env = gym.open(task, agent="my-agent")          # a HarnessTask (`load_task`): ours, the seed's, SWE-bench
        env.call("view", {"path": "/testbed/src/x.py", "start": 10, "end": 30})
        env.call("str_replace", {"path": "src/x.py", "old_str": "a", "new_str": "b"})
        answer = env.answer()                           # answer.reward: 1.0 or 0.0; answer.result: the harness's
                                                        # TaskResult for the diff
The gym reaps from its first `open` on (a background thread, with or without the server), and `close()`
ends every episode: open ones are recorded `abandoned` (no reward, as after `kill -9`), opens under way are
refused or interrupted (`Harness.abort` removes their containers), and nothing is left running.
One `Harness` serves every environment (one engine connection, one environment-image cache). Opening it
removes the containers of crashed gyms and harness runs (`harness.cleanup`: owner process gone), and marking
their `open` episodes `abandoned` (`episodes.abandon_orphans`) follows, so a gym killed with `kill -9` and
started again leaves nothing behind. No Dagster here: the server, the CLI and the tests all use this.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections import OrderedDict
from pathlib import Path

import docker

from swe_forge_dagster.common.store import StorePath
from swe_forge_dagster.export.swebench import SWEBenchInstance
from swe_forge_dagster.gym.config import GymConfig
from swe_forge_dagster.gym.environment import STOPPED, Answer, Environment, EpisodeEnded
from swe_forge_dagster.gym.episodes import Recorder, abandon_orphans
from swe_forge_dagster.harness.inputs import DEFAULT_SPEC_KEY, EnvSpec, checked, load_inputs, task_from_instance
from swe_forge_dagster.harness.models import HarnessTask, TaskLoadError
from swe_forge_dagster.harness.run import Harness

log = logging.getLogger(__name__)
REMEMBERED_ENDS = 10_000


class CapacityError(RuntimeError):
    """The gym already runs its maximum number of environments."""


class GymStopping(RuntimeError):
    """The gym is closing: it opens no more environments."""


class UnknownEnvironment(KeyError):
    """No environment with this id (never opened here, or ended long ago)."""


def load_task(
    path: str | Path, task_id: str | None = None, *, default_image: str, env_specs: dict[str, EnvSpec] | None = None
) -> HarnessTask:
    """The task `task_id` (or the only task) of an input the harness reads: a task directory (ours or the
    seed's), a folder of them, or a SWE-bench JSON/JSONL/Parquet file. ValueError saying why not."""
    loaded = load_inputs(path, default_image=default_image, env_specs=env_specs)
    chosen = [item for item in loaded if task_id is None or item.task_id == task_id]
    if not chosen:
        raise ValueError(f"no task {task_id!r} in {path}" if task_id else f"no task in {path}")
    if len(chosen) > 1:
        raise ValueError(f"{path} holds {len(chosen)} tasks: name one ({', '.join(i.task_id for i in chosen[:5])}...)")
    if isinstance(chosen[0], TaskLoadError):
        raise ValueError(f"{chosen[0].task_id}: {chosen[0].reason}")
    return chosen[0]


def task_from_row(row: dict, *, default_image: str, env_specs: dict[str, EnvSpec] | None = None) -> HarnessTask:
    """A SWE-bench row (a dict with its columns) as a task; without an env spec for its repo, the environment is
    found from the repository's manifests, as `swe-forge harness` does."""
    instance = SWEBenchInstance.model_validate(row)
    specs = env_specs or {}
    spec = specs.get(instance.repo) or specs.get(DEFAULT_SPEC_KEY)
    return checked(task_from_instance(instance, spec, default_image=default_image))


class Gym:
    """Environments over one harness; thread-safe. Use as a context manager, or `close()` it."""

    def __init__(
        self, config: GymConfig, *, lake_dir: StorePath | None = None, client: docker.DockerClient | None = None
    ) -> None:
        self.config = config
        config.agent_dir.mkdir(parents=True, exist_ok=True)
        config.transcripts_dir.mkdir(parents=True, exist_ok=True)
        self.harness = Harness(config.harness_config(), client=client)
        self.recorder = Recorder(lake_dir, config.server_id)
        self.abandoned = abandon_orphans(lake_dir) if lake_dir is not None else []
        self._envs: dict[str, Environment] = {}
        self._ended: OrderedDict[str, str] = OrderedDict()
        self._opening: set[Environment] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._reaper: threading.Thread | None = None

    @property
    def removed_stale(self) -> list[str]:
        """Containers of crashed gyms (and harness runs) removed when this gym opened."""
        return self.harness.removed_stale

    @property
    def docker_error(self) -> str | None:
        return self.harness.docker_error

    def __enter__(self) -> Gym:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- environments -----------------------------------------------------------------------------

    def open(self, task: HarnessTask, *, agent: str = "agent") -> Environment:
        """A ready environment on `task` (blocks while the image builds and the sanity check runs).

        CapacityError at the cap; `environment.OpenFailed` (with the harness's result) when the task cannot be
        set up or fails its sanity check."""
        with self._lock:
            if self._stop.is_set():
                raise GymStopping("the gym is stopping: it opens no more environments")
            if len(self._envs) + len(self._opening) >= self.config.max_envs:
                raise CapacityError(f"the gym runs {self.config.max_envs} environments already (its cap): close one")
            env = Environment(self.harness, task, self.config, agent=agent, recorder=self.recorder, on_end=self._forget)
            self._opening.add(env)
            if self._reaper is None:
                self.start_reaper()
        try:
            env.start()
            with self._lock:
                stopping = self._stop.is_set()
                if not stopping:
                    self._envs[env.id] = env
        finally:
            with self._lock:
                self._opening.discard(env)
        if stopping:  # `close` ran while this one was being set up
            env.close(STOPPED, abandoned=True)
            raise GymStopping("the gym stopped while the environment was being set up")
        return env

    def get(self, env_id: str) -> Environment:
        """The open environment; EpisodeEnded when it ended, UnknownEnvironment when there is none."""
        with self._lock:
            env = self._envs.get(env_id)
            ended = self._ended.get(env_id)
        if env is not None:
            return env
        if ended is not None:
            raise EpisodeEnded(ended)
        raise UnknownEnvironment(env_id)

    def environments(self) -> list[Environment]:
        with self._lock:
            return list(self._envs.values())

    def answer(self, env_id: str) -> Answer:
        return self.get(env_id).answer()

    def close_environment(self, env_id: str, reason: str | None = None) -> Answer:
        env = self.get(env_id)
        return env.close(reason) if reason else env.close()

    def _forget(self, env: Environment) -> None:
        """An ended episode's environment leaves the gym (its slot frees); its id is remembered as ended."""
        with self._lock:
            if self._envs.pop(env.id, None) is not None:
                self._ended[env.id] = env.ended_because()
                while len(self._ended) > REMEMBERED_ENDS:
                    self._ended.popitem(last=False)

    # -- reaping ----------------------------------------------------------------------------------

    def reap(self, now: float | None = None) -> list[str]:
        """Close the environments idle (no call in flight, none for `idle_timeout`) or past `episode_timeout`."""
        now = time.monotonic() if now is None else now
        reaped = []
        for env in self.environments():
            if env.done:  # answered (being graded) or closed: it leaves the gym when its harness run ends
                continue
            if now - env.started > self.config.episode_timeout:
                reason = f"the episode ran out of time ({self.config.episode_timeout:g}s)"
            elif not env.busy and now - env.last_active > self.config.idle_timeout:
                reason = f"the environment was idle for {self.config.idle_timeout:g}s and was reaped"
            else:
                continue
            log.info("gym: closing %s (%s)", env.id, reason)
            with contextlib.suppress(EpisodeEnded):  # it ended meanwhile
                self.close_environment(env.id, reason)
            reaped.append(env.id)
        return reaped

    def start_reaper(self, interval: float | None = None) -> None:
        """Reap in a background thread every `interval` seconds (a quarter of the idle limit, at most 5 s); the
        first `open` starts it, and a second start does nothing."""
        if self._reaper is not None:
            return
        every = interval or min(5.0, self.config.idle_timeout / 4)

        def loop() -> None:
            while not self._stop.wait(every):
                try:
                    self.reap()
                except Exception:  # the reaper must outlive any one failure
                    log.exception("gym reaper")

        self._reaper = threading.Thread(target=loop, name="gym-reaper", daemon=True)
        self._reaper.start()

    def close(self) -> None:
        """Stop: no more opens; every open episode ends `abandoned` (no reward); opens under way are interrupted
        (`Harness.abort` removes their containers); then the harness (waits for container removal)."""
        with self._lock:
            self._stop.set()
            opening = list(self._opening)
        for env in self.environments():
            with contextlib.suppress(EpisodeEnded):
                env.close(STOPPED, abandoned=True)
        self.harness.abort()  # the containers of opens under way (and of anything still running)
        for env in opening:
            env.settled(timeout=60)
            if env.ready:
                env.close(STOPPED, abandoned=True)
        self.harness.close()
