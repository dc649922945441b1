"""Benchmark task building on the test world: seconds per task cold and warm, LLM calls and tokens per task.

Why: a task costs an environment agent, an image build, for a PR without tests a test agent, and
four suite runs, and which of them dominates decides where to spend effort. The tasks go through
`TaskBuilder`, the stage code the Dagster task assets run (patch → environment → tests →
validation → quality → export), timed per stage. Cold = no environment image, no stored recipe,
empty LLM answer cache: what a new repository costs. Warm = a fresh task folder on the same
caches: the stored recipe and the cached image skip the environment agent entirely, answers come
from the cache; it must make no LLM call and build no image. The agents are the real ones in real
Docker sandboxes, answered by the OpenAI twin with `world_agent_responder` (the calls a good model
makes); tokens are the twin's count (about a quarter of the prompt's characters).

    .venv/bin/python benchmarks/tasks.py [--after-runs 3] [--latency-ms 0] [--json-only]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import docker
import pyarrow as pa

from swe_forge_dagster.candidates.datasets import ENRICHED_PRS, ENRICHED_PRS_SCHEMA, partition_file
from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin
from swe_forge_dagster.demo.worlds.git_world import build_git_world, enriched_pr_rows
from swe_forge_dagster.demo.worlds.world_agent import TEST_COMMAND, VENV_INSTALL, world_agent_responder
from swe_forge_dagster.environments.environment import EnvRecipe, env_image_tag
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.repo_cache import RepoCache
from swe_forge_dagster.lake.writer import write_partition
from swe_forge_dagster.llm.cache import AnswerCache
from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.llm.ledger import CallLedger
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE
from swe_forge_dagster.tasks.agents import recipe_test_command
from swe_forge_dagster.tasks.prove import TaskExecutor
from swe_forge_dagster.tasks.recipes import RecipeStore
from swe_forge_dagster.tasks.stage_declaration import ENVIRONMENT, VALIDATION
from swe_forge_dagster.tasks.stages import TaskBuilder
from swe_forge_dagster.tasks.work import STAGES

KEY, MODEL = "bench-key", "bench/agent-model"
BASE_IMAGE = DEFAULT_BASE_IMAGE
# The benchmark's own name for the base image: its environment images get their own tags (the recipe
# key includes the base image), so starting cold removes nothing that tests or other runs use.
BENCH_BASE = ("swe-forge-base", "bench-tasks")
HOUR = "2024-03-01-09:00"
TASKS = {"acme-labs__tinycalc-12": ("acme-labs/tinycalc", 12), "northwind__datekit-7": ("northwind/datekit", 7)}
TARGETS = {"warm_llm_calls": 0, "warm_images_built": 0}
COUNTED = ("calls", "cache_hits", "prompt_tokens", "completion_tokens")


class Clients:
    """The LLM factory the stages call; every client it made, so a task's calls can be summed."""

    def __init__(self, twin: OpenAITwin, work: Path) -> None:
        self.twin, self.work, self.made = twin, work, []

    def __call__(self) -> LLMClient:
        client = LLMClient(
            self.twin.url,
            KEY,
            MODEL,
            cache=AnswerCache(self.work / "answers.sqlite"),
            ledger=CallLedger(self.work / "llm_calls"),
        )
        self.made.append(client)
        return client

    def totals(self) -> dict[str, int]:
        stats = [client.stats for client in self.made]
        return {name: sum(getattr(s, name) for s in stats) for name in COUNTED}


def run_task(builder: TaskBuilder, task_id: str, clients: Clients) -> dict[str, Any]:
    """Every stage of one task, timed; the LLM calls and tokens its stages spent."""
    clients.made.clear()
    seconds: dict[str, float] = {}
    outcomes = {}
    started = time.perf_counter()
    for stage in STAGES:
        mark = time.perf_counter()
        outcomes[stage] = builder.run(stage, task_id, clients)
        seconds[stage] = round(time.perf_counter() - mark, 2)
    env = builder.work(task_id).load_optional(ENVIRONMENT.name) or {}
    proven = builder.work(task_id).load_optional(VALIDATION.name) or {}
    rejected = [f"{stage}: {o.reason}" for stage, o in outcomes.items() if o.status == "rejected"]
    return {
        "task": task_id,
        "seconds": round(time.perf_counter() - started, 2),
        "stages": seconds,
        "image": env.get("image"),
        "image_built": env.get("image_cached") is False,
        "recipe_source": env.get("recipe_source"),
        "accepted": not rejected,
        "rejected": rejected,
        "fail_to_pass": proven.get("FAIL_TO_PASS"),
        **clients.totals(),
    }


def make_builder(client: docker.DockerClient, work: Path, world_url: str, name: str, after_runs: int) -> TaskBuilder:
    base = ":".join(BENCH_BASE)
    sandbox = sandbox_config(image=base, build=True)
    return TaskBuilder(
        executor=TaskExecutor(client, RepoCache(work / "repos", world_url), sandbox),
        lake_dir=work / "lake",
        work_root=work / f"work-{name}",
        output_dir=work / f"out-{name}",
        recipes=RecipeStore(work / "recipes"),
        base_image=base,
        agent_sandbox=sandbox,
        after_runs=after_runs,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--after-runs", type=int, default=3, help="suite runs with the fix, per validation")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="simulated latency the twin adds per call")
    parser.add_argument("--json-only", action="store_true", help="print only the final JSON line")
    args = parser.parse_args(argv)
    say = (lambda *_: None) if args.json_only else (lambda *a: print(*a, flush=True))

    docker_client = docker.from_env()
    docker_client.images.get(BASE_IMAGE).tag(*BENCH_BASE)
    recipe = EnvRecipe((VENV_INSTALL,), recipe_test_command(TEST_COMMAND), ":".join(BENCH_BASE))
    images = {env_image_tag(repo, recipe) for repo, _ in TASKS.values()}
    passes: dict[str, list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-tasks-") as tmp:
        work = Path(tmp)
        world = build_git_world(work / "world")
        rows = [r for r in enriched_pr_rows(world) if (r["repo_name"], r["number"]) in TASKS.values()]
        table = pa.Table.from_pylist(rows, schema=ENRICHED_PRS_SCHEMA)
        write_partition(table, partition_file(work / "lake", ENRICHED_PRS, HOUR).parent, ENRICHED_PRS_SCHEMA)
        with OpenAITwin(world_agent_responder(world), api_key=KEY) as twin:
            twin.set_latency(args.latency_ms / 1000)
            clients = Clients(twin, work)
            try:
                for name in ("cold", "warm"):
                    builder = make_builder(docker_client, work, world.url_template, name, args.after_runs)
                    if name == "cold":  # start cold: remove the images a previous run may have left
                        _remove(docker_client, images)
                    passes[name] = [run_task(builder, task_id, clients) for task_id in TASKS]
                    images |= {row["image"] for row in passes[name] if row["image"]}
            finally:
                _remove(docker_client, images | {":".join(BENCH_BASE)})
    bad = [f"{name} {r['task']}: {r['rejected']}" for name, rows in passes.items() for r in rows if not r["accepted"]]
    if bad or len(passes) < 2:
        print(f"CORRECTNESS FAILURE: {'; '.join(bad) or 'a pass did not finish'}", file=sys.stderr)
        return 1

    cold, warm = passes["cold"], passes["warm"]
    figures: dict[str, Any] = {"after_runs": args.after_runs, "latency_ms": args.latency_ms, "tasks": {}}
    for c, w in zip(cold, warm, strict=True):
        figures["tasks"][c["task"]] = {
            f"{name}_{key}": row[key]
            for name, row in (("cold", c), ("warm", w))
            for key in ("seconds", "stages", "image_built", "recipe_source", *COUNTED)
        } | {"fail_to_pass": c["fail_to_pass"]}
    figures["cold_s"] = round(sum(r["seconds"] for r in cold), 2)
    figures["warm_s"] = round(sum(r["seconds"] for r in warm), 2)
    figures["cold_llm_calls"] = sum(r["calls"] for r in cold)
    figures["warm_llm_calls"] = sum(r["calls"] for r in warm)
    figures["warm_images_built"] = sum(r["image_built"] for r in warm)
    passed = {name: figures[name] == limit for name, limit in TARGETS.items()}
    figures["pass"] = passed

    say(
        f"tasks: {', '.join(TASKS)}; {args.after_runs} after-runs; latency {args.latency_ms:g} ms; "
        "every stage of the Dagster task assets (TaskBuilder)"
    )
    say(
        f"{'pass':5} {'task':24} {'total s':>8} "
        + " ".join(f"{s:>11}" for s in STAGES)
        + f" {'image':>6} {'recipe':>6} {'calls':>5} {'hits':>5} {'tok in':>7} {'tok out':>7}"
    )
    for name, rows in passes.items():
        for r in rows:
            say(
                f"{name:5} {r['task']:24} {r['seconds']:8.2f} "
                + " ".join(f"{r['stages'][s]:11.2f}" for s in STAGES)
                + f" {'built' if r['image_built'] else 'cached':>6} {r['recipe_source']:>6} {r['calls']:5}"
                f" {r['cache_hits']:5} {r['prompt_tokens']:7} {r['completion_tokens']:7}"
            )
    say(
        f"total: cold {figures['cold_s']}s, {figures['cold_llm_calls']} LLM calls; "
        f"warm {figures['warm_s']}s, {figures['warm_llm_calls']} LLM calls"
    )
    for name, limit in TARGETS.items():
        say(f"  {name:18} {figures[name]:>4}  target == {limit}  {'ok' if passed[name] else 'MISSED'}")
    print(json.dumps(figures))
    return 0 if all(passed.values()) else 1


def _remove(client: docker.DockerClient, tags: set[str]) -> None:
    for tag in tags:
        with contextlib.suppress(docker.errors.ImageNotFound, docker.errors.APIError):
            client.images.remove(tag, force=True)


if __name__ == "__main__":
    sys.exit(main())
