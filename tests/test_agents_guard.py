"""An agent episode ends with a reason whatever a real model does: no tool call, the same call again and again,
or a spent token budget (`tasks.agent_tools.Guard`), against the OpenAI twin and a fake sandbox.

A 1.5B model served here (issue 26) writes prose, repeats a command it already ran, or answers nothing; each of
these used to run until `max_turns` (200 for the test agent, at ~20 s a turn on this machine). The other
misbehaviours (a hallucinated tool, arguments that are not JSON or break the schema, a text reply) are sent back
as errors: `test_agents_loop.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from swe_forge_dagster.demo.twins.openai_twin import HttpError, OpenAITwin, Text, ToolCall, Usage
from swe_forge_dagster.llm.client import LLMError
from swe_forge_dagster.tasks.agent_tools import SAME_TURNS, SILENT_TURNS, AgentFailed
from tests.support.agent_twin import KEY, FakeSandbox, count_files, lines, make_client


@pytest.fixture
def twin() -> Iterator[OpenAITwin]:
    with OpenAITwin(api_key=KEY) as server:
        yield server


def episode(twin: OpenAITwin, tmp_path: Path, box: FakeSandbox, **limits: int) -> int:
    with make_client(twin, tmp_path) as client:
        return count_files(client, box, tmp_path / "transcript.jsonl", **limits)


def test_a_model_that_stops_calling_tools_ends_the_episode_with_what_it_said(twin: OpenAITwin, tmp_path: Path) -> None:
    twin.queue(*[Text("")] * (SILENT_TURNS - 1), Text("I think the answer is probably two files."))
    with pytest.raises(AgentFailed, match=f"{SILENT_TURNS} answers in a row without a tool call; the last: I think"):
        episode(twin, tmp_path, FakeSandbox({}))
    assert twin.count() == SILENT_TURNS and lines(tmp_path / "transcript.jsonl")[-1]["outcome"] == "stopped"


def test_a_call_asked_for_again_and_again_is_answered_without_running_and_then_ends_the_episode(
    twin: OpenAITwin, tmp_path: Path
) -> None:
    box = FakeSandbox({"ls": (0, "a.py\nb.py")})
    twin.queue(*[ToolCall("shell", {"command": "ls"})] * SAME_TURNS)
    with pytest.raises(AgentFailed, match=f"asked for the same call \\(shell\\) {SAME_TURNS} turns in a row"):
        episode(twin, tmp_path, box)
    assert box.commands == ["ls", "ls"]  # the third and later asks are answered from the second
    turns = lines(tmp_path / "transcript.jsonl")
    assert turns[2]["results"][0]["not_run"] == "repeated"
    assert turns[2]["results"][0]["content"].startswith("Not run again: you asked for exactly this 3 times in a row")
    assert "a.py\nb.py" in turns[2]["results"][0]["content"]


def test_a_repeated_call_between_others_is_run_and_the_episode_goes_on(twin: OpenAITwin, tmp_path: Path) -> None:
    box = FakeSandbox({"ls": (0, "a.py\nb.py"), "pwd": (0, "/repo")})
    ls, pwd = ToolCall("shell", {"command": "ls"}), ToolCall("shell", {"command": "pwd"})
    twin.queue(ls, pwd, ls, pwd, ls, pwd, ls, ToolCall("submit_answer", {"value": 2}))
    assert episode(twin, tmp_path, box) == 2 and box.commands == ["ls", "pwd"] * 3 + ["ls"]


def test_the_token_budget_ends_the_episode(twin: OpenAITwin, tmp_path: Path) -> None:
    box = FakeSandbox({"ls": (0, "a.py")})
    costly = Usage(prompt_tokens=4000, completion_tokens=100)
    twin.queue(*[ToolCall("shell", {"command": f"ls {i}"}, usage=costly) for i in range(5)])
    with pytest.raises(AgentFailed, match="token budget spent \\(12,300 > 10,000\\) after turn 3"):
        episode(twin, tmp_path, box, max_tokens=10_000)
    assert twin.count() == 3


def test_an_endpoint_that_fails_past_its_retries_ends_the_episode_not_the_run(twin: OpenAITwin, tmp_path: Path) -> None:
    too_long = "the request (9000 tokens) exceeds the available context size (8192 tokens)"
    twin.queue(ToolCall("shell", {"command": "ls"}), HttpError(400, message=too_long))
    with pytest.raises(AgentFailed, match=r"the model failed at turn 2: .*exceeds the available context size"):
        episode(twin, tmp_path, FakeSandbox({"ls": (0, "a.py")}))
    assert lines(tmp_path / "transcript.jsonl")[-1]["outcome"] == "llm_error"


class Polling(FakeSandbox):
    """A job whose log grows: the same command answers differently each time."""

    def run(self, command: str, timeout: float = 600, max_output: int = 30000):  # noqa: ANN201
        result = super().run(command, timeout, max_output)
        return replace(result, output=f"{len(self.commands)} lines")


def test_a_command_whose_answer_changes_is_run_every_time(twin: OpenAITwin, tmp_path: Path) -> None:
    box = Polling({"tail log": (0, "")})
    twin.queue(*[ToolCall("shell", {"command": "tail log"})] * 4, ToolCall("submit_answer", {"value": 4}))
    assert episode(twin, tmp_path, box) == 4 and box.commands == ["tail log"] * 4


def test_an_endpoint_that_is_down_or_refuses_the_key_stops_the_run_not_only_the_item(
    twin: OpenAITwin, tmp_path: Path
) -> None:
    twin.queue(HttpError(404, message="The model `x` does not exist"))
    with pytest.raises(LLMError, match="404") as raised:
        episode(twin, tmp_path, FakeSandbox({}))
    assert not isinstance(raised.value, AgentFailed)
