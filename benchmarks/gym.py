"""Benchmark the gym server: 8 environments at once, the cost of a `bash` call through it, and a `kill -9`.

Why: an RL trainer or an agent framework makes thousands of tool calls per task; what the server adds to each
(HTTP, JSON, the sandbox's shell-state machinery) against a plain `docker exec` of the same command decides
how much of a rollout is overhead. Measured on the test world's easy task (acme-labs/tinycalc#12) with a warm
environment image, through the real `swe-forge gym serve` (its own process, token, loopback port):

- opening: 8 environments opened at once (each: 3 containers and the sanity check), wall time and per open;
- `bash` overhead: `echo ok` through the server (`POST /call`, one kept-alive connection) one call at a time,
  and from 8 clients at once (one per environment), against, in the same run and on the same agent container,
  `docker exec <container> bash -c 'echo ok'` (the CLI) and the engine's exec API without the CLI (the SDK's
  `exec_run`); p50 and p95 of each, and the server's p50 minus docker exec's;
- answering: the fix made with `str_replace` and `answer` in the 8 environments at once (every reward 1.0);
- `kill -9`: the server killed with environments open leaves their containers; a restart removes them.

    .venv/bin/python benchmarks/gym.py [--envs 8] [--calls 100] [--json-only]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import docker

from swe_forge_dagster.demo.worlds.git_world import build_git_world
from swe_forge_dagster.demo.worlds.harness_task import write_world_task
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.gym.client import GymClient
from swe_forge_dagster.harness.cleanup import ROLE_LABEL, RUN_LABEL
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE

TOKEN = "bench-gym-token-0123456789"
PR, TASK = ("acme-labs/tinycalc", 12), "acme-labs__tinycalc-12"
COMMAND = "echo ok"
ROUNDING = "/testbed/tinycalc/rounding.py"
BUGGY = "    return math.floor(value * scale + 0.5) / scale\n"
FIXED = "    magnitude = math.floor(abs(value) * scale + 0.5) / scale\n    return math.copysign(magnitude, value)\n"


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    at = lambda q: ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]  # noqa: E731
    return {"p50_ms": round(at(0.5) * 1000, 1), "p95_ms": round(at(0.95) * 1000, 1), "n": len(samples)}


def timed(action: Callable[[], object], times: int) -> list[float]:
    samples = []
    for _ in range(times):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return samples


@contextmanager
def server(home: Path, tasks: Path, git_url: str, envs: int, name: str) -> Iterator[tuple[subprocess.Popen, dict]]:
    ready = home / f"{name}.json"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_")},
        "SWE_FORGE_HOME": str(home),
        "SWE_FORGE_GYM_TOKEN": TOKEN,
        "SWE_FORGE_GIT_URL": git_url,
    }
    argv = [
        sys.executable,
        "-m",
        "swe_forge_dagster.cli",
        "gym",
        "serve",
        "--input",
        str(tasks),
        "--port",
        "0",
        "--max-envs",
        str(envs),
        "--docker-image",
        DEFAULT_BASE_IMAGE,
        "--ready-file",
        str(ready),
    ]
    log = (home / f"{name}.log").open("w")
    process = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    started = time.perf_counter()
    while not ready.is_file():
        if process.poll() is not None or time.perf_counter() - started > 120:
            raise SystemExit(f"the gym server did not start: {(home / f'{name}.log').read_text()[-2000:]}")
        time.sleep(0.1)
    try:
        yield process, {**json.loads(ready.read_text()), "start_s": round(time.perf_counter() - started, 2)}
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(120)
        log.close()


def tiny_tar() -> bytes:
    """A one-file archive, as `Sandbox.run` uploads each command before it runs it."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(".bench-cmd")
        info.size = len(COMMAND)
        tar.addfile(info, io.BytesIO(COMMAND.encode()))
    return buffer.getvalue()


def containers(client: docker.DockerClient, server_id: str, role: str | None = None) -> list[str]:
    """Ids of a server's containers, running or not (listed without inspecting each: some are being removed)."""
    labels = [f"{RUN_LABEL}={server_id}"] + ([f"{ROLE_LABEL}={role}"] if role else [])
    return [info["Id"] for info in client.api.containers(all=role is None, filters={"label": labels})]


def bash_overhead(
    gym: GymClient,
    clients: list[GymClient],
    opened: list[dict],
    client: docker.DockerClient,
    server_id: str,
    calls: int,
) -> dict[str, Any]:
    """`COMMAND` through the server and by docker exec on the same agent container, interleaved call by call (so
    drift in the machine's load hits all three alike); then from every client at once, and docker exec likewise."""
    env_id = opened[0]["env_id"]
    timed(lambda: gym.call(env_id, "bash", {"command": COMMAND}), 5)  # warm the connection and the session
    hostname = gym.call(env_id, "bash", {"command": "hostname"})["observation"][:12]  # the container's id
    agents = containers(client, server_id, "agent")
    box = client.containers.get(next(c for c in agents if c.startswith(hostname)))
    session: list[float] = []

    def through_server() -> None:
        session.append(gym.call(env_id, "bash", {"command": COMMAND})["data"]["seconds"])

    serial: dict[str, list[float]] = {"server": [], "cli": [], "api": [], "put": []}
    actions = {
        "server": through_server,
        "api": lambda: box.exec_run(["bash", "-c", COMMAND]),
        "cli": lambda: subprocess.run(
            ["docker", "exec", box.id, "bash", "-c", COMMAND], capture_output=True, check=True
        ),
        "put": lambda: box.put_archive("/tmp", tiny_tar()),
    }
    for _ in range(calls):
        for name, action in actions.items():
            serial[name] += timed(action, 1)
    per_client = max(10, calls // len(clients))

    def client_calls(pair: tuple[GymClient, dict]) -> list[float]:
        return timed(lambda: pair[0].call(pair[1]["env_id"], "bash", {"command": COMMAND}), per_client)

    def cli_calls(container: str) -> list[float]:
        argv = ["docker", "exec", container, "bash", "-c", COMMAND]
        return timed(lambda: subprocess.run(argv, capture_output=True, check=True), per_client)

    with ThreadPoolExecutor(len(clients)) as pool:
        loaded = [t for samples in pool.map(client_calls, zip(clients, opened, strict=True)) for t in samples]
        loaded_cli = [t for samples in pool.map(cli_calls, agents[: len(clients)]) for t in samples]
    n = len(clients)
    figures = {
        "bash_through_server": percentiles(serial["server"]),
        "sandbox_session_run": percentiles(session),
        "docker_exec_cli": percentiles(serial["cli"]),
        "docker_exec_api": percentiles(serial["api"]),
        "docker_put_archive": percentiles(serial["put"]),
        f"bash_through_server_{n}_clients": percentiles(loaded),
        f"docker_exec_cli_{n}_at_once": percentiles(loaded_cli),
    }
    server_p50 = figures["bash_through_server"]["p50_ms"]
    figures["overhead_vs_docker_exec_p50_ms"] = round(server_p50 - figures["docker_exec_cli"]["p50_ms"], 1)
    figures["overhead_vs_exec_api_p50_ms"] = round(server_p50 - figures["docker_exec_api"]["p50_ms"], 1)
    figures["http_and_tool_layer_p50_ms"] = round(
        server_p50 - figures["sandbox_session_run"]["p50_ms"] - figures["docker_put_archive"]["p50_ms"], 1
    )
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--envs", type=int, default=8, help="environments at once")
    parser.add_argument("--calls", type=int, default=100, help="bash calls per measurement")
    parser.add_argument("--json-only", action="store_true")
    args = parser.parse_args(argv)
    client = docker.from_env()
    figures: dict[str, Any] = {"envs": args.envs, "command": COMMAND}
    with tempfile.TemporaryDirectory(prefix="bench-gym-") as tmp:
        root = Path(tmp)
        world = build_git_world(root / "world")
        write_world_task(root / "tasks", RepoCache(root / "build-repos", world.url_template), world.pr(*PR))
        home = root / "home"
        home.mkdir()
        with server(home, root / "tasks", world.url_template, args.envs, "first") as (process, info):
            gym = GymClient(info["url"], TOKEN)
            started = time.perf_counter()
            gym.close_environment(gym.open(TASK, "warmup")["env_id"])  # builds or finds the environment image
            figures["warmup_open_s"] = round(time.perf_counter() - started, 2)
            clients = [GymClient(info["url"], TOKEN) for _ in range(args.envs)]
            with ThreadPoolExecutor(args.envs) as pool:
                started = time.perf_counter()
                opened = list(pool.map(lambda c: c.open(TASK, "bench"), clients))
                figures["open_all_wall_s"] = round(time.perf_counter() - started, 2)
            figures["open_each_s"] = sorted(round(o["setup_seconds"], 2) for o in opened)
            figures["open_envs_live"] = len(gym.environments())
            figures.update(bash_overhead(gym, clients, opened, client, info["server_id"], args.calls))

            def solve(pair: tuple[GymClient, dict]) -> float:
                c, o = pair
                c.call(o["env_id"], "str_replace", {"path": ROUNDING, "old_str": BUGGY, "new_str": FIXED})
                return c.answer(o["env_id"])["reward"]

            half = args.envs // 2
            with ThreadPoolExecutor(args.envs) as pool:
                started = time.perf_counter()
                rewards = list(pool.map(solve, list(zip(clients, opened, strict=True))[:half]))
                figures[f"answer_{half}_at_once_wall_s"] = round(time.perf_counter() - started, 2)
            figures["rewards"] = rewards
            figures["containers_before_kill"] = len(containers(client, info["server_id"]))
            process.send_signal(signal.SIGKILL)
            process.wait(30)
            figures["after_kill_9_containers"] = len(containers(client, info["server_id"]))
            figures["open_at_kill"] = args.envs - half
            first_id = info["server_id"]
        with server(home, root / "tasks", world.url_template, args.envs, "second") as (_, again):
            figures["after_restart_containers"] = len(containers(client, first_id))
            figures["restart_to_ready_s"] = again["start_s"]
    figures["all_rewards_1"] = all(r == 1.0 for r in rewards)
    figures["nothing_left"] = figures["after_restart_containers"] == 0
    if not args.json_only:
        report(figures, args.envs)
    print(json.dumps(figures))
    return 0 if figures["all_rewards_1"] and figures["nothing_left"] else 1


def report(figures: dict[str, Any], envs: int) -> None:
    s, c, a, r = (
        figures[k] for k in ("bash_through_server", "docker_exec_cli", "docker_exec_api", "sandbox_session_run")
    )
    p, q = figures[f"bash_through_server_{envs}_clients"], figures[f"docker_exec_cli_{envs}_at_once"]
    half = envs // 2
    print(f"gym server, {envs} environments of {TASK} at once (1 CPU / 2 GB each), `{COMMAND}` via bash")
    print(f"  open {envs} at once: {figures['open_all_wall_s']}s wall; each {figures['open_each_s']}")
    print(
        f"  one client:  server p50 {s['p50_ms']} ms / p95 {s['p95_ms']} ms; docker exec p50 {c['p50_ms']} / "
        f"p95 {c['p95_ms']} ms; exec API p50 {a['p50_ms']} / p95 {a['p95_ms']} ms"
    )
    print(
        f"  -> overhead p50 {figures['overhead_vs_docker_exec_p50_ms']} ms vs docker exec, "
        f"{figures['overhead_vs_exec_api_p50_ms']} ms vs the exec API; of the server's time: the command file's "
        f"upload (put_archive) p50 {figures['docker_put_archive']['p50_ms']} ms, the session's exec "
        f"{r['p50_ms']} ms, HTTP + tool layer {figures['http_and_tool_layer_p50_ms']} ms"
    )
    print(
        f"  {envs} at once: server p50 {p['p50_ms']} / p95 {p['p95_ms']} ms; docker exec p50 {q['p50_ms']} / "
        f"p95 {q['p95_ms']} ms"
    )
    print(
        f"  fix + answer in {half} at once: {figures[f'answer_{half}_at_once_wall_s']}s, rewards {figures['rewards']}"
    )
    print(
        f"  kill -9 with {figures['open_at_kill']} open: {figures['after_kill_9_containers']} containers left; "
        f"after restart: {figures['after_restart_containers']} (ready in "
        f"{figures['restart_to_ready_s']}s)"
    )


if __name__ == "__main__":
    sys.exit(main())
