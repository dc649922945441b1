"""`benchmarks/real_model.py agents`: the environment and test-writing agents with a real model, on real repositories.

Two cases from the fixtures: tox-dev/filelock PR 498 (the merge 721b37b against its first parent) and SWE-bench Lite
dev's marshmallow-1359. For each, the environment agent looks for install and test commands from the base tree,
and the test agent writes tests for the fix in the environment image the manifests' recipe gives (proven first,
no LLM, as the pipeline would have it). Each run ends with the agent's accepted answer or `AgentFailed` and its
reason; the figures are its turns (transcript lines), tokens and seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from functools import partial
from pathlib import Path
from typing import Any

import docker

from benchmarks._real import FIXTURES, HOST_CA, executor_for
from swe_forge_dagster.environments.sandboxes import sandbox_config
from swe_forge_dagster.execution.manifest import remembered
from swe_forge_dagster.execution.patch import apply, split_diff
from swe_forge_dagster.export.swebench import SWEBenchInstance, read_instances
from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.llm.ledger import CallLedger
from swe_forge_dagster.settings import DEFAULT_BASE_IMAGE
from swe_forge_dagster.tasks.agent_tools import AgentFailed
from swe_forge_dagster.tasks.agents import find_environment
from swe_forge_dagster.tasks.revalidate_instances import prove_with_manifests
from swe_forge_dagster.tasks.test_agent import write_tests

FILELOCK_MERGE = "721b37bcbdb4c431441fa8e5d9377cf9f0e059f2"
FILELOCK_TITLE = "Raise Timeout, not ValueError, for a non-blocking acquire with a timeout"
FILELOCK_BODY = (
    "Acquiring a read or write lock of a ReadWriteLock with blocking=False and a timeout raises ValueError from the "
    "standard library instead of Timeout when the lock is held elsewhere."
)


def cases(executor: Any, work: Path) -> list[SWEBenchInstance]:
    """The two instances, with their remotes cloned from the fixtures' bundles."""
    from benchmarks._real import clone_bundle

    clone_bundle(work, "tox-dev/filelock")
    clone_bundle(work, "marshmallow-code/marshmallow")
    executor.cache.ensure("tox-dev/filelock")
    executor.cache.fetch("tox-dev/filelock", [FILELOCK_MERGE])
    base = executor.cache.resolve("tox-dev/filelock", f"{FILELOCK_MERGE}^1")
    split = split_diff(executor.cache.diff("tox-dev/filelock", base, FILELOCK_MERGE))  # source half, test half
    filelock = SWEBenchInstance(
        instance_id="tox-dev__filelock-498",
        repo="tox-dev/filelock",
        base_commit=base,
        patch=split.patch,
        test_patch=split.test_patch,
        problem_statement=f"{FILELOCK_TITLE}\n\n{FILELOCK_BODY}",
    )
    dev = FIXTURES / "swebench" / "lite-dev" / "princeton-nlp-SWE-bench_Lite-dev.json"
    marshmallow = next(i for i in read_instances(dev) if i.instance_id == "marshmallow-code__marshmallow-1359")
    return [filelock, marshmallow]


def agents(args: argparse.Namespace, server_type: Any) -> dict[str, Any]:
    work = args.home.resolve() / "agents"
    work.mkdir(parents=True, exist_ok=True)
    client = docker.from_env()
    executor = executor_for(client, work)
    instances = cases(executor, work)
    sandbox = sandbox_config(image=DEFAULT_BASE_IMAGE, ca_bundle=HOST_CA if HOST_CA.is_file() else None, build=True)
    runs: list[dict[str, Any]] = []
    with (
        contextlib.ExitStack() as stack,
        server_type(args.home.resolve(), args.model, args.port, args.threads, 1, args.context) as server,
    ):
        llm = LLMClient(
            server.url, "local", args.model, ledger=CallLedger(work / "ledger"), timeout=1800, max_output_tokens=1024
        )
        stack.callback(llm.close)
        for inst in instances:
            proof, problem, _ = prove_with_manifests(inst, executor)  # the image the test agent works in
            recipe = remembered(executor.cache, inst.repo, inst.base_commit)
            with executor.cache.worktree(inst.repo, inst.base_commit) as tree:
                limits = {"max_turns": args.max_turns, "max_tokens": args.max_tokens, "item": inst.instance_id}
                find = partial(
                    find_environment,
                    llm,
                    client,
                    tree,
                    base_image=DEFAULT_BASE_IMAGE,
                    toolchain="python",
                    sandbox=sandbox.model_copy(update={"network": "bridge"}),
                    **limits,
                )
                runs.append(_run("environment", inst, work, find))
                if proof is None or recipe is None:
                    runs.append({"agent": "tests", "instance": inst.instance_id, "outcome": f"no image: {problem}"})
                    continue
                apply(tree, inst.patch)
                write = partial(
                    write_tests,
                    llm,
                    client,
                    tree,
                    pr_title=inst.problem_statement.splitlines()[0][:200],
                    pr_body=inst.problem_statement,
                    patch=inst.patch,
                    recipe=recipe,
                    image=proof.image,
                    sandbox=sandbox,
                    **limits,
                )
                runs.append(_run("tests", inst, work, write))
    return {"model": args.model, "max_turns": args.max_turns, "max_tokens": args.max_tokens, "runs": runs}


def _run(agent: str, inst: SWEBenchInstance, work: Path, call: Any) -> dict[str, Any]:
    transcript = work / "transcripts" / f"{inst.instance_id}-{agent}.jsonl"
    started = time.perf_counter()
    try:
        answer = call(transcript_path=transcript)
        outcome, reason = "accepted", json.dumps(answer, default=str)[:300]
    except AgentFailed as exc:
        outcome, reason = "failed", exc.reason[:400]
    turns = [json.loads(line) for line in transcript.read_text().splitlines()] if transcript.exists() else []
    figures = {
        "agent": agent,
        "instance": inst.instance_id,
        "outcome": outcome,
        "reason": reason,
        "turns": len(turns),
        "tool_calls": sum(len(t.get("tool_calls") or []) for t in turns),
        "call_forms": sorted({t.get("call_form") or "none" for t in turns}),
        "tokens": sum(t.get("tokens") or 0 for t in turns),
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(figures), flush=True)
    return figures
