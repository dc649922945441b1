"""Tool calls written in a reply's text (fenced JSON, `<tool_call>` tags), as small open models send them.

Against the OpenAI twin through the real `openai` SDK: the twin's `Text` action is a reply with `tool_calls`
empty, which is what llama.cpp serving Qwen2.5-Coder returns when the model writes its call as text (issue 26).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin, Text
from swe_forge_dagster.llm.client import LLMClient
from swe_forge_dagster.llm.content_calls import BARE, FENCED, TAG, ContentCall, calls_in_content
from swe_forge_dagster.llm.functions import PRFacts, classify_difficulty
from tests.support.agent_twin import KEY, FakeSandbox, count_files, lines, make_client

FENCED_REPLY = """To see the files, I will run a shell command.

```json
{
  "name": "shell",
  "arguments": {"command": "ls -la"}
}
```
"""
PR = PRFacts(
    repo="org/calc",
    number=7,
    title="Fix rounding",
    body="-2.5 rounds to -2",
    files=["calc.py"],
    additions=3,
    deletions=1,
)
TRIAGE = {"difficulty": "easy", "score": 0.2, "reasoning": "One guard in one function."}


TOOLS = {"shell", "submit"}


def test_each_written_form_is_read_with_its_name_arguments_and_form() -> None:
    assert calls_in_content(FENCED_REPLY, TOOLS) == [ContentCall("shell", '{"command": "ls -la"}', FENCED)]
    two = '<tool_call>\n{"name": "shell", "arguments": {"command": "pwd"}}\n</tool_call>\n<tool_call>{"name": "x"}'
    assert calls_in_content(two, TOOLS) == [
        ContentCall("shell", '{"command": "pwd"}', TAG),
        ContentCall("x", "{}", TAG),  # tagged: a call whatever its name, so the check can say it is not a tool
    ]
    openai_shape = '[{"type": "function", "function": {"name": "shell", "arguments": "{\\"command\\": \\"id\\"}"}}]'
    assert calls_in_content(openai_shape, TOOLS) == [ContentCall("shell", '{"command": "id"}', BARE)]
    assert calls_in_content('{"name": "submit", "parameters": {"value": 1}}', TOOLS) == [
        ContentCall("submit", '{"value": 1}', BARE)
    ]
    # a tagged call that is not JSON is still a call: its name and raw text go on to be checked and repaired
    assert calls_in_content('<tool_call>{"name": "shell", "arguments": {"command": "ls"</tool_call>', TOOLS) == [
        ContentCall("shell", '{"name": "shell", "arguments": {"command": "ls"', TAG)
    ]


def test_a_call_in_a_stray_brace_and_a_run_of_newlines_is_read() -> None:
    """What Qwen2.5-Coder 1.5B answered here with `tool_choice: required` (llama.cpp, xllamacpp 2026.10.11549)."""
    seen = '{{"name": "submit", "arguments": {"value": 2}}}\n```' + "\n" * 60
    assert calls_in_content(seen, TOOLS) == [ContentCall("submit", '{"value": 2}', FENCED)]
    assert calls_in_content('I will run it: {"name": "shell", "arguments": {"command": "ls"}} now.', TOOLS) == [
        ContentCall("shell", '{"command": "ls"}', BARE)
    ]


def test_a_tool_named_under_function_or_tool_is_read() -> None:
    """Qwen2.5-Coder 1.5B's answer to the environment agent on marshmallow-1359 (`benchmarks/real_model.py agents`)."""
    seen = '```json\n{\n  "function": "shell",\n  "arguments": {\n    "command": "cd /repo && pytest -v -s tests"\n'
    seen += "  }\n}\n```"
    assert calls_in_content(seen, TOOLS) == [
        ContentCall("shell", '{"command": "cd /repo && pytest -v -s tests"}', FENCED)
    ]
    assert calls_in_content('{"tool": "submit", "arguments": {"value": 3}}', TOOLS)[0].name == "submit"


def test_text_that_is_not_a_call_is_not_read_as_one() -> None:
    for text in (None, "", "The tests pass now.", "```python\nprint('hi')\n```"):
        assert calls_in_content(text, TOOLS) == []
    # JSON the model quotes: no offered tool named, or no arguments (a package.json's `name`)
    assert calls_in_content('Set this in package.json:\n```json\n{"scripts": {"test": "mocha"}}\n```', TOOLS) == []
    assert calls_in_content('```json\n{"name": "shell", "version": "1.0.0"}\n```', TOOLS) == []
    assert calls_in_content('{"name": "rm_everything", "arguments": {}}', TOOLS) == []


@pytest.fixture
def twin() -> Iterator[OpenAITwin]:
    with OpenAITwin(api_key=KEY) as server:
        yield server


def test_a_structured_answer_written_as_text_is_taken_and_its_form_recorded(twin: OpenAITwin, tmp_path: Path) -> None:
    twin.queue(Text(f"```json\n{json.dumps({'name': 'classify_difficulty', 'arguments': TRIAGE})}\n```"))
    with make_client(twin, tmp_path) as client:
        assert classify_difficulty(client, PR).difficulty == "easy"
    (row,) = lines(tmp_path / "llm_calls" / "calls.jsonl")
    assert row["outcome"] == "ok" and row["call_form"] == FENCED


def test_a_hallucinated_tool_and_bad_arguments_are_sent_back_until_repaired(twin: OpenAITwin, tmp_path: Path) -> None:
    twin.queue(
        Text('<tool_call>{"name": "triage_pr", "arguments": {"difficulty": "easy"}}</tool_call>'),
        Text('<tool_call>{"name": "classify_difficulty", "arguments": {"difficulty": "trivial"}}</tool_call>'),
        Text(f"<tool_call>{json.dumps({'name': 'classify_difficulty', 'arguments': TRIAGE})}</tool_call>"),
    )
    with make_client(twin, tmp_path) as client:
        assert classify_difficulty(client, PR).score == 0.2
    rows = lines(tmp_path / "llm_calls" / "calls.jsonl")
    assert [(r["outcome"], r["call_form"]) for r in rows] == [("repair", TAG), ("repair", TAG), ("ok", TAG)]
    assert "called triage_pr: not a function here" in rows[0]["error"]
    asked = [r.json["messages"] for r in twin.requests]
    assert "Answer only by calling the function classify_difficulty" in asked[1][-1]["content"]
    # the bad call goes back as a call (once, not also as its text) with the schema error as its tool answer
    assert asked[2][-2]["content"] is None and asked[2][-2]["tool_calls"][0]["id"] == "content-1"
    assert asked[2][-1]["role"] == "tool" and "difficulty" in asked[2][-1]["content"]


def test_an_agent_works_with_a_model_that_writes_its_calls_as_text(twin: OpenAITwin, tmp_path: Path) -> None:
    twin.queue(
        Text(FENCED_REPLY),
        Text('<tool_call>\n{"name": "submit_answer", "arguments": {"value": 2}}\n</tool_call>'),
    )
    box, transcript = FakeSandbox({"ls -la": (0, "a.py\nb.py")}), tmp_path / "transcript.jsonl"
    with make_client(twin, tmp_path) as client:
        result = count_files(client, box, transcript, max_turns=4)
    assert result == 2 and box.commands == ["ls -la"]
    assert [t["call_form"] for t in lines(transcript)] == [FENCED, TAG]
    assistant, tool = twin.requests[1].json["messages"][-2:]
    assert assistant["tool_calls"][0]["function"] == {"name": "shell", "arguments": '{"command": "ls -la"}'}
    assert tool == {"role": "tool", "tool_call_id": "content-1", "content": "exit code: 0\na.py\nb.py"}


def test_a_call_can_be_forced_as_required_where_a_server_ignores_the_named_form(
    twin: OpenAITwin, tmp_path: Path
) -> None:
    """llama.cpp's server ignores `tool_choice: {"type": "function", ...}` ("type must be string") and honours
    `required` with a grammar; with one tool offered the two ask for the same thing."""
    with LLMClient(twin.url, KEY, "m", forced_choice="required") as client:
        assert classify_difficulty(client, PR).difficulty in ("easy", "medium", "hard")
    (request,) = twin.requests
    assert request.json["tool_choice"] == "required" and len(request.json["tools"]) == 1
