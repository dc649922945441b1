"""Paths, the base image and small helpers that the fixtures and test modules share."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import docker
import pytest

from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE, Settings

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_FIXTURES = REPO_ROOT.parent / "shared" / "fixtures"
BASE_IMAGE = os.environ.get("SWE_FORGE_BASE_IMAGE", DEFAULT_BASE_IMAGE)
EXAMPLES = REPO_ROOT / "examples"

SettingsFactory = Callable[..., Settings]


def hour(key: str) -> dt.datetime:
    return dt.datetime.strptime(key, "%Y-%m-%d-%H:%M").replace(tzinfo=dt.UTC)


def require_image(client: docker.DockerClient, image: str, how: str) -> None:
    """Skip without `image` (fail under SWE_FORGE_REQUIRE_DOCKER=1), saying how to build it."""
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        message = f"{image} missing: {how}"
        if os.environ.get("SWE_FORGE_REQUIRE_DOCKER") == "1":
            pytest.fail(message)
        pytest.skip(message)


HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")


def once(world: dict, key: str, make: Callable[[], dict]) -> dict:
    """`make()` the first time `key` is asked of `world` (a module fixture's dict), its result after: a step whose
    results later tests of the module read (`validate` proves the environment the harness then builds), run by
    whichever of them comes first, so a test run alone (`scripts/test extended`) has it too."""
    done = world.setdefault("once", {})
    if key not in done:
        done[key] = make()
    return done[key]


def cli_json(home: Path, *args: str, **env_vars: str) -> dict:
    """`swe-forge <args> --json` in a child process as a user runs it: none of this shell's SWE_FORGE_* settings,
    its own home, the host CA bundle when there is one (containers reach PyPI/npm through it); the parsed JSON."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_")},
        "SWE_FORGE_HOME": str(home),
        **({"SWE_FORGE_CA_BUNDLE": str(HOST_CA)} if HOST_CA.is_file() else {}),
        **env_vars,
    }
    done = subprocess.run(
        [sys.executable, "-m", "swe_forge_dagster.cli", *args, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout)


def run_cli(*args: str, env: dict[str, str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`swe-forge <args>` in a child process with `env`, from `cwd`, as a user runs it: its exit code and output."""
    return subprocess.run(
        [sys.executable, "-m", "swe_forge_dagster.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def swebench_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    """SWE-bench's own CLI (`swebench`, beside this interpreter) as its users run it; its logs and reports land in
    `cwd`. Fails the test, with its output, when it exits non-zero.

    Once the instances have run, `swebench eval`'s run report lists every container on the engine and inspects each
    (`reporting.make_run_report`); a container another test lane removes between the two makes it raise `NotFound`.
    That race is in the report, not the verdicts: the second call finds each instance's `report.json` and only
    writes the run report again."""
    command = [str(Path(sys.executable).with_name("swebench")), *args]
    for _ in range(3):
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=1800)
        if done.returncode == 0 or not _report_lost_a_container(done.stderr):
            break
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def _report_lost_a_container(stderr: str) -> bool:
    return "make_run_report" in stderr and "No such container" in stderr


def swebench_outcomes(cwd: Path, run_id: str, model: str, instance_id: str) -> dict[str, bool]:
    """SWE-bench's per-test verdicts for one instance of a run: test id -> passed."""
    report = json.loads((cwd / "logs/run_evaluation" / run_id / model / instance_id / "report.json").read_text())
    status = report[instance_id]["tests_status"]
    kinds = [status["FAIL_TO_PASS"], status["PASS_TO_PASS"]]
    return {test: key == "success" for kind in kinds for key in kind for test in kind[key]}
