"""Benchmark every language on real repositories: environment and proof cold and warm, validation, image disk.

Per instance, with no environment given (found from the manifests, no LLM; see `benchmarks/_real.py` for cold and
warm): SWE-bench Multilingual's fmtlib__fmt-2457 (C++, GoogleTest) and axios__axios-5085 (JavaScript, mocha), a
Go task from google/uuid#150 (base = the parent of its merged commit, FAIL_TO_PASS TestVersion7Monotonicity), and
Lite dev's marshmallow-code__marshmallow-1359 as the Python baseline the ratios are taken against. Lists = whether
the re-derived FAIL_TO_PASS / PASS_TO_PASS equal the dataset's in its id form (missing -n, extra +n). Then the
rejection of dtolnay/itoa at HEAD (crates.io is unreachable): its seconds and the containers made meanwhile.

Repositories come from the bundles of `../shared/fixtures/repos/`; crates.io, the Go proxy and Maven Central point
at a closed local port unless set, so no request leaves the machine except npm and PyPI (host CA bundle).

    .venv/bin/python benchmarks/languages.py [--json-only]
"""

from __future__ import annotations

import os

for _name in ("SWE_FORGE_CRATES_URL", "SWE_FORGE_GOPROXY_URL", "SWE_FORGE_MAVEN_URL"):
    os.environ.setdefault(_name, "http://127.0.0.1:9/x")  # before the settings are first read
if os.path.isfile("/etc/ssl/certs/ca-certificates.crt"):
    os.environ.setdefault("SWE_FORGE_CA_BUNDLE", "/etc/ssl/certs/ca-certificates.crt")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402

import docker  # noqa: E402
from _real import FIXTURES, clone_bundle, executor_for, measure, remove_images  # noqa: E402

from swe_forge_dagster.environments.candidates import environment_candidates  # noqa: E402
from swe_forge_dagster.environments.environment import image_available  # noqa: E402
from swe_forge_dagster.execution.patch import split_diff  # noqa: E402
from swe_forge_dagster.execution.runners import swebench_ids  # noqa: E402
from swe_forge_dagster.export.swebench import SWEBenchInstance, read_instances  # noqa: E402
from swe_forge_dagster.languages.registry import runner_for  # noqa: E402
from swe_forge_dagster.tasks.prove import TaskValidation  # noqa: E402

SWEBENCH = FIXTURES / "swebench"
MULTI, LITE_DEV = "lite-test-and-multilingual/swebench_multi.jsonl", "lite-dev/princeton-nlp-SWE-bench_Lite-dev.json"
DATASETS = {
    "C++": (MULTI, "fmtlib__fmt-2457"),
    "JavaScript": (MULTI, "axios__axios-5085"),
    "Python": (LITE_DEV, "marshmallow-code__marshmallow-1359"),
}
GO_MERGED = "a2b2b32373ff0b1a312b7fdf6d38a977099698a6"  # google/uuid#150, squash-merged
REJECTED = "dtolnay/itoa"


def go_instance(tmp: Path) -> SWEBenchInstance:
    """google/uuid#150 as an instance: base = the merged commit's parent, the diff split into patch and tests."""
    remote = clone_bundle(tmp, "google/uuid")
    git = ["git", "-C", str(remote)]
    base = subprocess.run([*git, "rev-parse", f"{GO_MERGED}^"], capture_output=True, text=True, check=True)
    diff = subprocess.run([*git, "diff", base.stdout.strip(), GO_MERGED], capture_output=True, text=True, check=True)
    split = split_diff(diff.stdout)
    return SWEBenchInstance(
        instance_id="google__uuid-150",
        repo="google/uuid",
        base_commit=base.stdout.strip(),
        patch=split.patch,
        test_patch=split.test_patch,
        language="Go",
        FAIL_TO_PASS=["TestVersion7Monotonicity"],
    )


def instances(tmp: Path) -> dict[str, SWEBenchInstance]:
    """Language -> instance, the Python baseline last."""
    chosen: dict[str, SWEBenchInstance] = {}
    for language, (path, instance_id) in DATASETS.items():
        if language == "Python":
            chosen["Go"] = go_instance(tmp)
        (chosen[language],) = [inst for inst in read_instances(SWEBENCH / path) if inst.instance_id == instance_id]
        clone_bundle(tmp, chosen[language].repo)
    return chosen


def compare_lists(inst: SWEBenchInstance, result: TaskValidation) -> dict:
    """The re-derived lists against the instance's, in its id form."""
    runner = runner_for(result.runner)
    f2p = swebench_ids(runner, result.validation.fail_to_pass)
    p2p = [test for test in swebench_ids(runner, result.validation.pass_to_pass) if test not in f2p]
    found: dict = {"fail_to_pass": len(f2p), "pass_to_pass": len(p2p)}
    summary = []
    for key, given, derived in (("F2P", inst.FAIL_TO_PASS, f2p), ("P2P", inst.PASS_TO_PASS, p2p)):
        if key == "P2P" and not given:
            summary.append(f"P2P none given ({len(derived)})")
            continue
        missing, extra = sorted(set(given) - set(derived)), sorted(set(derived) - set(given))
        found[f"{key}_missing"], found[f"{key}_extra"] = missing, extra
        diff = " ".join(part for part in (f"-{len(missing)}" * bool(missing), f"+{len(extra)}" * bool(extra)) if part)
        summary.append(f"{key} {diff or '='} ({len(derived)})")
    found["summary"] = ", ".join(summary)
    return found


def rejection(client: docker.DockerClient, tmp: Path) -> dict:
    """dtolnay/itoa at HEAD: no recipe and why, its seconds (3 calls), and the containers created meanwhile."""
    remote = clone_bundle(tmp, REJECTED)
    head = subprocess.run(["git", "-C", str(remote), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    executor = executor_for(client, tmp)
    executor.cache.ensure(REJECTED)
    executor.cache.fetch(REJECTED, [head.stdout.strip()])
    since, seconds = int(time.time()), []
    for _ in range(3):  # the first pays the process's one registry probe (`registry_reachable`)
        started = time.perf_counter()
        found = environment_candidates(
            executor.cache, REJECTED, head.stdout.strip(), available=partial(image_available, client)
        )
        seconds.append(round(time.perf_counter() - started, 3))
    events = client.events(
        since=since, until=int(time.time()) + 1, decode=True, filters={"type": "container", "event": "create"}
    )
    return {
        "repo": REJECTED,
        "sha": head.stdout.strip()[:12],
        "toolchain": found.toolchain,
        "buildable": found.buildable,
        "recipes": len(found.recipes),
        "problem": found.problem,
        "seconds": seconds,
        "containers_created": sum(1 for _ in events),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json-only", action="store_true")
    args = parser.parse_args(argv)
    client = docker.from_env()
    figures: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-languages-") as tmp:
        executor = executor_for(client, Path(tmp))
        made: set[str] = set()
        try:
            for language, inst in instances(Path(tmp)).items():
                try:
                    row, result = measure(inst, executor)
                except Exception as exc:  # reported as it is: the benchmark does not work around a language
                    figures[language] = {"instance": inst.instance_id, "error": f"{type(exc).__name__}: {exc}"}
                    continue
                made.add(result.image)
                figures[language] = {"instance": inst.instance_id, **row, "lists": compare_lists(inst, result)}
        finally:
            remove_images(client, made)
        figures["rejected"] = rejection(client, Path(tmp))
    python = figures.get("Python", {})
    for row in figures.values():
        if "cold_s" in row and "cold_s" in python:
            row["cold_vs_python"] = round(row["cold_s"] / python["cold_s"], 1)
            row["warm_vs_python"] = round(row["warm_s"] / python["warm_s"], 1)
    if not args.json_only:
        print_table(figures)
    print(json.dumps(figures))
    return 0


def print_table(figures: dict[str, dict]) -> None:
    print(
        f"{'language':10} {'instance':34} {'cold s':>7} {'warm s':>7} {'x py':>9} {'1+3 runs s':>10} "
        f"{'image MB':>8} {'adds MB':>7} {'runner':7} {'lists = dataset':30} recipe"
    )
    for language, row in figures.items():
        if language == "rejected":
            continue
        if "error" in row:
            print(f"{language:10} {row['instance']:34} ERROR {row['error']}")
            continue
        ratio = f"{row['cold_vs_python']}/{row['warm_vs_python']}"
        print(
            f"{language:10} {row['instance']:34} {row['cold_s']:7} {row['warm_s']:7} {ratio:>9} "
            f"{row['warm_validation_s']:10} {row['image_mb']:8} {row['image_adds_mb']:7} {row['runner']:7} "
            f"{row['lists']['summary']:30} {row['recipe']}"
        )
    rejected = figures["rejected"]
    print(
        f"\n{rejected['repo']}@{rejected['sha']} ({rejected['toolchain']}): buildable={rejected['buildable']} "
        f"in {' / '.join(map(str, rejected['seconds']))} s, {rejected['containers_created']} container(s) created: "
        f"{rejected['problem']}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
