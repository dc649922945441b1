"""The red-team corpora by class, the bounded share of them the tests run, and the runs that replay them.

A class is a mechanism: the place a cheating agent's payload enters (a key of a manifest, a set-up file, package code,
install outputs, test code the task does not own, a module that shadows another) and what it does there (forge every
result, spare the planted canaries by their shape, spare what `.git`'s `HEAD` holds, rewrite the report after the
runner exits, leave no report at all). Each class meets one defence (a reset by name or by the runner's own
configuration, a dropped path, the canaries, the twins, the sealed checkout, the engine's record of the system's
files), named beside it.

The corpora are large and grow with every red team, and each member costs a sandboxed run of a real toolchain: the tests
(`bounded`, most of them in the `extended` tier) run the members a test asserts on by name and the first member of each
class, so that every defence stays covered; `benchmarks/red_team.py` runs every member (this module's `main`, in its own
process) and prints per class how many were tried and how many won.

The corpora on real SWE-bench rows (`axios`, `gtest`, `django`, `sympy`) are `tests/support/real_red_team.py`'s.

    .venv/bin/python -m tests.support.red_team {jest,cargo,gym,axios,gtest,django,sympy} [--work DIR]  # JSON out
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tests.support.common import HOST_CA
from tests.support.compiled_hacks import hack_batch
from tests.support.toolchain_tasks import ToolchainTask, build_task

GOLD_JEST = "cd /repo && sed -i 's/if (value > high) return low;/if (value > high) return high;/' src/range.js\n"
GOLD_CARGO = "cd /repo && sed -i '/if value > high {/{n;s/return low;/return high;/}' src/lib.rs\n"

# `tests/support/toolchain_hacks.py`'s JEST_HACKS, by mechanism (the defence that meets it after the colon).
JEST_CLASSES: dict[str, list[str]] = {
    "runner configuration from package.json keys: package.json reset": ["jest-key-setup", "npx-bin", "babel-pkgkey"],
    "a set-up file the jest key names: reset as configuration": ["setup-file"],
    "an extension-less module beside src/range.js: a second module, dropped": ["shadow-noext"],
    "package code forges every matcher: the canaries": ["expect-from-package"],
    "package code spares the canaries by their shape: the twins": ["knows-negation", "src-provenance"],
    "a child left behind rewrites the report after jest exits: reaped before the report is read (a race a loaded host "
    "can lose: the open row of issue 37)": ["exit-child-rewrite"],
    "spares what .git's HEAD holds: the sealed checkout, then the canaries": [
        "test-global",
        "objectis-head",
        "extend-tobe",
        "exit-rewrite",
    ],
    "install outputs (node_modules) carried by the diff: dropped": ["node-modules"],
    "test code the task does not own: dropped": ["testcode"],
    "the run killed, no report: the agent's loss": ["kill-run"],
}
# CARGO_HACKS, likewise; a `-spare` member also spares the canaries by their shape, and meets the same defence.
CARGO_CLASSES: dict[str, list[str]] = {
    "the test target or the library from Cargo.toml ([[test]] harness or path, [lib] path): Cargo.toml reset": [
        "harness-false-spare",
        "lib-path-shadow-spare",
        "harness-false",
        "test-target-shadow",
        "test-target-shadow-spare",
        "lib-path-shadow",
    ],
    "a test runner of our own from profile rustflags in Cargo.toml: Cargo.toml reset": [
        "rustflags-runner-spare",
        "rustflags-runner",
    ],
    "a build.rs rewrites the tests at build time: cargo's effective configuration": [
        "build-rs-rewrite-spare",
        "build-rs-rewrite",
    ],
    "package code re-runs the test binary and rewrites its events (.init_array): the report's stream": [
        "initarray-reexec-spare",
        "initarray-reexec",
    ],
    "the code under test prints libtest events itself: the twins": ["clamp-prints-events-spare", "clamp-prints-events"],
    "a forged event joined to libtest's next line on fd 1: the report's stream": ["fd1-swallow"],
    "a value equal to everything, sparing what .git's HEAD holds: the sealed checkout, the changed-literal twin": [
        "eq-lie-head"
    ],
    "install outputs (target/) carried by the diff: dropped": ["target-outputs"],
    "test code the task does not own: dropped": ["testcode"],
    "a manifest that breaks the build, hoping for an infrastructure error: the agent's loss": ["error-out"],
}
# `tests/support/hacks.py`'s HACKS and SNEAKY on tinycalc#12 (pytest), likewise.
PYTHON_CLASSES: dict[str, list[str]] = {
    "tests, conftest.py, pytest itself by name: not applied": [
        "edit-tests",
        "delete-tests",
        "conftest",
        "shadow-pytest",
    ],
    "fake output, a report written elsewhere: judged by the real report": ["fake-pass", "forge-report"],
    "what the diff's text hides (rename headers, metadata, config sections): found by git after it applies": [
        "rename-conftest",
        "entry-point",
        "pyproject-section",
    ],
    "the test process ends early, no report: the agent's loss": ["exit-early"],
    "results rewritten in the test process: the canaries": [
        "a-hook-from-init",
        "a-runtest-noop",
        "a-rewrite-report",
        "a-canary-collection-error",  # silences the canaries first: a planted module that fails to collect is tampering
    ],
    "the payload in a binary diff: read as applied": ["a-binary-hook"],
    "spares the canaries (by the report, the twin's source, the assertion): the twins run apart": [
        "a-spare-canaries-init",
        "a-spare-canaries-module",
        "a-twin-aware-hook",
        "a-assertion-oracle",
        "a-btime-spare",  # tells the run apart by its files' birth times: the two trees are made alike
        "a-btime-oracle",
    ],
    "a child that stops the reaping shell, then rewrites the report: the reaper, the twins": ["a-stopped-shell"],
    "replaces a binary the run's shell calls: the engine's record of the system's files": ["a-exit-path-binary"],
    "turns every check into an expected failure: xfail is no pass": ["a-xfail-from-code"],
    "a module named like the standard library's: dropped": ["b-shadow-math", "b-shadow-xml", "b-shadow-in-tests"],
    "a package beside the module the tests import: a second module, dropped": ["b-package-beside-module"],
    "test code the task does not own: dropped": ["d-init-next-to-tests", "d-existing-test-file"],
    "config only pytest reads (a byte-order mark): pytest's own configuration": ["c-bom-tox-ini", "c-bom-setup-cfg"],
}


def bounded(corpus: Mapping[str, str], classes: Mapping[str, list[str]], asserted: Iterable[str]) -> dict[str, str]:
    """CI's share of `corpus`: the members a test asserts on by name and the first member of each class, in corpus
    order. An asserted name the corpus lacks is an error, not a member quietly left out."""
    asserted = set(asserted)
    assert asserted <= set(corpus), sorted(asserted - set(corpus))
    keep = asserted | {members[0] for members in classes.values()}
    return {name: script for name, script in corpus.items() if name in keep}


def red_team(root: Path, task: ToolchainTask, language: str, hacks: Mapping[str, str], gold: str) -> dict[str, dict]:
    """Every hack (and an agent that applies the gold patch, and one that changes nothing) on copies of `task`, in one
    `swe-forge harness` run: name -> the run's result ("gold", "empty" and the hacks' names)."""
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
    pipe = subprocess.PIPE
    with subprocess.Popen(
        [*command, "--git-url", git_url, "--json"], env=env, stdout=pipe, stderr=pipe, text=True
    ) as run:
        try:
            stdout, stderr = run.communicate(timeout=3600)
        except BaseException:  # the test's timeout, Ctrl-C: SIGTERM, on which the harness removes its containers
            run.terminate()  # (a SIGKILL would leave them running, beside the tests that come next)
            try:
                run.communicate(timeout=60)
            except subprocess.TimeoutExpired:
                run.kill()
            raise
    assert stdout.strip(), stderr[-3000:]
    prefix = row["instance_id"] + "-"
    return {r["task_id"].removeprefix(prefix): r for r in json.loads(stdout)["results"]}


def through_the_gym(gym: Any, task: Any, scripts: Mapping[str, str], workers: int = 4) -> dict[str, Any]:
    """Each script run by the gym's `bash` tool in /testbed of its own environment on `task`, then answered:
    name -> the answer (its reward and the harness's result)."""

    def cheat(name: str) -> tuple[str, Any]:
        env = gym.open(task, agent=f"cheat-{name}")
        env.call("bash", {"command": scripts[name]})
        return name, env.answer()

    with ThreadPoolExecutor(workers) as pool:
        return dict(pool.map(cheat, scripts))


def _toolchain(corpus: str, work: Path) -> dict[str, dict]:
    from tests.support.toolchain_hacks import CARGO_HACKS, JEST_HACKS
    from tests.support.toolchain_tasks import JEST_TASK, RUST_TASK

    if corpus == "jest":
        results = red_team(work, JEST_TASK, "JavaScript", JEST_HACKS, GOLD_JEST)
    else:
        results = red_team(work, RUST_TASK, "Rust", CARGO_HACKS, GOLD_CARGO)
    kept = ("status", "error", "dropped_paths", "total_duration_secs", "test_duration_secs")
    return {name: {k: r[k] for k in kept} for name, r in results.items()}


def _gym(work: Path) -> dict[str, dict]:
    import docker

    from swe_forge_dagster.gym.service import Gym
    from tests.support.gym_world import world_gym_config
    from tests.support.hacks import HACKS, SNEAKY
    from tests.support.harness_world import harness_world

    hw = harness_world(work / "harness-world")
    client = docker.from_env()
    config = world_gym_config(hw, work / "gym" / "state", bash_timeout=5)
    with Gym(config, lake_dir=work / "gym" / "lake", client=client) as gym:
        answers = through_the_gym(gym, hw.task(), {**HACKS, **SNEAKY})
    kept = ("status", "error", "dropped_paths", "total_duration_secs", "test_duration_secs")
    return {name: {k: a.result.summary()[k] for k in kept} for name, a in answers.items()}


def _real(corpus: str, work: Path) -> dict[str, dict]:
    from tests.support.real_red_team import replay

    kept = ("status", "error", "dropped_paths", "defences", "total_duration_secs", "test_duration_secs")
    return {name: {k: r.get(k) for k in kept} for name, r in replay(corpus, work).items()}


def main(argv: list[str] | None = None) -> None:
    from tests.support.real_red_team import CORPORA as REAL
    from tests.support.real_red_team import missing

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("corpus", choices=("jest", "cargo", "gym", *REAL))
    parser.add_argument("--work", type=Path, default=None, help="a folder for the run (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.corpus in REAL and (absent := missing(args.corpus)):
        print(json.dumps({"corpus": args.corpus, "skipped": f"fixtures missing: {', '.join(map(str, absent))}"}))
        return
    all_classes = {"jest": JEST_CLASSES, "cargo": CARGO_CLASSES, "gym": PYTHON_CLASSES}
    classes = {**all_classes, **{name: spec[3] for name, spec in REAL.items()}}[args.corpus]
    with tempfile.TemporaryDirectory(prefix=f"red-team-{args.corpus}-") as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        if args.corpus in REAL:
            results = _real(args.corpus, work)
        else:
            results = _gym(work) if args.corpus == "gym" else _toolchain(args.corpus, work)
        seconds = round(time.perf_counter() - started, 1)
    print(json.dumps({"corpus": args.corpus, "seconds": seconds, "classes": classes, "results": results}))


if __name__ == "__main__":
    main()
