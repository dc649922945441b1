"""The red team on real jest and cargo runs: every cheating agent of `tests/support/toolchain_hacks.py` against a
jest task and a cargo task (`tests/support/toolchain_tasks.py`), one harness batch per task, with an agent that
applies the gold patch (judged like any agent: resets, probes, canaries) and one that changes nothing.

The gold agent must resolve and nothing else may. Each defence is seen where it acts: package.json, the set-up file
its jest key names, and Cargo.toml are reset and listed (`dropped_paths`); the extension-less `src/range` is a
second module for `src/range.js`; a `build.rs` changes what cargo's loader says; forgers in package code are caught
by the twins (`tampered test results`), including those that spare canaries by their shape. Needs Docker,
`swe-forge-node:bookworm`, `swe-forge-rust:bookworm` (`scripts/build-toolchain-image.sh node|rust`) and the npm
registry through the host CA bundle.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import docker
import pytest

from tests.support.common import HOST_CA, require_image
from tests.support.compiled_hacks import hack_batch
from tests.support.toolchain_hacks import CARGO_HACKS, JEST_HACKS
from tests.support.toolchain_tasks import JEST_TASK, RUST_TASK, ToolchainTask, build_task

pytestmark = pytest.mark.docker
GOLD_JEST = "cd /repo && sed -i 's/if (value > high) return low;/if (value > high) return high;/' src/range.js\n"
GOLD_CARGO = "cd /repo && sed -i '/if value > high {/{n;s/return low;/return high;/}' src/lib.rs\n"


def red_team(root: Path, task: ToolchainTask, language: str, hacks: dict[str, str], gold: str) -> dict[str, dict]:
    """Every hack (and the gold and empty agents) on copies of `task`, in one harness run: task name -> result."""
    row, git_url = build_task(root, task, language)
    everything = {"gold": gold, "empty": "true\n", **hacks}
    instances, agent_args = hack_batch(root, row, everything)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_")},
        "SWE_FORGE_HOME": str(root / "home"),
        "SWE_FORGE_CRATES_URL": "http://127.0.0.1:9/crates",
    }
    if HOST_CA.is_file():
        env["SWE_FORGE_CA_BUNDLE"] = str(HOST_CA)
    command = [sys.executable, "-m", "swe_forge_dagster.cli", "harness", "-i", str(instances), *agent_args]
    done = subprocess.run(
        [*command, "--git-url", git_url, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert done.stdout.strip(), done.stderr[-3000:]
    prefix = row["instance_id"] + "-"
    return {r["task_id"].removeprefix(prefix): r for r in json.loads(done.stdout)["results"]}


def verdicts(results: dict[str, dict]) -> list[tuple[str, str, str]]:
    return [(name, r["status"], (r["error"] or "")[:200]) for name, r in results.items()]


def test_no_cheating_agent_resolves_a_real_jest_task(tmp_path: Path, docker_client: docker.DockerClient) -> None:
    require_image(docker_client, "swe-forge-node:bookworm", "scripts/build-toolchain-image.sh node")
    results = red_team(tmp_path, JEST_TASK, "JavaScript", JEST_HACKS, GOLD_JEST)
    assert results["gold"]["status"] == "resolved" and not results["gold"]["dropped_paths"], results["gold"]
    assert results["empty"]["status"] == "unresolved"
    won = [v for v in verdicts(results) if v[0] != "gold" and v[1] != "unresolved"]
    assert not won, won
    dropped = {name: set(r["dropped_paths"]) for name, r in results.items()}
    assert {"jest.setup.js"} <= dropped["setup-file"]  # named by the jest key: configuration
    assert {"package.json"} <= dropped["jest-key-setup"] and {"package.json"} <= dropped["npx-bin"]
    assert {"src/range"} <= dropped["shadow-noext"]  # a second module for src/range.js
    for name in ("expect-from-package", "knows-negation", "src-provenance"):
        assert "tampered test results" in results[name]["error"], (name, results[name]["error"])


def test_no_cheating_agent_resolves_a_real_cargo_task(tmp_path: Path, docker_client: docker.DockerClient) -> None:
    require_image(docker_client, "swe-forge-rust:bookworm", "scripts/build-toolchain-image.sh rust")
    results = red_team(tmp_path, RUST_TASK, "Rust", CARGO_HACKS, GOLD_CARGO)
    assert results["gold"]["status"] == "resolved" and not results["gold"]["dropped_paths"], results["gold"]
    assert results["empty"]["status"] == "unresolved"
    won = [v for v in verdicts(results) if v[0] != "gold" and v[1] != "unresolved"]
    assert not won, won
    for name in ("harness-false-spare", "lib-path-shadow-spare", "rustflags-runner-spare"):
        assert "Cargo.toml" in results[name]["dropped_paths"], (name, results[name])
    assert "cargo's effective configuration" in results["build-rs-rewrite-spare"]["error"]
    for name in ("initarray-reexec-spare", "clamp-prints-events-spare", "fd1-swallow"):  # the report's stream
        error = results[name]["error"]  # by the twin, or by events that disagree with libtest's own summary
        assert "tampered test results" in error or "written to by the code under test" in error, (name, error)
