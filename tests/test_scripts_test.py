"""`scripts/test`, the README's second Quickstart command, as a newcomer meets it (issue 39): its own help; tiers by
name; it says what it will run and about how long; and it builds sandbox images only when the selected tests need
them, so one fast test file runs in seconds on a machine that has none. The Docker CLI is a recording stand-in on
PATH (this test must not build images); pytest, the collection and the scripts are the real ones."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def recording_docker(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """PATH with a `docker` that answers every call with success and records it, and a `debootstrap`."""
    bin_dir, log = tmp_path / "bin", tmp_path / "docker.log"
    bin_dir.mkdir()
    (bin_dir / "docker").write_text(f'#!/bin/sh\necho "$*" >> {log}\nexit 0\n')
    (bin_dir / "debootstrap").write_text("#!/bin/sh\nexit 0\n")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    log.touch()
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return env, log


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / "scripts/test"), *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


def test_help_is_its_own_and_names_the_tiers() -> None:
    done = subprocess.run([str(ROOT / "scripts/test"), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("usage:") == 1 and done.stdout.startswith("usage: scripts/test [TIER]")
    for tier in ("fast", "docker", "browser", "real"):
        assert f"\n  {tier} " in done.stdout
    assert "--junitxml" not in done.stdout  # pytest's help is named, not printed


def test_a_fast_file_builds_no_image_and_says_what_it_runs(recording_docker: tuple[dict[str, str], Path]) -> None:
    env, log = recording_docker
    done = run(env, "tests/test_release_tags.py", "-q")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "scripts/test: 4 tests, by tier fast:4 ; under 2 minutes" in done.stdout
    assert "4 passed" in done.stdout
    assert "image" not in log.read_text()  # `docker info` at most: nothing inspected, nothing built


def test_tiers_by_name_select_and_build_only_what_they_need(recording_docker: tuple[dict[str, str], Path]) -> None:
    env, log = recording_docker
    empty = run(env, "docker", "tests/test_release_tags.py")
    assert empty.returncode == 5 and "scripts/test: no test selected" in empty.stdout, empty.stdout[-2000:]
    assert "image" not in log.read_text()
    fast = run(env, "fast", "tests/test_release_tags.py", "tests/test_ownership.py", "--collect-only", "-q")
    assert (
        fast.returncode == 0 and "by tier fast:7 ;" in fast.stdout
    )  # test_ownership holds three fast tests, fast.stdout[-2000:]
    assert "image" not in log.read_text()
    docker = run(env, "docker", "tests/test_ownership.py", "--collect-only", "-q")
    assert docker.returncode == 0 and "by tier docker:" in docker.stdout, docker.stdout[-2000:]
    inspected = log.read_text()
    assert "image inspect swe-forge-base:bookworm" in inspected and "image inspect swe-forge-go:bookworm" in inspected


def test_a_tier_and_a_marker_expression_are_an_error_not_a_silent_choice() -> None:
    done = subprocess.run(
        [str(ROOT / "scripts/test"), "fast", "-m", "docker"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2 and "a tier (fast) and -m both select tests" in done.stderr
