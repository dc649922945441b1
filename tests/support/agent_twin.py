"""The LLM client the agent tests drive against the OpenAI twin, and readers of what the twin was asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin
from swe_forge_dagster.execution.sandbox import CommandResult
from swe_forge_dagster.llm.cache import AnswerCache
from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.llm.ledger import CallLedger
from swe_forge_dagster.tasks.agent_tools import AgentTool, run_agent

KEY = "sk-or-test-key-0123456789abcdef"
MODEL = "openai/gpt-5.2-codex:nitro"


def make_client(twin: OpenAITwin, root: Path) -> LLMClient:
    """A real `LLMClient` on the twin, with its answer cache and call ledger under `root`."""
    return LLMClient(
        twin.url, KEY, MODEL, cache=AnswerCache(root / "answers.sqlite"), ledger=CallLedger(root / "llm_calls")
    )


def lines(path: Path) -> list[dict[str, Any]]:
    """The records of a JSONL transcript."""
    return [json.loads(line) for line in path.read_text().splitlines()]


def tool_names(request: dict[str, Any]) -> list[str]:
    """The names of the tools a chat request offered."""
    return [tool["function"]["name"] for tool in request["tools"]]


class FakeSandbox:
    """Answers commands from a table, so the loop's rules are checked without Docker."""

    def __init__(self, answers: dict[str, tuple[int, str]]) -> None:
        self.answers = answers
        self.commands: list[str] = []

    def run(self, command: str, timeout: float = 600, max_output: int = 30000) -> CommandResult:
        self.commands.append(command)
        code, output = self.answers.get(command, (127, f"bash: {command}: command not found"))
        return CommandResult(command, code, output, False, 0.01, False)


class Answer(BaseModel):
    value: int


def count_files(client: LLMClient, box: FakeSandbox, transcript: Path, **limits: int) -> int:
    """One episode of the small agent the loop tests use: count the files with `shell`, then `submit_answer`."""
    return run_agent(
        client,
        box,  # type: ignore[arg-type]
        "You are in a repository. Use the shell tool to list the files, then submit how many there are.",
        ["How many files are in the current directory?"],
        [AgentTool("submit_answer", "submit the number of files", Answer)],
        lambda answer: answer.value,
        stage="demo",
        item="x",
        transcript_path=transcript,
        **{"max_turns": 50, **limits},
    )
