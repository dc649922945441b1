"""`swe-forge gym`: serve our tasks as interactive environments (SWE-Gym style), and print the tools.

    export SWE_FORGE_GYM_TOKEN=$(openssl rand -hex 24)
    swe-forge gym serve --input ./tasks                      # http://127.0.0.1:8765, token required
    swe-forge gym serve --input lite.jsonl --env-spec envs.json --max-envs 16 --idle-timeout 300
    swe-forge gym tools                                      # the six tool schemas, OpenAI function-calling JSON

`serve` loads every task of each `--input` (as `swe-forge harness` does), removes containers and marks
episodes that a killed server left behind, then serves until Ctrl-C or SIGTERM, when it refuses new opens,
ends every open episode (`abandoned`, no reward, as after `kill -9`) and removes every container, those of
opens under way too. The token (SWE_FORGE_GYM_TOKEN) must have at least 16 characters; without one it makes
a token and writes it to `<SWE_FORGE_HOME>/gym/token` (mode 0600), printing that path, and the token itself
only when stderr is a terminal (never into a log). Episodes are recorded in SWE_FORGE_HOME (the `episodes`
view, and answered ones in `eval_results` under `gym:<agent>`) unless `--no-record`. Exit codes: 0 stopped,
2 bad usage (no tasks, a bad option: a timeout or `--max-envs` that is not positive, a short token).
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from swe_forge_dagster.cli.common import say, usage_error
from swe_forge_dagster.common.sandbox_spec import GYM_CPU, GYM_MEMORY

if TYPE_CHECKING:
    from swe_forge_dagster.gym.server import GymServer
    from swe_forge_dagster.gym.service import Gym

TOKEN_ENV = "SWE_FORGE_GYM_TOKEN"
gym_app = typer.Typer(
    name="gym",
    help="Interactive environments over our tasks (SWE-Gym style).",
    no_args_is_help=True,
    add_completion=False,
)


@gym_app.command("tools")
def tools() -> None:
    """Print the six tools' schemas as JSON (OpenAI function-calling format)."""
    from swe_forge_dagster.gym.tools import tool_schemas

    print(json.dumps(tool_schemas(), indent=2))


@gym_app.command("serve")
def serve(
    input_paths: Annotated[
        list[Path], typer.Option("--input", "-i", help="task dirs, a SWE-bench file or task repository (repeatable)")
    ],
    env_spec: Annotated[Path | None, typer.Option(help="SWE-bench inputs: JSON repo -> {image, ...}")] = None,
    host: Annotated[str | None, typer.Option(help="[default: SWE_FORGE_GYM_HOST or 127.0.0.1]")] = None,
    port: Annotated[int | None, typer.Option(help="0: any free port [default: SWE_FORGE_GYM_PORT or 8765]")] = None,
    max_envs: Annotated[int | None, typer.Option(help="[default: SWE_FORGE_GYM_MAX_ENVS or 8]")] = None,
    idle_timeout: Annotated[float | None, typer.Option(help="seconds without a call before reaping")] = None,
    episode_timeout: Annotated[float | None, typer.Option(help="seconds an episode may last")] = None,
    bash_timeout: Annotated[float, typer.Option(help="seconds a bash call may run")] = 600.0,
    cpus: Annotated[float, typer.Option(help="CPU cores per sandbox")] = GYM_CPU,
    memory: Annotated[str, typer.Option(help="memory per sandbox")] = GYM_MEMORY,
    network: Annotated[str, typer.Option(help="the sandbox's network: none | bridge | host")] = "none",
    docker_image: Annotated[str | None, typer.Option(help="image for tasks without their own")] = None,
    git_url: Annotated[str | None, typer.Option(help="clone URL template [default: SWE_FORGE_GIT_URL]")] = None,
    test_timeout: Annotated[float | None, typer.Option(help="seconds per test command at answer")] = None,
    pull: Annotated[bool, typer.Option(help="pull a missing base image")] = False,
    record: Annotated[bool, typer.Option(help="record episodes in SWE_FORGE_HOME's lake")] = True,
    ready_file: Annotated[Path | None, typer.Option(help="write {url, server_id, pid} here once serving")] = None,
) -> None:
    """Serve environments over HTTP (open / tools / call / answer / close) until stopped."""
    from pydantic import ValidationError

    from swe_forge_dagster.common.secrets import secret_from_env
    from swe_forge_dagster.gym.config import GymConfig
    from swe_forge_dagster.gym.server import GymServer
    from swe_forge_dagster.gym.service import Gym
    from swe_forge_dagster.harness import HarnessTask, InputError, load_env_spec, load_inputs
    from swe_forge_dagster.settings import get_settings

    settings = get_settings()
    try:
        config = GymConfig(
            state_dir=settings.home_abs / "gym",
            sandbox=settings.sandbox.but(
                image=docker_image or settings.docker_image, cpu=cpus, mem_limit=memory, network=network
            ),
            git_url=git_url or settings.git_url,
            repo_cache_dir=settings.cache_dir / "repos",
            registry=settings.registry,
            pull=pull,
            test_timeout=_given(test_timeout, settings.test_timeout),
            bash_timeout=bash_timeout,  # type: ignore[arg-type]
            episode_timeout=_given(episode_timeout, settings.gym_episode_timeout),
            idle_timeout=_given(idle_timeout, settings.gym_idle_timeout),
            max_envs=int(_given(max_envs, settings.gym_max_envs)),
        )
        token = _token(secret_from_env([TOKEN_ENV]), config.state_dir)
        specs = load_env_spec(env_spec) if env_spec else None
        loaded = [
            item
            for path in input_paths
            for item in load_inputs(path, default_image=config.docker_image, env_specs=specs)
        ]
    except ValidationError as exc:
        raise usage_error("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None
    except InputError as exc:
        raise usage_error(str(exc)) from None
    tasks = {item.task_id: item for item in loaded if isinstance(item, HarnessTask)}
    unloadable = {item.task_id: item.reason for item in loaded if not isinstance(item, HarnessTask)}
    if not tasks:
        raise usage_error(f"--input {', '.join(map(str, input_paths))}: no usable task ({len(unloadable)} unloadable)")
    gym = Gym(config, lake_dir=settings.lake_dir if record else None)
    host, port = host or settings.gym_host, settings.gym_port if port is None else port
    try:
        server = GymServer(gym, tasks, token, host=host, port=port, unloadable=unloadable)
    except OSError as exc:
        gym.close()
        raise usage_error(f"cannot listen on {host}:{port}: {exc}") from None
    _serve(gym, server, ready_file, len(unloadable))


def _given(value: float | None, default: float) -> float:
    """An option's value when given (0 included: the config then refuses it), else the setting's."""
    return default if value is None else value


def _token(given: str | None, state_dir: Path) -> str:
    """The server's token: the one given (checked), or a new one written to `state_dir/token` (mode 0600)."""
    from swe_forge_dagster.gym.server import check_token

    if given is not None:
        try:
            return check_token(given)
        except ValueError as exc:
            raise usage_error(f"{TOKEN_ENV}: {exc}") from None
    token = secrets.token_urlsafe(24)
    path = state_dir / "token"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    shown = f"; it is {token}" if sys.stderr.isatty() else ""
    say("token:", "yellow", f"{TOKEN_ENV} is not set: this server's token is in {path} (mode 0600){shown}")
    return token


def _serve(gym: Gym, server: GymServer, ready_file: Path | None, unloadable: int) -> None:
    """Report the cleanup, start the reaper, serve until Ctrl-C or SIGTERM, then end every episode."""
    if gym.docker_error:
        say("warning:", "yellow", f"{gym.docker_error}: every open will fail until it is reachable")
    if gym.removed_stale or gym.abandoned:
        say(
            "cleanup:",
            "cyan",
            f"removed {len(gym.removed_stale)} leftover containers, marked "
            f"{len(gym.abandoned)} episodes of a stopped server abandoned",
        )
    gym.start_reaper()
    say(
        "gym:",
        "green",
        f"{len(server.tasks)} tasks ({unloadable} unloadable) at {server.url}, "
        f"server {gym.config.server_id}, at most {gym.config.max_envs} environments",
    )
    if ready_file is not None:
        ready_file.parent.mkdir(parents=True, exist_ok=True)
        info = {"url": server.url, "server_id": gym.config.server_id, "pid": os.getpid()}
        ready_file.write_text(json.dumps(info), encoding="utf-8")

    def stop(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        say("gym:", "yellow", "stopping: open episodes end without an answer")
    finally:
        signal.signal(signal.SIGTERM, previous)
        server.stop()
        gym.close()
