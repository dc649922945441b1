"""The many-machines deployment for tests: deploy/start on free loopback ports, its lake on its SeaweedFS.

`running_deployment(root, docker_client)` starts it the way a user does (deploy/start: Debian's PostgreSQL,
SeaweedFS, Debian's docker-registry, the project image's code server, the webserver and the daemon) with
`SWE_FORGE_HOME=s3://deployment/home`, a GH Archive mirror (the two fixture hours and the task world's
hours) and the task world's GitHub and LLM twins, which count every request. The world's git remotes sit in
the machine's local folder (`SWE_FORGE_LOCAL_DIR`), which every run container mounts at the same path.
On exit it stops everything it started and removes the run containers and environment images it made.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import docker
import pytest

from swe_forge_dagster.demo.twins.github_twin import GithubTwin
from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin
from swe_forge_dagster.demo.worlds.task_world import TaskWorld, build_task_world
from swe_forge_dagster.demo.worlds.world_agent import world_agent_responder
from swe_forge_dagster.environments.environment import env_image_tag
from swe_forge_dagster.tasks.recipes import RecipeStore
from tests.support.common import BASE_IMAGE, REPO_ROOT, SHARED_FIXTURES
from tests.support.gharchive_server import GharchiveServer
from tests.support.postgres_server import postgres_database
from tests.support.registry_server import registry_binary
from tests.support.s3_server import ACCESS_KEY, SECRET_KEY

IMAGE = "swe-forge:test"
FIXTURE_HOURS = SHARED_FIXTURES / "gharchive" / "full-hours-2015-01-01"
FIXTURE_FILES = ("2015-01-01-0.json.gz", "2015-01-01-1.json.gz")
TOKEN, KEY = "ghp_deploy_test_token_0123", "sk-deploy-test-key-0123"
BUCKET, PREFIX = "deployment", "home"
WORLD_REPOS = ("acme-labs/tinycalc", "northwind/datekit", "globex-oss/yaml-lite")
RABBITMQ = "/usr/lib/rabbitmq/bin/rabbitmq-server"


def _free_base(count: int) -> int:
    """A port p with p..p+count-1 all free on 127.0.0.1 (SeaweedFS takes 8 consecutive ports)."""
    for base in range(31000, 60000, 97):
        with contextlib.ExitStack() as stack:
            try:
                for port in range(base, base + count):
                    sock = stack.enter_context(socket.socket())
                    sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return base
    raise RuntimeError("no block of free ports")


@dataclass
class Deployment:
    dir: Path
    env: dict[str, str]
    local: Path
    """The first machine's SWE_FORGE_LOCAL_DIR (Dagster home, caches, clones; mounted in run containers)."""
    postgres_url: str
    world: TaskWorld
    registry_port: int
    s3_endpoint: str
    github: GithubTwin
    llm: OpenAITwin
    start_log: str = ""
    """What deploy/start printed on stderr (its last line: the next step, a command to paste)."""

    @property
    def home(self) -> str:
        return f"s3://{BUCKET}/{PREFIX}"

    def swe_forge(
        self, *args: str, timeout: float = 600, machine: Path | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        """`swe-forge ARGS` in a shell that sourced the deployment's env file, as a user would. `machine`: another
        machine's local folder (its own Dagster home and caches; the same Postgres, store and registry)."""
        return self.python("-m", "swe_forge_dagster.cli", *args, timeout=timeout, machine=machine, cwd=cwd)

    def python(
        self, *args: str, timeout: float = 600, machine: Path | None = None, cwd: Path | None = None
    ) -> subprocess.CompletedProcess[str]:
        other = ""
        if machine is not None:  # the env file names the first machine's folders: another machine has its own
            other = f'export SWE_FORGE_LOCAL_DIR="{machine}"; unset DAGSTER_HOME SWE_FORGE_WORKSPACE; '
        command = f'. "{self.dir}/env" && {other}exec "{sys.executable}" "$@"'
        return subprocess.run(
            ["bash", "-c", command, "python", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=cwd,
        )

    def run(self, *argv: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        """`argv` in a shell that sourced the deployment's env file (deploy/hosts, as a user runs it)."""
        command = f'. "{self.dir}/env" && exec "$@"'
        return subprocess.run(
            ["bash", "-c", command, "shell", *argv], env=self.env, capture_output=True, text=True, timeout=timeout
        )

    def popen(self, *args: str) -> subprocess.Popen[str]:
        """`swe-forge ARGS` started in the background in such a shell (`communicate` for its output)."""
        command = f'. "{self.dir}/env" && exec "{sys.executable}" -m swe_forge_dagster.cli "$@"'
        return subprocess.Popen(
            ["bash", "-c", command, "python", *args],
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    @contextlib.contextmanager
    def instance(self, monkeypatch: pytest.MonkeyPatch) -> Iterator[dg.DagsterInstance]:
        """The deployment's instance, opened in this process (Postgres storage, DockerRunLauncher)."""
        monkeypatch.setenv("SWE_FORGE_POSTGRES_URL", self.postgres_url)
        monkeypatch.setenv("SWE_FORGE_IMAGE", IMAGE)
        with dg.DagsterInstance.from_config(str(self.local / "dagster")) as instance:
            yield instance

    def store(self):  # noqa: ANN201 - s3fs is imported lazily
        import s3fs

        return s3fs.S3FileSystem(key=ACCESS_KEY, secret=SECRET_KEY, client_kwargs={"endpoint_url": self.s3_endpoint})

    def sql(self, statement: str, machine: Path | None = None) -> list[str]:
        """`swe-forge sql --format csv STATEMENT`: the CSV lines."""
        result = self.swe_forge("sql", "--format", "csv", statement, machine=machine)
        assert result.returncode == 0, result.stderr[-2000:]
        return result.stdout.split()


def _env(
    root: Path, local: Path, postgres_url: str, gharchive: str, github: str, llm: str, git_urls: str, base: int
) -> dict[str, str]:
    """The deployment's settings; ports from `base` (SeaweedFS's 8, the registry, code server, UI, broker and its
    Erlang port mapper: 14 in all)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWE_FORGE_", "DAGSTER_", "AWS_"))}
    env.pop("OPENROUTER_API_KEY", None)
    env.update(
        SWE_FORGE_DEPLOY_DIR=str(root / "deploy"),
        SWE_FORGE_HOME=f"s3://{BUCKET}/{PREFIX}",
        SWE_FORGE_LOCAL_DIR=str(local),
        SWE_FORGE_S3_ACCESS_KEY=ACCESS_KEY,
        SWE_FORGE_S3_SECRET_KEY=SECRET_KEY,
        SWE_FORGE_IMAGE=IMAGE,
        SWE_FORGE_POSTGRES_URL=postgres_url,
        SWE_FORGE_START_DATE="2015-01-01",
        SWE_FORGE_GHARCHIVE_URL=gharchive,
        SWE_FORGE_GITHUB_API_URL=github,
        GITHUB_TOKEN=TOKEN,
        SWE_FORGE_LLM_BASE_URL=llm,
        SWE_FORGE_LLM_API_KEY=KEY,
        SWE_FORGE_GIT_URL=git_urls,
        SWE_FORGE_DOCKER_IMAGE=BASE_IMAGE,
        SWE_FORGE_S3_PORT=str(base),
        SWE_FORGE_REGISTRY_PORT=str(base + 8),
        SWE_FORGE_CODE_PORT=str(base + 9),
        SWE_FORGE_UI_PORT=str(base + 10),
        SWE_FORGE_BROKER_PORT=str(base + 12),  # deploy/start --hosts only (and its port mapper on the next port)
        SWE_FORGE_HOSTS_PURGE="1",  # deploy/stop removes the hosts' image stores too
        COLUMNS="200",
        NO_COLOR="1",
    )
    return env


def _clean_up(docker_client: docker.DockerClient, local_dirs: list[Path]) -> None:
    """The run containers of this deployment and the environment images its machines built or pulled."""
    for container in docker_client.containers.list(
        all=True, ignore_removed=True, filters={"label": "swe-forge.role=run-worker"}
    ):
        if any(f"SWE_FORGE_LOCAL_DIR={local_dirs[0]}" == e for e in container.attrs["Config"]["Env"] or []):
            container.remove(force=True)
    for local in local_dirs:
        store = RecipeStore(local / "cache" / "recipes")
        for repo in WORLD_REPOS:
            if (recipe := store.get(repo, BASE_IMAGE)) is not None:
                with contextlib.suppress(docker.errors.ImageNotFound):
                    docker_client.images.remove(env_image_tag(repo, recipe), force=True)


@contextlib.contextmanager
def running_deployment(
    root: Path, docker_client: docker.DockerClient, hosts: int = 0, extra_env: dict[str, str] | None = None
) -> Iterator[Deployment]:
    """The deployment (module docstring), with `hosts` worker hosts (deploy/start --hosts); skipped without the
    fixture hours or Debian's docker-registry (and rabbitmq-server with hosts)."""
    if not (FIXTURE_HOURS / FIXTURE_FILES[0]).is_file():
        pytest.skip(f"GH Archive fixture hours missing in {FIXTURE_HOURS}")
    registry_binary()  # skip (or fail under SWE_FORGE_REQUIRE_DOCKER=1) without Debian's docker-registry
    if hosts and not Path(RABBITMQ).is_file():
        message = "rabbitmq-server is not installed (apt-get install rabbitmq-server): worker hosts need a broker"
        if os.environ.get("SWE_FORGE_REQUIRE_DOCKER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    local, mirror = root / "local", root / "mirror"
    world = build_task_world(local / "world", mirror=mirror)
    for name in FIXTURE_FILES:  # beside the world's hours (a temporary copy)
        shutil.copyfile(FIXTURE_HOURS / name, mirror / name)
    with contextlib.ExitStack() as stack:
        postgres_url = stack.enter_context(postgres_database(root / "postgres"))
        gharchive = stack.enter_context(GharchiveServer(mirror))
        github = stack.enter_context(GithubTwin(world.github, token=TOKEN))
        llm = stack.enter_context(OpenAITwin(world_agent_responder(world.git), api_key=KEY))
        base = _free_base(14)
        env = _env(root, local, postgres_url, gharchive.url, github.url, llm.url, world.git.url_template, base)
        env.update(extra_env or {})
        command = [str(REPO_ROOT / "deploy" / "start"), *(["--hosts", str(hosts)] if hosts else [])]
        started = subprocess.run(command, env=env, capture_output=True, text=True, timeout=1500)
        try:
            assert started.returncode == 0, started.stderr[-4000:]
            yield Deployment(
                root / "deploy",
                env,
                local,
                postgres_url,
                world,
                base + 8,
                f"http://127.0.0.1:{base}",
                github,
                llm,
                started.stderr,
            )
        finally:
            stopped = subprocess.run(
                [str(REPO_ROOT / "deploy" / "stop")], env=env, capture_output=True, text=True, timeout=300
            )
            _clean_up(docker_client, [local, *sorted(root.glob("machine-*"))])
            assert stopped.returncode == 0, stopped.stderr[-2000:]
