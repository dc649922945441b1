"""Benchmark task building on the test world: seconds per task cold and warm, LLM calls and tokens per task.

Why: a task costs an environment agent, an image build, for a PR without tests a test agent, and
four suite runs, and which of them dominates decides where to spend effort. Cold (no environment
image, empty LLM answer cache) is what a new repository costs; warm (image and answers present) is
what a re-run costs, and it must make no LLM call and build no image. The agents are the real ones,
in real Docker sandboxes, against the OpenAI twin scripted with the tool calls a good model makes
(as in tests/test_agents.py); tokens are the twin's count (about a quarter of the prompt's characters).

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

from swe_forge_dagster.llm.cache import AnswerCache
from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.llm.ledger import CallLedger
from swe_forge_dagster.tasks.agents import JUNIT_OPTIONS, AgentFailed, find_environment, write_tests
from swe_forge_dagster.tasks.execute import EnvRecipe, TaskBuildError, TaskExecutor, env_image_tag, patch_adding_files
from swe_forge_dagster.tasks.patch import split_diff
from swe_forge_dagster.tasks.repo_cache import RepoCache
from swe_forge_dagster.testing.git_world import WorldPR, build_git_world
from swe_forge_dagster.testing.openai_twin import OpenAITwin, ToolCall

KEY = "bench-key"
MODEL = "bench/agent-model"
BASE_IMAGE = "swe-forge-base:bookworm"
VENV = (
    "python -m venv --system-site-packages /opt/venv && . /opt/venv/bin/activate "
    "&& pip install --no-build-isolation --no-deps -e ."
)
# What the scripted environment agent's submission becomes: known up front so a cold start can remove its image.
RECIPE = EnvRecipe((VENV,), f"python -m pytest -q {JUNIT_OPTIONS} {{tests}}", BASE_IMAGE)
TASKS = [("acme-labs/tinycalc", 12), ("northwind/datekit", 7)]  # with tests; without (needs the test agent)
PHASES = ("repo", "env_agent", "image", "test_agent", "validate")
TARGETS = {"warm_llm_calls": 0, "warm_images_built": 0}


def in_files(ids: list[str], files: list[str]) -> list[str]:
    """SWE-bench's scope: the tests of the files the test patch touches."""
    return sorted(i for i in ids if i.split("::")[0] in files)


def scripts(pr: WorldPR) -> tuple[list[ToolCall], list[ToolCall]]:
    """The environment agent's and (for a PR without tests) the test agent's calls, as a good model makes them."""
    env = [
        ToolCall("shell", {"command": "ls"}),
        ToolCall("shell", {"command": "cat pyproject.toml"}),
        ToolCall("submit_environment", {"install_commands": [VENV], "test_command": "python -m pytest -q"}),
    ]
    if pr.test_files:
        return env, []
    files = [{"path": path, "content": content} for path, content in sorted(pr.agent_tests.items())]
    expected = in_files(pr.expected_fail_to_pass, sorted(pr.agent_tests))
    return env, [
        ToolCall("shell", {"command": f"cat {' '.join(pr.src_files)} && ls tests"}),
        ToolCall("submit_tests", {"files": files, "fail_to_pass": expected, "pass_to_pass": []}),
    ]


def run_task(
    pr: WorldPR, executor: TaskExecutor, client: LLMClient, twin: OpenAITwin, work: Path, after_runs: int
) -> dict[str, Any]:
    """One task end to end, timed per phase, with the LLM calls and tokens it cost (client.stats deltas).

    The scripts are queued every time; a warm pass answers from the cache, so they stay unconsumed
    and are cleared, and any call that does reach the twin shows up in the counts.
    """
    item = f"{pr.repo}#{pr.number}"
    env_script, test_script = scripts(pr)
    seconds = dict.fromkeys(PHASES, 0.0)
    before = client.stats.snapshot()
    twin.clear_queue()
    twin.queue(*env_script)
    started = mark = time.perf_counter()

    def lap(phase: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        seconds[phase] += now - mark
        mark = now

    executor.cache.ensure(pr.repo)
    executor.cache.fetch(pr.repo, [pr.base_sha, pr.head_sha])
    tree = executor.export_tree(pr.repo, pr.base_sha, work / "base")
    lap("repo")
    recipe = find_environment(client, executor.client, tree, base_image=BASE_IMAGE, item=item,
                              transcript_path=work / "environment.jsonl")  # fmt: skip
    lap("env_agent")
    image, cached = executor.environment_image(pr.repo, pr.base_sha, recipe)
    lap("image")
    extra = files = None
    if test_script:
        twin.clear_queue()
        twin.queue(*test_script)
        patch = split_diff(executor.cache.diff(pr.repo, pr.base_sha, pr.head_sha)).patch
        fixed = executor.export_tree(pr.repo, pr.head_sha, work / "fixed")
        files = write_tests(client, executor.client, fixed, pr_title=pr.title, pr_body=pr.body, patch=patch,
                            recipe=recipe, image=image, transcript_path=work / "tests.jsonl", item=item)  # fmt: skip
        extra = patch_adding_files(files)
        lap("test_agent")
    result = executor.validate_pr(pr.repo, pr.base_sha, pr.head_sha, recipe, after_runs=after_runs,
                                  extra_test_patch=extra)  # fmt: skip
    lap("validate")
    twin.clear_queue()
    after = client.stats
    expected = pr.expected_fail_to_pass if files is None else in_files(pr.expected_fail_to_pass, sorted(files))
    verdict = result.validation
    return {
        "task": item, "seconds": round(time.perf_counter() - started, 2),
        "phases": {name: round(value, 2) for name, value in seconds.items()},
        "image": image, "image_built": not cached, "llm_calls": after.calls - before.calls,
        "cache_hits": after.cache_hits - before.cache_hits, "prompt_tokens": after.prompt_tokens - before.prompt_tokens,
        "completion_tokens": after.completion_tokens - before.completion_tokens,
        "accepted": verdict.accepted, "reason": verdict.reason, "fail_to_pass": verdict.fail_to_pass,
        "ok": verdict.accepted and verdict.fail_to_pass == expected, "expected": expected,
    }  # fmt: skip


def run_pass(prs: list[WorldPR], executor: TaskExecutor, twin: OpenAITwin, work: Path, after_runs: int) -> list[dict]:
    """Every task with one new client on the shared answer cache in `work`, as a fresh run process would."""
    client = LLMClient(twin.url, KEY, MODEL, cache=AnswerCache(work / "answers.sqlite"),
                       ledger=CallLedger(work / "llm_calls"))  # fmt: skip
    with client, tempfile.TemporaryDirectory(dir=work) as trees:
        return [run_task(pr, executor, client, twin, Path(trees) / f"{i}", after_runs) for i, pr in enumerate(prs)]


def remove_images(docker_client: docker.DockerClient, tags: set[str]) -> None:
    for tag in tags:
        with contextlib.suppress(docker.errors.ImageNotFound):
            docker_client.images.remove(tag, force=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--after-runs", type=int, default=3, help="suite runs with the fix, per validation")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="simulated latency the twin adds per call")
    parser.add_argument("--json-only", action="store_true", help="print only the final JSON line")
    args = parser.parse_args(argv)
    say = (lambda *_: None) if args.json_only else (lambda *a: print(*a, flush=True))

    docker_client = docker.from_env()
    tags = {env_image_tag(repo, RECIPE) for repo, _ in TASKS}
    problem, cold, warm = None, [], []
    with tempfile.TemporaryDirectory(prefix="bench-tasks-") as tmp, OpenAITwin(api_key=KEY) as twin:
        twin.set_latency(args.latency_ms / 1000)
        work = Path(tmp)
        world = build_git_world(work / "world")
        prs = [world.pr(repo, number) for repo, number in TASKS]
        executor = TaskExecutor(docker_client, RepoCache(work / "repo-cache", world.url_template))
        remove_images(docker_client, tags)  # start cold: every image is built in this run
        try:
            cold = run_pass(prs, executor, twin, work, args.after_runs)
            tags |= {row["image"] for row in cold}
            warm = run_pass(prs, executor, twin, work, args.after_runs)
        except (AgentFailed, TaskBuildError) as exc:
            problem = f"{type(exc).__name__}: {exc}"
        finally:
            remove_images(docker_client, tags)
    bad = [f"{p} {r['task']}: accepted={r['accepted']} ({r['reason']}) F2P {r['fail_to_pass']} != {r['expected']}"
           for p, rows in (("cold", cold), ("warm", warm)) for r in rows if not r["ok"]]  # fmt: skip
    if problem or bad:
        print(f"CORRECTNESS FAILURE: {problem or '; '.join(bad)}", file=sys.stderr)
        return 1

    figures: dict[str, Any] = {"after_runs": args.after_runs, "latency_ms": args.latency_ms, "tasks": {}}
    for c, w in zip(cold, warm, strict=True):
        figures["tasks"][c["task"]] = {
            f"{name}_{key}": row[key] for name, row in (("cold", c), ("warm", w))
            for key in ("seconds", "phases", "image_built", "llm_calls", "prompt_tokens", "completion_tokens")
        } | {"fail_to_pass": c["fail_to_pass"]}  # fmt: skip
    figures["cold_s"] = round(sum(r["seconds"] for r in cold), 2)
    figures["warm_s"] = round(sum(r["seconds"] for r in warm), 2)
    figures["cold_llm_calls"] = sum(r["llm_calls"] for r in cold)
    figures["warm_llm_calls"] = sum(r["llm_calls"] for r in warm)
    figures["warm_images_built"] = sum(r["image_built"] for r in warm)
    passed = {name: figures[name] == limit for name, limit in TARGETS.items()}
    figures["pass"] = passed

    say(f"tasks: {', '.join(r['task'] for r in cold)}; {args.after_runs} after-runs; latency {args.latency_ms:g} ms")
    say("correctness: both accepted in both passes with the expected FAIL_TO_PASS (datekit: in the agent's files)")
    header = f"{'pass':5} {'task':22} {'total s':>8} " + " ".join(f"{p:>10}" for p in PHASES)
    say(header + f" {'image':>6} {'calls':>5} {'hits':>5} {'tok in':>7} {'tok out':>7}")
    for name, rows in (("cold", cold), ("warm", warm)):
        for r in rows:
            say(f"{name:5} {r['task']:22} {r['seconds']:8.2f} " + " ".join(f"{r['phases'][p]:10.2f}" for p in PHASES)
                + f" {'built' if r['image_built'] else 'cached':>6} {r['llm_calls']:5} {r['cache_hits']:5}"
                f" {r['prompt_tokens']:7} {r['completion_tokens']:7}")  # fmt: skip
    say(f"total: cold {figures['cold_s']}s, {figures['cold_llm_calls']} LLM calls; warm {figures['warm_s']}s, "
        f"{figures['warm_llm_calls']} LLM calls; env images removed: {', '.join(sorted(tags))}")  # fmt: skip
    for name, limit in TARGETS.items():
        say(f"  {name:18} {figures[name]:>4}  target == {limit}  {'ok' if passed[name] else 'MISSED'}")
    if not all(passed.values()):
        say("MISSED: " + ", ".join(name for name, ok in passed.items() if not ok))
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
