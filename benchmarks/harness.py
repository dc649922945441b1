"""Benchmark the evaluation harness: its own overhead per task, and what `--parallel 2` buys.

Why: the harness wraps every agent run in three containers (sanity, agent, verification), a
repository snapshot, a diff and two test runs; on a benchmark of hundreds of tasks its own cost
per task decides how long a run takes beyond what the agent needs. Measured on copies of the test
world's easy task (acme-labs/tinycalc#12) with a warm environment image, and an agent that sleeps
(`--agent-sleep` seconds on average, +-`--spread`) and then applies the fix (so the verification
runs and the task resolves).

- overhead per task = total time - the agent's run time - the checks' run time (sanity and
  verification suites), with `--parallel 1`: container starts, the base snapshot, the diff, the
  patch applications and the reports. Target: <= 3 s.
- speed-up = wall time of the same tasks at `--parallel 1` / at `--parallel 2` (a pool: a slot
  refills as soon as a task ends). Target: >= 1.6x on 2 cores.

    .venv/bin/python benchmarks/harness.py [--tasks 6] [--agent-sleep 4] [--spread 0.5] [--repeat 1] [--json-only]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import docker

from swe_forge_dagster.common.agent_kind import AgentKind
from swe_forge_dagster.common.sandbox_spec import SandboxSpec
from swe_forge_dagster.demo.worlds.git_world import build_git_world
from swe_forge_dagster.demo.worlds.harness_task import write_world_task
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.harness import Harness, HarnessConfig, Status, TaskResult, load_inputs, run_harness
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE

BASE_IMAGE = DEFAULT_BASE_IMAGE
TARGETS = {"overhead_s_per_task_max": 3.0, "speedup_parallel_2_min": 1.6}
FIX = """import pathlib
path = pathlib.Path("tinycalc/rounding.py")
old = "    return math.floor(value * scale + 0.5) / scale\\n"
new = "    magnitude = math.floor(abs(value) * scale + 0.5) / scale\\n    return math.copysign(magnitude, value)\\n"
path.write_text(path.read_text().replace(old, new))
"""


def sleeps(tasks: int, mean: float, spread: float) -> list[float]:
    """Agent times evenly spread over mean*(1-spread)..mean*(1+spread): real agents never take equal time,
    and equal times keep every slot's CPU-heavy phases (container starts, test runs) in lockstep."""
    if tasks == 1:
        return [mean]
    return [round(mean * (1 - spread + 2 * spread * i / (tasks - 1)), 2) for i in range(tasks)]


def agent_dir(root: Path, times: list[float]) -> Path:
    """An agent that thinks for its task's time (by task id `bench-<i>`), then fixes the bug."""
    directory = root / "agent"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "fix.py").write_text(FIX)
    cases = "".join(f"  bench-{i}) sleep {t};;\n" for i, t in enumerate(times))
    (directory / "run.sh").write_text(f'case "$SWE_FORGE_TASK_ID" in\n{cases}esac\ncd /repo && python /agent/fix.py\n')
    return directory


def timed_run(config: HarnessConfig, items: list, client: docker.DockerClient) -> tuple[float, list[TaskResult]]:
    with Harness(config, client=client) as harness:
        started = time.perf_counter()
        results = run_harness(items, config, harness=harness)
        wall = time.perf_counter() - started
    bad = [(r.task_id, r.status.value, r.reason) for r in results if r.status is not Status.RESOLVED]
    if bad:
        raise SystemExit(f"benchmark tasks must resolve, got {bad}")
    return wall, results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=6, help="copies of the easy task per run")
    parser.add_argument("--agent-sleep", type=float, default=4.0, help="mean seconds the agent thinks")
    parser.add_argument("--spread", type=float, default=0.5, help="agent times vary by +-this fraction (0: all equal)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per mode; the fastest counts (noise only adds)")
    parser.add_argument("--json-only", action="store_true")
    args = parser.parse_args(argv)
    client = docker.from_env()
    with tempfile.TemporaryDirectory(prefix="bench-harness-") as tmp:
        root = Path(tmp)
        world = build_git_world(root / "world")
        cache = RepoCache(root / "build-repos", world.url_template)
        pr = world.pr("acme-labs/tinycalc", 12)
        for index in range(args.tasks):
            write_world_task(root / "tasks", cache, pr, task_id=f"bench-{index}")
        items = load_inputs(root / "tasks", default_image=BASE_IMAGE)
        times = sleeps(args.tasks, args.agent_sleep, args.spread)
        config = HarnessConfig(
            agent=AgentKind.COMMAND,
            agent_dir=agent_dir(root, times),
            agent_cmd="sh /agent/run.sh",
            repo_cache_dir=root / "repos",
            git_url=world.url_template,
            sandbox=SandboxSpec(image=BASE_IMAGE, cpu=1.0),
        )
        warm_started = time.perf_counter()
        timed_run(config.model_copy(update={"agent": AgentKind.ORACLE}), items[:1], client)  # builds or finds the image
        warmup = time.perf_counter() - warm_started
        serial_wall, serial = min(
            (timed_run(config.model_copy(update={"parallel": 1}), items, client) for _ in range(args.repeat)),
            key=lambda run: run[0],
        )
        pooled_wall, pooled = min(
            (timed_run(config.model_copy(update={"parallel": 2}), items, client) for _ in range(args.repeat)),
            key=lambda run: run[0],
        )
    overheads = [r.total_duration_secs - r.agent_duration_secs - r.test_duration_secs for r in serial]
    figures: dict[str, Any] = {
        "tasks": args.tasks,
        "agent_sleep_s": times,
        "warmup_s": round(warmup, 2),
        "per_task_total_s": round(statistics.mean(r.total_duration_secs for r in serial), 2),
        "per_task_agent_s": round(statistics.mean(r.agent_duration_secs for r in serial), 2),
        "per_task_tests_s": round(statistics.mean(r.test_duration_secs for r in serial), 2),
        "overhead_s_per_task": round(statistics.mean(overheads), 2),
        "overhead_s_per_task_max": round(max(overheads), 2),
        "wall_parallel_1_s": round(serial_wall, 2),
        "wall_parallel_2_s": round(pooled_wall, 2),
        "speedup_parallel_2": round(serial_wall / pooled_wall, 2),
        "resolved": sum(r.status is Status.RESOLVED for r in serial + pooled),
        "targets": TARGETS,
    }
    figures["targets_met"] = (
        figures["overhead_s_per_task"] <= TARGETS["overhead_s_per_task_max"]
        and figures["speedup_parallel_2"] >= TARGETS["speedup_parallel_2_min"]
    )
    if not args.json_only:
        print(f"harness on {args.tasks} copies of acme-labs/tinycalc#12; the agent sleeps {times} s, then fixes")
        print(
            f"  per task (parallel 1): total {figures['per_task_total_s']}s = agent {figures['per_task_agent_s']}s"
            f" + tests {figures['per_task_tests_s']}s + harness overhead {figures['overhead_s_per_task']}s"
            f" (max {figures['overhead_s_per_task_max']}s; target <= 3 s)"
        )
        print(
            f"  wall: parallel 1 {serial_wall:.1f}s, parallel 2 {pooled_wall:.1f}s"
            f" -> speed-up {figures['speedup_parallel_2']}x (target >= 1.6x)"
        )
    print(json.dumps(figures))
    return 0 if figures["targets_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
