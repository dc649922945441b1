"""A stand-in model for the git world: answers every LLM call of the pipeline as a good model would.

The OpenAI twin asks a responder for each request. This one reads the request the way a model
would (which tools are offered, what the conversation holds so far) and answers with the tool
calls a capable agent makes on the world's repositories: the environment agent looks around and
submits the install + pytest recipe, the test agent reads the code and submits the world PR's
`agent_tests`, the quality judge approves, and everything else (triage, statements) goes to the
deterministic `triage_responder`. Being stateless, it serves any number of tasks in any order,
concurrently, which a queue of scripted calls cannot. The commands it submits really run in Docker.
"""

from __future__ import annotations

from typing import Any

from swe_forge_dagster.demo.twins.openai_twin_script import (
    Action,
    Responder,
    ToolCall,
    forced_tool_name,
    tool_schemas,
    triage_responder,
    user_text,
)
from swe_forge_dagster.demo.worlds.git_world import GitWorld, WorldPR

VENV_INSTALL = (
    "python -m venv --system-site-packages /opt/venv && . /opt/venv/bin/activate "
    "&& pip install --no-build-isolation --no-deps -e ."
)
TEST_COMMAND = "python -m pytest -q"


def _turns_taken(request: dict[str, Any]) -> int:
    return sum(1 for message in request.get("messages") or [] if message.get("role") == "tool")


def _pr_of(world: GitWorld, text: str) -> WorldPR | None:
    for pr in world.prs:
        if pr.title in text and not pr.test_files:
            return pr
    return None


def world_agent_responder(world: GitWorld, quality_score: float = 0.8) -> Responder:
    def respond(request: dict[str, Any]) -> Action:
        tools = tool_schemas(request)
        if "submit_environment" in tools:
            if _turns_taken(request) == 0:
                return ToolCall("shell", {"command": "ls && cat pyproject.toml"})
            return ToolCall("submit_environment", {"install_commands": [VENV_INSTALL], "test_command": TEST_COMMAND})
        if "submit_tests" in tools:
            pr = _pr_of(world, user_text(request))
            if pr is None:
                return ToolCall("shell", {"command": "echo no world PR matches this prompt"})
            if _turns_taken(request) == 0:
                return ToolCall("shell", {"command": f"cat {' '.join(pr.src_files)} && ls tests"})
            files = [{"path": path, "content": content} for path, content in sorted(pr.agent_tests.items())]
            return ToolCall("submit_tests", {"files": files, "fail_to_pass": [], "pass_to_pass": []})
        if forced_tool_name(request) == "score_task":
            return ToolCall(
                "score_task",
                {
                    "difficulty": "easy",
                    "difficulty_score": 0.2,
                    "difficulty_reasoning": "A small, local fix with a clear failing test.",
                    "statement_clear": True,
                    "tests_check_behaviour": True,
                    "solvable_from_statement": True,
                    "quality_score": quality_score,
                    "quality_reasoning": "The statement describes the observable bug; the tests check outputs.",
                },
            )
        return triage_responder(request)

    return respond
