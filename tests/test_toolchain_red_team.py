"""The red team on real jest and cargo runs: cheating agents of `tests/support/toolchain_hacks.py` against a jest task
and a cargo task (`tests/support/toolchain_tasks.py`), one harness batch per task, with an agent that applies the gold
patch (judged like any agent: resets, probes, canaries) and one that changes nothing.

The gold agent must resolve and nothing else may. Each defence is seen where it acts: package.json, the set-up file
its jest key names, and Cargo.toml are reset and listed (`dropped_paths`); the extension-less `src/range` is a
second module for `src/range.js`; a `build.rs` changes what cargo's loader says; forgers in package code are caught
by the twins (`tampered test results`), including those that spare canaries by their shape. Needs Docker,
`swe-forge-node:bookworm`, `swe-forge-rust:bookworm` (`scripts/build-toolchain-image.sh node|rust`) and the npm
registry through the host CA bundle.

The corpora are large (each member a sandboxed jest or cargo run): `scripts/test extended` replays the members asserted
on here by name and the first of each class of `tests/support/red_team.py` (every defence met once);
`benchmarks/red_team.py` replays them all and prints, per class, how many were tried and how many won.
"""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from tests.support.common import require_image
from tests.support.red_team import CARGO_CLASSES, GOLD_CARGO, GOLD_JEST, JEST_CLASSES, bounded, red_team
from tests.support.toolchain_hacks import CARGO_HACKS, JEST_HACKS
from tests.support.toolchain_tasks import JEST_TASK, RUST_TASK

pytestmark = pytest.mark.docker
JEST_ASSERTED = (
    "setup-file",
    "jest-key-setup",
    "shadow-noext",
    "expect-from-package",
    "knows-negation",
)
CARGO_ASSERTED = (
    "harness-false-spare",
    "rustflags-runner-spare",
    "build-rs-rewrite-spare",
    "initarray-reexec-spare",
    "clamp-prints-events-spare",
    "fd1-swallow",
)


KNOWN_RACES = {
    "exit-child-rewrite": (
        "a child left behind polls for jest's exit and rewrites the report before root's shell reaps it: `REAP` "
        "narrows the window to the shell's next scheduling, which a loaded host stretches past the child's 50 ms poll "
        "(it won once, in a local CI run with both lanes busy), and it tells the twin run apart by the test source "
        "it reads (the race after the runner's exit, open in issue 37, as the user red team's KNOWN_WINS)"
    ),
}
"""Agents whose verdict is a race that the defences narrow but do not close: run and reported, not asserted."""


def verdicts(results: dict[str, dict]) -> list[tuple[str, str, str]]:
    return [(name, r["status"], (r["error"] or "")[:200]) for name, r in results.items()]


@pytest.mark.extended
@pytest.mark.timeout(1200)  # 12 sandboxed jest runs in one batch: 176 s alone (14 runs), 541 s on a host at load 9
def test_no_cheating_agent_resolves_a_real_jest_task(tmp_path: Path, docker_client: docker.DockerClient) -> None:
    require_image(docker_client, "swe-forge-node:bookworm", "scripts/build-toolchain-image.sh node")
    hacks = bounded(JEST_HACKS, JEST_CLASSES, JEST_ASSERTED)
    results = red_team(tmp_path, JEST_TASK, "JavaScript", hacks, GOLD_JEST)
    assert set(results) == {"gold", "empty", *hacks}
    assert results["gold"]["status"] == "resolved" and not results["gold"]["dropped_paths"], results["gold"]
    assert results["empty"]["status"] == "unresolved"
    won = [v for v in verdicts(results) if v[0] != "gold" and v[1] != "unresolved"]
    print("known races:", [v for v in won if v[0] in KNOWN_RACES])  # reported, not asserted: see KNOWN_RACES
    assert not [v for v in won if v[0] not in KNOWN_RACES], won
    dropped = {name: set(r["dropped_paths"]) for name, r in results.items()}
    assert {"jest.setup.js"} <= dropped["setup-file"]  # named by the jest key: configuration
    assert {"package.json"} <= dropped["jest-key-setup"]
    assert {"src/range"} <= dropped["shadow-noext"]  # a second module for src/range.js
    for name in ("expect-from-package", "knows-negation"):
        assert "tampered test results" in results[name]["error"], (name, results[name]["error"])


@pytest.mark.extended
def test_no_cheating_agent_resolves_a_real_cargo_task(tmp_path: Path, docker_client: docker.DockerClient) -> None:
    require_image(docker_client, "swe-forge-rust:bookworm", "scripts/build-toolchain-image.sh rust")
    hacks = bounded(CARGO_HACKS, CARGO_CLASSES, CARGO_ASSERTED)
    results = red_team(tmp_path, RUST_TASK, "Rust", hacks, GOLD_CARGO)
    assert set(results) == {"gold", "empty", *hacks}
    assert results["gold"]["status"] == "resolved" and not results["gold"]["dropped_paths"], results["gold"]
    assert results["empty"]["status"] == "unresolved"
    won = [v for v in verdicts(results) if v[0] != "gold" and v[1] != "unresolved"]
    assert not won, won
    for name in ("harness-false-spare", "rustflags-runner-spare"):
        assert "Cargo.toml" in results[name]["dropped_paths"], (name, results[name])
    assert "cargo's effective configuration" in results["build-rs-rewrite-spare"]["error"]
    for name in ("initarray-reexec-spare", "clamp-prints-events-spare", "fd1-swallow"):  # the report's stream
        error = results[name]["error"]  # by the twin, or by events that disagree with libtest's own summary
        assert "tampered test results" in error or "written to by the code under test" in error, (name, error)
