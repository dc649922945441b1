"""The sandbox agents' loop and answer checks against the OpenAI twin and a fake sandbox, without Docker.

The two agents in real Docker sandboxes are in `test_agents.py`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from swe_forge_dagster.demo.twins.openai_twin import MultipleToolCalls, OpenAITwin, Text, ToolCall
from swe_forge_dagster.languages.python.agent import JUNIT_OPTIONS
from swe_forge_dagster.languages.python.runner import PYTEST
from swe_forge_dagster.llm.turns import ChatTurn, ToolCallRequest
from swe_forge_dagster.tasks import agent_tools
from swe_forge_dagster.tasks.agent_prompts import SubmitTests, WrittenFile, recipe_test_command
from swe_forge_dagster.tasks.agent_tools import (
    ELIDED,
    MAX_TOOL_OUTPUT,
    AgentFailed,
    AgentTool,
    ShellArgs,
    clip,
    run_agent,
)
from swe_forge_dagster.tasks.test_agent import _checked_files
from tests.support.agent_twin import KEY, FakeSandbox, lines, make_client, tool_names


@pytest.fixture
def twin() -> Iterator[OpenAITwin]:
    with OpenAITwin(api_key=KEY) as server:
        yield server


# -- the chat call and the loop, without Docker ---------------------------------------------------


def test_chat_offers_tools_unforced_and_caches_the_whole_assistant_message(twin: OpenAITwin, tmp_path: Path) -> None:
    tools = [AgentTool("shell", "run", ShellArgs).spec()]
    messages = [{"role": "user", "content": "list the files"}]
    twin.queue(ToolCall("shell", {"command": "ls"}, id="call_1"))
    with make_client(twin, tmp_path) as client:
        turn = client.chat("agent", messages, tools, item="org/x#1")
        again = client.chat("agent", messages, tools, item="org/x#1")
        assert client.stats.calls == 1 and client.stats.cache_hits == 1
    call = ToolCallRequest("call_1", "shell", '{"command": "ls"}')
    assert turn == ChatTurn(None, [call], cached=False, call_form="tool_calls", tokens=turn.tokens) and turn.tokens > 0
    assert again == ChatTurn(None, turn.tool_calls, cached=True, call_form="tool_calls")
    assert turn.message()["tool_calls"][0]["function"] == {"name": "shell", "arguments": '{"command": "ls"}'}
    (request,) = twin.requests
    assert request.json["tool_choice"] == "auto" and tool_names(request.json) == ["shell"]
    rows = lines(tmp_path / "llm_calls" / "calls.jsonl")
    assert [r["outcome"] for r in rows] == ["ok", "cached"] and rows[0]["prompt_tokens"] > 0


class Answer(BaseModel):
    value: int


def test_loop_sends_errors_back_and_ends_on_an_accepted_submission(twin: OpenAITwin, tmp_path: Path) -> None:
    huge = "HEAD" + "x" * 50_000 + "TAIL"
    box = FakeSandbox({"cat big.log": (0, huge), "false": (1, "")})
    twin.queue(
        Text("Let me think about it."),
        ToolCall("shell", '{"command": "cat big.log"'),  # invalid JSON
        ToolCall("delete_everything", {}),
        MultipleToolCalls([ToolCall("shell", {"command": "cat big.log"}), ToolCall("shell", {"command": "false"})]),
        ToolCall("submit_answer", {"value": "many"}),  # schema violation
        ToolCall("submit_answer", {"value": 41}),
        ToolCall("submit_answer", {"value": 42}),
    )
    submitted: list[int] = []

    def on_submit(answer: Answer) -> str | int:
        submitted.append(answer.value)
        return "too small" if answer.value < 42 else answer.value

    transcript = tmp_path / "run" / "transcript.jsonl"
    with make_client(twin, tmp_path) as client:
        result = run_agent(
            client,
            box,
            "Find the answer.",
            ["<question>\nwhat is it\n</question>"],  # type: ignore[arg-type]
            [AgentTool("submit_answer", "the answer", Answer)],
            on_submit,
            stage="demo",
            item="x",
            max_turns=10,
            transcript_path=transcript,
        )
    assert result == 42 and submitted == [41, 42] and box.commands == ["cat big.log", "false"]
    bodies = [r.json for r in twin.requests]
    assert all(b["tool_choice"] == "auto" and tool_names(b) == ["shell", "submit_answer"] for b in bodies)
    assert bodies[1]["messages"][-1]["role"] == "user" and "calling a tool" in bodies[1]["messages"][-1]["content"]
    assert "not valid JSON" in bodies[2]["messages"][-1]["content"]
    assert "no tool 'delete_everything'" in bodies[3]["messages"][-1]["content"]
    big, failed = bodies[4]["messages"][-2:]  # one tool message per parallel call, in order
    assert big["content"].startswith("exit code: 0\nHEAD") and big["content"].endswith("TAIL")
    assert len(big["content"]) < MAX_TOOL_OUTPUT + 200 and failed["content"] == "exit code: 1\n(no output)"
    assert "value" in bodies[5]["messages"][-1]["content"] and "schema" in bodies[5]["messages"][-1]["content"]
    assert bodies[6]["messages"][-1]["content"] == "Rejected: too small"
    turns = lines(transcript)
    assert [t["outcome"] for t in turns] == ["nudged", *["continue"] * 3, "rejected", "rejected", "accepted"]
    assert turns[3]["results"][1] == {
        "tool_call_id": turns[3]["tool_calls"][1]["id"],
        "name": "shell",
        "content": "exit code: 1\n(no output)",
        "exit_code": 1,
        "timed_out": False,
        "seconds": 0.01,
    }


def test_old_outputs_are_elided_once_the_conversation_grows(
    twin: OpenAITwin, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(agent_tools, "MAX_CONTEXT_CHARS", 20_000)
    box = FakeSandbox({f"cat part{i}": (0, str(i) * 7000) for i in range(5)})
    twin.queue(*[ToolCall("shell", {"command": f"cat part{i}"}) for i in range(5)])
    with make_client(twin, tmp_path) as client, pytest.raises(AgentFailed, match="after 5 turns"):
        run_agent(
            client,
            box,
            "Read.",
            ["go"],
            [AgentTool("submit_answer", "the answer", Answer)],  # type: ignore[arg-type]
            lambda answer: answer,
            stage="demo",
            item=None,
            max_turns=5,
            transcript_path=tmp_path / "t.jsonl",
        )

    def parts(messages: list[dict[str, Any]]) -> list[str]:
        tool = [m["content"] for m in messages if m["role"] == "tool"]
        return ["elided" if c == ELIDED else c.removeprefix("exit code: 0\n")[0] for c in tool]

    outputs = [parts(r.json["messages"]) for r in twin.requests]
    assert outputs[2] == ["0", "1"]  # 14k characters: under the budget
    assert outputs[3] == ["elided", "1", "2"]  # 21k: the oldest goes, down to 3/4 of the budget
    assert outputs[4] == ["elided", "elided", "2", "3"]


def test_tool_output_keeps_head_and_tail_and_masks_pytest_run_times() -> None:
    assert clip("==== 1 failed, 2 passed in 0.12s ====\nno tests ran in 65.43s (0:01:05)") == (
        "==== 1 failed, 2 passed in <time> ====\nno tests ran in <time>"
    )
    clipped = clip("a" * 10 + "b" * 100 + "c" * 10, limit=20)
    assert clipped == "a" * 10 + "\n[... 100 characters cut ...]\n" + "c" * 10


def test_test_commands_get_their_test_paths_and_junit_options() -> None:
    assert recipe_test_command(PYTEST) == PYTEST
    assert recipe_test_command("python -m pytest -q") == f"python -m pytest -q {JUNIT_OPTIONS} {{tests}}"
    assert recipe_test_command("tox -e py -- {tests} -x") == f"tox -e py -- {JUNIT_OPTIONS} {{tests}} -x"
    for bad, reason in [("make test", "{tests}"), ("pytest --junitxml=out.xml", "JUnit"), ("pytest ${X}", "braces")]:
        with pytest.raises(ValueError, match=reason):
            recipe_test_command(bad)


def test_written_files_must_be_new_test_files_inside_the_repository(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_old.py").write_text("")

    def check(*paths: str) -> str | dict[str, str]:
        return _checked_files(SubmitTests(files=[WrittenFile(path=p, content="x = 1\n") for p in paths]), tmp_path)

    assert check("tests/test_new.py", "tests/conftest.py") == {
        "tests/test_new.py": "x = 1\n",
        "tests/conftest.py": "x = 1\n",
    }
    for paths, problem in [
        (("/tmp/tests/test_x.py",), "relative path"),
        (("tests/../test_x.py",), "relative path"),
        (("../tests/test_x.py",), "relative path"),
        (("./tests/test_x.py",), "relative path"),
        (("pkg/check.py",), "not a test file"),
        (("tests/test_old.py",), "already exists"),
        (("tests/test_a.py", "tests/test_a.py"), "twice"),
        (("tests/helpers.py",), "no test module"),
    ]:
        assert problem in str(check(*paths)), paths
