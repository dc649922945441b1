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
import json
import subprocess
import tempfile
import time
from pathlib import Path

import docker
from _real import FIXTURES, HOST_CA, clone_bundle, executor_for, measure, remove_images

from swe_forge_dagster.environments.candidates import environment_candidates
from swe_forge_dagster.environments.environment import Environments
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.export.swebench import read_instances
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE

INSTANCES = ("marshmallow-code__marshmallow-1359", "marshmallow-code__marshmallow-1343")
LAYER_TASKS = {
    "tox-dev/filelock#498": "721b37bcbdb4c431441fa8e5d9377cf9f0e059f2",
    "tox-dev/filelock#511": "7f2247d8",
}  # merged commits; the task's base is the parent


def layer_figures(client: docker.DockerClient, tmp: Path) -> dict:
    """Build the environment of two filelock tasks with differing manifests, then alternate between them."""
    remote = clone_bundle(tmp, "tox-dev/filelock")
    rev_parse = ["git", "-C", str(remote), "rev-parse"]
    bases = {
        task: subprocess.run([*rev_parse, f"{sha}^"], capture_output=True, text=True, check=True).stdout.strip()
        for task, sha in LAYER_TASKS.items()
    }
    cache = RepoCache(tmp / "layer-cache", f"file://{tmp}/remotes/{{repo}}.git")
    cache.fetch("tox-dev/filelock", list(bases.values()))
    sandbox = sandbox_config(image=DEFAULT_BASE_IMAGE, ca_bundle=HOST_CA if HOST_CA.is_file() else None, build=True)
    environments = Environments(client, cache, sandbox)
    first = next(iter(bases.values()))
    recipe = environment_candidates(
        cache, "tox-dev/filelock", first, available=lambda image: image == DEFAULT_BASE_IMAGE
    ).recipes[0]
    rows, made = [], set()
    try:
        for round_ in range(2):
            for task, base in bases.items():
                started = time.perf_counter()
                image, reused = environments.image("tox-dev/filelock", base, recipe)
                made.add(image)
                rows.append(
                    {
                        "task": task,
                        "round": round_ + 1,
                        "image": image.rsplit(":", 1)[1],
                        "reused": reused,
                        "seconds": round(time.perf_counter() - started, 2),
                        "adds_mb": round((environments.own_bytes(image) or 0) / 1e6, 1),
                    }
                )
    finally:
        remove_images(client, made)  # layers first: they sit on the repository's image
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
        executor = executor_for(client, Path(tmp))
        for inst in [i for i in lite if i.instance_id in INSTANCES]:
            clone_bundle(Path(tmp), inst.repo)
            row, result = measure(inst, executor)
            figures[inst.instance_id] = row
            remove_images(client, {result.image})
        if args.layers:
            figures["layers"] = layer_figures(client, Path(tmp))
    if not args.json_only:
        print(f"{'instance':38} {'env+proof cold s':>16} {'warm s':>7} {'4 runs s':>8} {'image MB':>9} {'adds MB':>8}")
        for name, row in figures.items():
            if name != "layers":
                print(
                    f"{name:38} {row['cold_s']:16} {row['warm_s']:7} {row['warm_validation_s']:8} "
                    f"{row['image_mb']:9} {row['image_adds_mb']:8}  {row['recipe']}"
                )
        if "layers" in figures:
            print(f"\nlayers ({figures['layers']['recipe']}):")
            print(f"{'task':22} {'round':>5} {'image':>30} {'reused':>6} {'s':>7} {'adds MB':>8}")
            for row in figures["layers"]["builds"]:
                print(
                    f"{row['task']:22} {row['round']:5} {row['image']:>30} {row['reused']!s:>6} {row['seconds']:7} "
                    f"{row['adds_mb']:8}"
                )
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
