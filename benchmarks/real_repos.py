"""Benchmark real repositories: environment seconds cold and warm, validation seconds and image disk, per instance.

Why: our own world's repositories install in seconds; real ones pull dependencies from PyPI, need
an older Python, and run real suites. Per SWE-bench instance (default: Lite dev's marshmallow-1359
and -1343 on the real marshmallow repository from `../shared/fixtures/repos/`), with no
environment given: cold = no environment image (found from the manifests, built, then the
proof: 1 run without the fix + 3 with it); warm = the same again with the image cached. Disk =
the environment image's size and what it adds on top of its base image.

Layers (`--layers`, on by default): two real tox-dev/filelock tasks whose dependency manifests
differ (PRs #498 and #511), one manifest recipe: the first builds the repository's image, the second
a thin layer on it; then the two alternate and nothing is rebuilt. Disk per task = what each image
adds over the image it was built from.

    .venv/bin/python benchmarks/real_repos.py [--json-only] [--no-layers]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import tempfile
import time
from pathlib import Path

import docker

from swe_forge_dagster.execution.environment import Environments
from swe_forge_dagster.execution.manifest import manifest_candidates
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.execution.sandbox import SandboxConfig
from swe_forge_dagster.export.swebench import read_instances
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE
from swe_forge_dagster.tasks.prove import TaskExecutor
from swe_forge_dagster.tasks.revalidate_instances import prove_with_manifests

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
INSTANCES = {"marshmallow-code__marshmallow-1359": "marshmallow-code+marshmallow",
             "marshmallow-code__marshmallow-1343": "marshmallow-code+marshmallow"}  # fmt: skip
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
LAYER_TASKS = {"tox-dev/filelock#498": "721b37bcbdb4c431441fa8e5d9377cf9f0e059f2",
               "tox-dev/filelock#511": "7f2247d8"}  # merged commits; the task's base is the parent  # fmt: skip


def layer_figures(client: docker.DockerClient, tmp: Path) -> dict:
    """Build the environment of two filelock tasks with differing manifests, then alternate between them."""
    remote = tmp / "remotes" / "tox-dev" / "filelock.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(FIXTURES / "repos" / "tox-dev+filelock.bundle"), str(remote)],
                   check=True)  # fmt: skip
    rev_parse = ["git", "-C", str(remote), "rev-parse"]
    bases = {task: subprocess.run([*rev_parse, f"{sha}^"], capture_output=True, text=True, check=True).stdout.strip()
             for task, sha in LAYER_TASKS.items()}  # fmt: skip
    cache = RepoCache(tmp / "layer-cache", f"file://{tmp}/remotes/{{repo}}.git")
    cache.fetch("tox-dev/filelock", list(bases.values()))
    sandbox = SandboxConfig(image=DEFAULT_BASE_IMAGE, ca_bundle=HOST_CA if HOST_CA.is_file() else None)
    environments = Environments(client, cache, sandbox)
    first = next(iter(bases.values()))
    recipe = manifest_candidates(cache, "tox-dev/filelock", first,
                                 available=lambda image: image == DEFAULT_BASE_IMAGE)[0]  # fmt: skip
    rows, made = [], set()
    try:
        for round_ in range(2):
            for task, base in bases.items():
                started = time.perf_counter()
                image, reused = environments.image("tox-dev/filelock", base, recipe)
                made.add(image)
                rows.append({"task": task, "round": round_ + 1, "image": image.rsplit(":", 1)[1],
                             "reused": reused, "seconds": round(time.perf_counter() - started, 2),
                             "adds_mb": round((environments.own_bytes(image) or 0) / 1e6, 1)})  # fmt: skip
    finally:
        for image in sorted(made, key=len, reverse=True):  # layers first: they sit on the repository's image
            with contextlib.suppress(docker.errors.APIError):
                client.images.remove(image, force=True)
    return {"recipe": f"{recipe.base_image}: {recipe.install_commands[-1]}", "builds": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json-only", action="store_true")
    parser.add_argument("--no-layers", dest="layers", action="store_false", help="skip the filelock layer figures")
    args = parser.parse_args(argv)
    client = docker.from_env()
    lite = read_instances(FIXTURES / "swebench" / "lite-dev" / "princeton-nlp-SWE-bench_Lite-dev.json")
    figures: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="bench-real-") as tmp:
        for inst in [i for i in lite if i.instance_id in INSTANCES]:
            remote = Path(tmp) / "remotes" / f"{inst.repo}.git"
            if not remote.exists():
                bundle = FIXTURES / "repos" / f"{INSTANCES[inst.instance_id]}.bundle"
                subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(remote)], check=True)
            cache = RepoCache(Path(tmp) / "cache", f"file://{tmp}/remotes/{{repo}}.git")
            sandbox = SandboxConfig(image=DEFAULT_BASE_IMAGE, ca_bundle=HOST_CA if HOST_CA.is_file() else None)
            executor = TaskExecutor(client, cache, sandbox)
            row: dict = {}
            for phase in ("cold", "warm"):
                started = time.perf_counter()
                result, problem, tried = prove_with_manifests(inst, executor)
                if result is None:
                    raise SystemExit(f"{inst.instance_id}: no environment ({problem})")
                if phase == "cold" and result.image_cached:  # a previous run's image: start cold for real
                    client.images.remove(result.image, force=True)
                    started = time.perf_counter()
                    result, problem, tried = prove_with_manifests(inst, executor)
                    assert result is not None, problem
                runs = [result.before, *result.after]
                row[f"{phase}_s"] = round(time.perf_counter() - started, 2)
                row[f"{phase}_validation_s"] = round(sum(run.seconds for run in runs), 2)
                row[f"{phase}_image_cached"] = result.image_cached
            image = client.images.get(result.image)
            base = client.images.get(tried[-1].split(": ", 1)[0])  # "image: install" of the recipe that worked
            row.update(recipe=tried[-1], accepted=result.validation.accepted,
                       image_mb=round(image.attrs["Size"] / 1e6, 1),
                       image_adds_mb=round((image.attrs["Size"] - base.attrs["Size"]) / 1e6, 1))  # fmt: skip
            figures[inst.instance_id] = row
            with contextlib.suppress(docker.errors.APIError):
                client.images.remove(result.image, force=True)
        if args.layers:
            figures["layers"] = layer_figures(client, Path(tmp))
    if not args.json_only:
        print(f"{'instance':38} {'env+proof cold s':>16} {'warm s':>7} {'4 runs s':>8} {'image MB':>9} {'adds MB':>8}")
        for name, row in figures.items():
            if name != "layers":
                print(f"{name:38} {row['cold_s']:16} {row['warm_s']:7} {row['warm_validation_s']:8} "
                      f"{row['image_mb']:9} {row['image_adds_mb']:8}  {row['recipe']}")  # fmt: skip
        if "layers" in figures:
            print(f"\nlayers ({figures['layers']['recipe']}):")
            print(f"{'task':22} {'round':>5} {'image':>30} {'reused':>6} {'s':>7} {'adds MB':>8}")
            for row in figures["layers"]["builds"]:
                print(f"{row['task']:22} {row['round']:5} {row['image']:>30} {row['reused']!s:>6} {row['seconds']:7} "
                      f"{row['adds_mb']:8}")  # fmt: skip
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
