"""The loop every sandbox agent shares: a model, a `shell` in a Docker sandbox, and one submit tool.

An agent turn is one `LLMClient.chat` call with the tools offered (not forced). Each `shell` call
runs in the sandbox and its exit code and output (head and tail, ~8000 characters) go back as the
tool message; arguments that are not valid JSON or do not fit the tool's schema, and tools that do
not exist, get an error tool message instead, so the model can correct itself. A turn with no tool
call gets a user message asking for one. The stage's submit tool hands its validated arguments to
`on_submit`, which either returns an error string (sent back, the loop goes on) or the stage's
result (the loop ends). Past `max_turns` the item fails with `AgentFailed`.

Every turn is one JSON line of the transcript (assistant message, tool calls, tool results,
timings), written as it happens, so a failed or killed run can be read afterwards.

The cache makes re-runs free only while the conversation repeats exactly, so what goes back to
the model is kept free of timings: none are added (they are in the transcript instead), and
pytest's "in 0.12s" summaries are masked. Other changing output (a download, a date) still makes
a re-run ask the model again from that turn on, which is correct, only not free.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from docker.errors import DockerException
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from swe_forge_dagster.execution.sandbox import CommandResult, Sandbox
from swe_forge_dagster.execution.shell_state import SandboxError
from swe_forge_dagster.llm.client import LLMClient, LLMRequestRejected, tool_for
from swe_forge_dagster.llm.prompts import system, user
from swe_forge_dagster.llm.turns import ChatTurn, ToolCallRequest

R = TypeVar("R")

SHELL_TIMEOUT_S = 300.0
MAX_TOOL_OUTPUT = 8000
# Past this many characters the oldest command outputs are cut down to a stub (to 3/4 of it, so the
# prompt prefix stays stable for a while): 200 turns of full outputs would not fit any context.
MAX_CONTEXT_CHARS = 400_000
SILENT_TURNS = 5
"""Answers in a row without a tool call (empty, or prose) that end an episode: the model has left the loop."""
REPEATS = 3
"""The same call asked for this many times in a row is answered from the last time instead of run again."""
SAME_TURNS = 6
"""Turns in a row asking for exactly the same calls that end an episode: the model is going in circles."""
ELIDED = "[output elided to keep the conversation short; run the command again if you need it]"
PYTEST_DURATION = re.compile(
    r"\b(passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected|selected|ran) "
    r"in \d+\.\d+s( \(\d+:\d\d:\d\d\))?"
)


class AgentFailed(Exception):
    """The agent produced no accepted submission (turns exhausted, or its sandbox broke)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ShellArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="a bash command, run in the container's persistent shell")


@dataclass(frozen=True)
class AgentTool:
    """A tool offered to the agent; its arguments are validated by `arguments` before anything runs."""

    name: str
    description: str
    arguments: type[BaseModel]

    def spec(self) -> dict[str, Any]:
        return tool_for(self.arguments, self.name, self.description)


def shell_tool(timeout: float = SHELL_TIMEOUT_S) -> AgentTool:
    return AgentTool(
        "shell",
        "Run one bash command in the container and get its exit code and output (stdout and stderr "
        f"interleaved; long output keeps its head and tail). cd, export and an activated venv persist "
        f"between calls. Each command is killed after {timeout:g} seconds.",
        ShellArgs,
    )


def clip(text: str, limit: int = MAX_TOOL_OUTPUT) -> str:
    """`text` cut to about `limit` characters, keeping the head (what started) and the tail (how it ended).

    Pytest's run time is masked: it changes on every run and would defeat the answer cache.
    """
    text = PYTEST_DURATION.sub(r"\1 in <time>", text)
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


TIMED_OUT = "(timed out after"


def shell_message(result: CommandResult, timeout: float) -> str:
    status = f"exit code: {result.exit_code}"
    if result.timed_out:
        status += f" {TIMED_OUT} {timeout:g}s; the command's processes were killed)"
    return f"{status}\n{clip(result.output) or '(no output)'}"


def parse_arguments(arguments_json: str, model: type[BaseModel]) -> BaseModel | str:
    """The validated arguments, or the problem in words the model can act on."""
    try:
        data = json.loads(arguments_json or "{}")
    except json.JSONDecodeError as exc:
        return f"the arguments are not valid JSON ({exc.msg} at char {exc.pos})"
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        details = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
        return f"the arguments do not match the schema ({details})"


def run_agent(
    client: LLMClient,
    sandbox: Sandbox,
    system_prompt: str,
    user_parts: Sequence[str],
    tools: Sequence[AgentTool],
    on_submit: Callable[[Any], str | R],
    *,
    stage: str,
    item: str | None,
    max_turns: int,
    transcript_path: Path,
    shell_timeout: float = SHELL_TIMEOUT_S,
    max_tokens: int | None = None,
) -> R:
    """Run the agent until `on_submit` accepts a submission; see the module docstring.

    `tools` are the stage's submit tools (`shell` is always offered first); `on_submit` gets the
    validated arguments model and returns an error string to reject it or the result (never a str).
    The transcript at `transcript_path` is started afresh: it describes this run. The episode also ends,
    with `AgentFailed` and its reason, when the model spends `max_tokens` or goes in circles (`Guard`).
    """
    shell = shell_tool(shell_timeout)
    offered = {tool.name: tool for tool in (shell, *tools)}
    specs = [tool.spec() for tool in offered.values()]
    submit_names = " or ".join(t.name for t in tools)
    messages: list[dict[str, Any]] = [system(system_prompt), user(*user_parts)]
    transcript_path.parent.mkdir(parents=True, exist_ok=True)
    transcript_path.write_text("")
    guard = Guard(stage, max_tokens)
    for turn in range(1, max_turns + 1):
        guard.check_budget(turn, transcript_path)
        _shrink(messages)
        started = time.perf_counter()
        try:
            reply = client.chat(stage, messages, specs, item=item)
        except LLMRequestRejected as exc:  # this request only (a prompt past the context); an outage stops the run
            _append(transcript_path, {"turn": turn, "outcome": "llm_error", "reason": str(exc)})
            raise AgentFailed(f"{stage}: the model failed at turn {turn}: {exc}") from exc
        record: dict[str, Any] = {
            "turn": turn,
            "at": dt.datetime.now(dt.UTC).isoformat(),
            "cached": reply.cached,
            "llm_seconds": round(time.perf_counter() - started, 3),
            "content": reply.content,
            "tool_calls": [{"id": c.id, "name": c.name, "arguments": c.arguments_json} for c in reply.tool_calls],
            "call_form": reply.call_form,
            "tokens": reply.tokens,
            "results": [],
            "outcome": "continue",
        }
        messages.append(reply.message())
        try:
            guard.before(reply, turn)
            if not reply.tool_calls:
                nudge = (
                    "Please continue by calling a tool: `shell` to run a command, or "
                    f"`{submit_names}` when you have the answer. Text replies alone do nothing here."
                )
                messages.append({"role": "user", "content": nudge})
                record.update(outcome="nudged", nudge=nudge)
                continue
            for call in reply.tool_calls:
                repeated = guard.repeated(call) if call.name == shell.name else None
                if repeated is not None:
                    content, accepted, value, details = repeated, False, None, {"not_run": "repeated"}
                else:
                    content, accepted, value, details = _handle(call, offered, sandbox, shell_timeout, on_submit)
                    guard.answered(call, content)
                record["results"].append({"tool_call_id": call.id, "name": call.name, "content": content, **details})
                if accepted:
                    record["outcome"] = "accepted"
                    return value
                messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
                if call.name in offered and call.name != shell.name:
                    guard.last_rejection, record["outcome"] = content, "rejected"
        except AgentFailed as exc:
            record["outcome"] = "stopped"
            record["reason"] = exc.reason
            raise
        except (SandboxError, DockerException) as exc:
            record["outcome"] = "sandbox_error"
            raise AgentFailed(f"{stage}: the sandbox failed at turn {turn}: {exc}") from exc
        finally:
            _append(transcript_path, record)
    reason = f"{stage}: no accepted {submit_names} after {max_turns} turns"
    raise AgentFailed(reason + guard.rejection_note())


class Guard:
    """What ends an episode before its turns run out, each with a reason: a model that no longer calls tools
    (`SILENT_TURNS` answers in a row with no call: empty, or prose), one that asks for the same calls again and
    again (`SAME_TURNS` in a row), or the token budget spent. A call asked for `REPEATS` times in a row is not
    run again: its answer would not change, so the model is told that instead (cheap, and a hint)."""

    def __init__(self, stage: str, max_tokens: int | None) -> None:
        self.stage, self.max_tokens = stage, max_tokens
        self.tokens, self.silent, self.same = 0, 0, 0
        self.last_turn: tuple[tuple[str, str], ...] = ()
        self.streak: dict[tuple[str, str], int] = {}
        self.answers: dict[tuple[str, str], str] = {}
        self.last_rejection: str | None = None

    def before(self, reply: ChatTurn, turn: int) -> None:
        """Account for a reply; `AgentFailed` when the episode must end here."""
        self.tokens += reply.tokens
        self.silent = 0 if reply.tool_calls else self.silent + 1
        if self.silent >= SILENT_TURNS:
            said = (reply.content or "").strip()[:300] or "(empty)"
            raise AgentFailed(f"{self.stage}: {self.silent} answers in a row without a tool call; the last: {said}")
        calls = tuple((c.name, c.arguments_json) for c in reply.tool_calls)
        self.same = self.same + 1 if calls and calls == self.last_turn else (1 if calls else 0)
        self.last_turn = calls
        if self.same >= SAME_TURNS:
            names = ", ".join(name for name, _ in calls)
            raise AgentFailed(f"{self.stage}: asked for the same call ({names}) {self.same} turns in a row")
        self.streak = {key: self.streak.get(key, 0) for key in calls}

    def check_budget(self, turn: int, transcript_path: Path) -> None:
        """Before a turn: `AgentFailed` when the turns so far spent the budget (their calls were all handled, a
        submission in the last one included). Cached turns cost nothing: a re-run may go further than the run
        that paid for them."""
        if self.max_tokens is not None and self.tokens > self.max_tokens:
            reason = f"{self.stage}: token budget spent ({self.tokens:,} > {self.max_tokens:,}) after turn {turn - 1}"
            _append(transcript_path, {"turn": turn, "outcome": "stopped", "reason": reason})
            raise AgentFailed(reason)

    def repeated(self, call: ToolCallRequest) -> str | None:
        """The answer to a shell call asked for `REPEATS` times in a row, without running it again, when its last two
        runs answered the same and neither timed out (polling a job or retrying a download is not cut short);
        None to run it."""
        key = (call.name, call.arguments_json)
        self.streak[key] = self.streak.get(key, 0) + 1
        last = self.answers.get(key, [])
        if self.streak[key] < REPEATS or len(last) < 2 or last[0] != last[1] or TIMED_OUT in last[1]:
            return None
        return (
            f"Not run again: you asked for exactly this {self.streak[key]} times in a row, and its last two runs "
            f"answered the same:\n{last[1]}\nRun something else, or submit."
        )

    def answered(self, call: ToolCallRequest, content: str) -> None:
        """Record what a call that ran answered (its last two answers are kept)."""
        key = (call.name, call.arguments_json)
        self.answers[key] = [*self.answers.get(key, [])[-1:], content]

    def rejection_note(self) -> str:
        return f"; last rejection: {self.last_rejection[:1000]}" if self.last_rejection else ""


def _handle(
    call: ToolCallRequest,
    offered: dict[str, AgentTool],
    sandbox: Sandbox,
    shell_timeout: float,
    on_submit: Callable[[Any], Any],
) -> tuple[str, bool, Any, dict[str, Any]]:
    """One tool call: (tool message, accepted, result, transcript details)."""
    tool = offered.get(call.name)
    if tool is None:
        names = ", ".join(offered)
        return f"Error: there is no tool {call.name!r}; the tools are: {names}.", False, None, {}
    arguments = parse_arguments(call.arguments_json, tool.arguments)
    if isinstance(arguments, str):
        return f"Error: {arguments}. Call {tool.name} again with arguments that fix this.", False, None, {}
    started = time.perf_counter()
    if isinstance(arguments, ShellArgs):
        result = sandbox.run(arguments.command, timeout=shell_timeout, max_output=MAX_TOOL_OUTPUT)
        details = {"exit_code": result.exit_code, "timed_out": result.timed_out, "seconds": round(result.duration_s, 3)}
        return shell_message(result, shell_timeout), False, None, details
    verdict = on_submit(arguments)
    details = {"seconds": round(time.perf_counter() - started, 3)}
    if isinstance(verdict, str):
        return f"Rejected: {verdict}", False, None, details
    return "Accepted.", True, verdict, details


def _shrink(messages: list[dict[str, Any]]) -> None:
    """Cut the oldest tool outputs to a stub once the conversation is past MAX_CONTEXT_CHARS."""
    sizes = [len(m.get("content") or "") + len(json.dumps(m.get("tool_calls") or "")) for m in messages]
    total = sum(sizes)
    if total <= MAX_CONTEXT_CHARS:
        return
    for index, message in enumerate(messages):
        if total <= MAX_CONTEXT_CHARS * 3 // 4:
            break
        if message["role"] == "tool" and message["content"] != ELIDED:
            total -= sizes[index] - len(ELIDED)
            message["content"] = ELIDED


def _append(path: Path, record: dict[str, Any]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")
