"""A short smoke run against a real model on this machine: opt-in, not part of the default CI.

    SWE_FORGE_REAL_MODEL=~/.swe-forge/cache/models/qwen2.5-coder-1.5b.gguf .venv/bin/pytest -m real_model

Serves the file with llama.cpp (`llm.local.engine`, the `local-llm` extra) on a free loopback port and sends one
triage call and a short tool loop through the product's client: the answer must be parsed (well-formed or
repaired), and the loop must end with an accepted answer or `AgentFailed` and its reason, whatever the model does.
Skipped, with the reason, when the variable is unset or the engine is not installed (`swe-forge llm fetch` and
`swe-forge llm serve` install both).
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.llm.functions import PRFacts, classify_difficulty
from swe_forge_dagster.llm.ledger import CallLedger
from swe_forge_dagster.tasks.agent_tools import AgentFailed
from tests.support.agent_twin import FakeSandbox, count_files, lines

pytestmark = pytest.mark.real_model
MODEL = os.environ.get("SWE_FORGE_REAL_MODEL", "")


@pytest.fixture(scope="module")
def server_url() -> str:
    if not MODEL or not Path(MODEL).is_file():
        pytest.skip("set SWE_FORGE_REAL_MODEL to a GGUF file (swe-forge llm fetch) to run the real-model smoke")
    pytest.importorskip("xllamacpp", reason="the engine is not installed: swe-forge llm serve installs it")
    from swe_forge_dagster.llm.local.engine import ServeOptions, start_server

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = start_server(Path(MODEL), ServeOptions(port=port, threads=2, context=4096), alias="smoke")
    yield f"http://127.0.0.1:{port}/v1"
    del server


def test_a_triage_call_is_answered_and_parsed(server_url: str, tmp_path: Path) -> None:
    client = LLMClient(server_url, "local", "smoke", ledger=CallLedger(tmp_path), timeout=600)
    pr = PRFacts("org/calc", 7, "Fix rounding of negatives", "-2.5 rounds to -2", ["calc.py"], 3, 1, "Python")
    assert classify_difficulty(client, pr).difficulty in ("easy", "medium", "hard")
    assert {row["outcome"] for row in lines(tmp_path / "calls.jsonl")} <= {"ok", "repair"}


def test_a_short_tool_loop_ends_with_an_answer_or_a_reason(server_url: str, tmp_path: Path) -> None:
    client = LLMClient(server_url, "local", "smoke", ledger=CallLedger(tmp_path), timeout=600)
    box = FakeSandbox({"ls": (0, "a.py\nb.py"), "ls -la": (0, "a.py\nb.py"), "ls -1": (0, "a.py\nb.py")})
    try:
        answer = count_files(client, box, tmp_path / "transcript.jsonl", max_turns=3)
        assert isinstance(answer, int)
    except AgentFailed as exc:
        assert exc.reason
    assert lines(tmp_path / "transcript.jsonl")
