"""Benchmark LLM triage against the OpenAI twin: calls in flight, wall time, and a free re-run.

Why: with a 1-10 s provider latency, triage time is set by how many calls are in flight, not by
CPU, so the client must keep its limit busy: N calls at L latency with K in flight should take
about N × L / K, and at most 1.3× that. A re-run over the same PRs (a new process on the same
cache) must make no calls at all, because every answer was paid for once already. The calls go
through the real `openai` SDK to the loopback twin, fanned out as `classify_hour` does, and the
sequential path (one call in flight) is timed on a sample in the same run as the baseline.

    .venv/bin/python benchmarks/llm.py [--candidates 500] [--latency-ms 50] [--in-flight 10] [--json-only]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin, triage_responder
from swe_forge_dagster.llm.cache import AnswerCache
from swe_forge_dagster.llm.client import LLMAuthError, LLMClient, LLMError
from swe_forge_dagster.llm.functions import DifficultyTriage, PRFacts, classify_difficulty
from swe_forge_dagster.llm.ledger import CallLedger

KEY = "bench-key"
MODEL = "bench/triage-model"
SEED = 7
BASELINE_SAMPLE = 50  # sequential calls actually timed; the rest is extrapolated to keep the run short
LANGS = {"Python": "py", "Go": "go", "Rust": "rs", "TypeScript": "ts", "Java": "java"}
VERBS = ["Fix", "Add", "Refactor", "Handle", "Support", "Remove", "Speed up", "Document", "Validate", "Rework"]
THINGS = [
    "rounding of negatives",
    "config reload",
    "retry backoff",
    "unicode paths",
    "the CLI parser",
    "empty responses",
    "timezone offsets",
    "plugin loading",
    "cache eviction",
    "TLS errors",
]
DIRS = ["src", "lib", "core", "api", "cli", "internal", "pkg", "utils"]


def make_candidates(n: int, seed: int = SEED) -> list[PRFacts]:
    """`n` PRs whose prompts all differ, from a seeded RNG so every run asks exactly the same questions.

    Line counts are log-uniform (1-3000) so the twin's size-based answer spreads over all three
    tiers; a duplicate prompt would be a free cache hit and flatter the cold run, so it is redrawn.
    """
    rng = random.Random(seed)
    out: list[PRFacts] = []
    seen: set[tuple[Any, ...]] = set()
    while len(out) < n:
        language, ext = rng.choice(list(LANGS.items()))
        repo = f"org{rng.randrange(40)}/{rng.choice(DIRS)}-{rng.choice(['kit', 'hub', 'lab', 'db', 'io'])}"
        thing = rng.choice(THINGS)
        title = f"{rng.choice(VERBS)} {thing} (#{rng.randrange(1, 20_000)})"
        body = f"When {thing} is involved, step {rng.randrange(100)} fails with code {rng.randrange(1000)}." * (
            1 + rng.randrange(4)
        )
        files = sorted({f"{rng.choice(DIRS)}/mod{rng.randrange(60)}.{ext}" for _ in range(1 + rng.randrange(12))})
        additions, deletions = int(10 ** rng.uniform(0, 3.5)), int(10 ** rng.uniform(0, 3))
        facts = PRFacts(repo, len(out) + 1, title, body, files, additions, deletions, language)
        prompt = (repo, language, title, body, tuple(files), additions, deletions)
        if prompt not in seen:
            seen.add(prompt)
            out.append(facts)
    return out


def run(twin: OpenAITwin, work: Path, prs: list[PRFacts], in_flight: int) -> dict[str, Any]:
    """Classify `prs` with a new client on `work`'s cache, as a fresh run process would, `in_flight` at a time.

    The fan-out is `classify_hour`'s: a pool of `in_flight` workers over the client's own limit,
    an LLMError kept as the item's result (an auth error aborts).
    """
    twin.reset()
    client = LLMClient(
        twin.url,
        KEY,
        MODEL,
        cache=AnswerCache(work / "answers.sqlite"),
        ledger=CallLedger(work / "llm_calls"),
        max_in_flight=in_flight,
    )

    def one(pr: PRFacts) -> DifficultyTriage | LLMError:
        try:
            return classify_difficulty(client, pr)
        except LLMAuthError:
            raise
        except LLMError as exc:
            return exc

    started = time.perf_counter()
    with client, ThreadPoolExecutor(max_workers=max(1, in_flight), thread_name_prefix="triage") as pool:
        results = list(pool.map(one, prs))
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "results": results,
        "stats": client.stats.snapshot(),
        "requests": twin.count(),
        "max_in_flight": twin.max_in_flight,
    }


def answers(results: list[DifficultyTriage | LLMError]) -> list[tuple[str, float] | None]:
    """What each item was classified as (None for an error), to compare runs item by item."""
    return [(r.difficulty, r.score) if isinstance(r, DifficultyTriage) else None for r in results]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=500, help="distinct PRs to classify")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="simulated latency the twin adds per call")
    parser.add_argument("--in-flight", type=int, default=10, help="the client's limit and the pool's workers")
    parser.add_argument("--json-only", action="store_true", help="print only the final JSON line")
    args = parser.parse_args(argv)
    say = (lambda *_: None) if args.json_only else (lambda *a: print(*a, flush=True))

    n, k, latency = args.candidates, args.in_flight, args.latency_ms / 1000
    prs = make_candidates(n)
    sample = prs[: min(BASELINE_SAMPLE, n)]
    with (
        tempfile.TemporaryDirectory(prefix="bench-llm-") as tmp,
        OpenAITwin(triage_responder, api_key=KEY, latency=latency) as twin,
    ):
        cold = run(twin, Path(tmp) / "ours", prs, k)
        warm = run(twin, Path(tmp) / "ours", prs, k)  # same cache path, new client: a re-run
        base = run(twin, Path(tmp) / "baseline", sample, 1)
        ledger = Counter(
            json.loads(line)["outcome"]
            for line in (Path(tmp) / "ours" / "llm_calls" / "calls.jsonl").read_text().splitlines()
        )

    invalid = [pr.item for pr, r in zip(prs, cold["results"], strict=True) if not isinstance(r, DifficultyTriage)]
    cold_answers = answers(cold["results"])
    if invalid or answers(warm["results"]) != cold_answers or answers(base["results"]) != cold_answers[: len(sample)]:
        print(
            f"CORRECTNESS FAILURE: {len(invalid)}/{n} cold results not a valid DifficultyTriage {invalid[:5]} "
            f"(first: {next((r for r in cold['results'] if isinstance(r, LLMError)), None)}); re-run answers "
            f"identical: {answers(warm['results']) == cold_answers}; sequential sample identical: "
            f"{answers(base['results']) == cold_answers[: len(sample)]}",
            file=sys.stderr,
        )
        return 1

    ideal = n * latency / k
    base_s = base["seconds"] * n / len(sample)
    stats = cold["stats"]
    figures: dict[str, Any] = {
        "candidates": n,
        "latency_ms": args.latency_ms,
        "in_flight_limit": k,
        "cold_s": round(cold["seconds"], 3),
        "ideal_s": round(ideal, 3),
        "ratio_cold_over_ideal": round(cold["seconds"] / ideal, 3),
        "cold_max_in_flight": cold["max_in_flight"],
        "cold_twin_requests": cold["requests"],
        "cold_calls": stats.calls,
        "cold_prompt_tokens": stats.prompt_tokens,
        "cold_completion_tokens": stats.completion_tokens,
        "cold_repairs": stats.repairs,
        "by_difficulty": dict(sorted(Counter(r.difficulty for r in cold["results"]).items())),
        "warm_twin_requests": warm["requests"],
        "warm_cache_hits": warm["stats"].cache_hits,
        "warm_s": round(warm["seconds"], 3),
        "ledger_outcomes": dict(ledger),
        "baseline_sample": len(sample),
        "baseline_sample_s": round(base["seconds"], 3),
        "baseline_extrapolated_s": round(base_s, 3),
        "speedup_vs_baseline": round(base_s / cold["seconds"], 1),
    }
    bound = round(1.3 * ideal, 3)
    targets = {"cold_s": ("<=", bound), "cold_max_in_flight": ("==", k), "warm_twin_requests": ("==", 0)}
    passed = {
        name: figures[name] <= limit if op == "<=" else figures[name] == limit for name, (op, limit) in targets.items()
    }
    figures["targets"] = {name: f"{op} {limit}" for name, (op, limit) in targets.items()}
    figures["pass"] = passed

    say(f"candidates: {n} distinct PRs (seed {SEED}); twin latency {args.latency_ms:g} ms; {k} calls in flight")
    say(f"correctness: all {n} valid DifficultyTriage; re-run and sequential sample give identical answers")
    say(
        f"cold:     {cold['seconds']:.3f}s for {cold['requests']} twin requests ({stats.calls} calls, "
        f"{stats.repairs} repairs); max in flight {cold['max_in_flight']}; tokens {stats.prompt_tokens} in / "
        f"{stats.completion_tokens} out"
    )
    say(f"          ideal N×L/K = {ideal:.3f}s; wall/ideal = {figures['ratio_cold_over_ideal']}")
    say(f"          difficulty: {figures['by_difficulty']}")
    say(
        f"re-run:   {warm['seconds']:.3f}s, {warm['requests']} twin requests, {figures['warm_cache_hits']} cache hits "
        f"(new client, same cache); ledger outcomes {dict(ledger)}"
    )
    say(
        f"baseline: sequential, 1 in flight: first {len(sample)} calls in {base['seconds']:.3f}s -> EXTRAPOLATED "
        f"×{n / len(sample):g} = {base_s:.2f}s for {n}; ours is {figures['speedup_vs_baseline']}x faster"
    )
    for name, (op, limit) in targets.items():
        say(f"  {name:20} {figures[name]:>8}  target {op} {limit:<6} {'ok' if passed[name] else 'MISSED'}")
    if not all(passed.values()):
        say("MISSED: " + ", ".join(name for name, ok in passed.items() if not ok))
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
