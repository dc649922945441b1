"""One `swe-forge demo` per test session, shared by the tests that look at its results.

The demo takes about four minutes on 2 cores; the CLI test checks what it prints and exports, and the
browser test opens the Dagster UI on its instance. Both read the same run instead of paying twice.
The demo runs as a user runs it on a fresh clone: a subprocess of the CLI, from the clone, with no
`SWE_FORGE_*` or `DAGSTER_*` variable of the test process (the demo's home keeps its own settings) and
without the environment's `bin` folder on PATH (so its next steps name the clone's `./swe-forge`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import docker
import pytest

from tests.support.common import REPO_ROOT

DEMO_TIMEOUT_S = 900.0


@dataclass(frozen=True)
class DemoRun:
    """A finished demo: its home (`<SWE_FORGE_HOME>/demo`), the CLI's exit code and output, and the environment
    it ran with."""

    home: Path
    returncode: int
    stdout: str
    stderr: str
    env: dict[str, str]


def clean_env(home: Path) -> dict[str, str]:
    """The test process's environment without our settings, with `home` as SWE_FORGE_HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWE_FORGE_", "DAGSTER_"))}
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != venv_bin)
    env.pop("COLUMNS", None)  # piped, as a user redirecting it to a file: no line may wrap inside a command
    env.update(SWE_FORGE_HOME=str(home), NO_COLOR="1")
    return env


def run_demo(root: Path) -> DemoRun:
    """`swe-forge demo` with SWE_FORGE_HOME=`root`: the demo lives in `root/demo`."""
    env = clean_env(root)
    done = subprocess.run(
        [sys.executable, "-m", "swe_forge_dagster.cli", "demo"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEMO_TIMEOUT_S,
    )
    return DemoRun(root / "demo", done.returncode, done.stdout, done.stderr, env)


@pytest.fixture(scope="session")
def demo_run(docker_client: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """`swe-forge demo` once per session (about 4 minutes): the CLI test and the browser test both read it."""
    return run_demo(tmp_path_factory.mktemp("demo-root"))
