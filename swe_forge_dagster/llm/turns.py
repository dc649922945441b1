"""An assistant turn as the client hands it on: its text, the tool calls it asked for, and how they came.

Apart from `llm.client` so the agent loops and the client share one shape, and so the reading of calls (the API's
`tool_calls`, else the ones written in the text: `content_calls`) has one place.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from swe_forge_dagster.llm.content_calls import STRUCTURED, calls_in_content


@dataclass(frozen=True)
class ToolCallRequest:
    """One function call the model asked for; the arguments stay raw JSON so the caller judges them."""

    id: str
    name: str
    arguments_json: str


@dataclass(frozen=True)
class ChatTurn:
    """One assistant turn of an agent conversation: text, the tool calls asked for, and whether it was cached."""

    content: str | None
    tool_calls: list[ToolCallRequest]
    cached: bool
    call_form: str | None = None  # how the calls came (`content_calls.FORMS`); None without calls
    tokens: int = 0  # prompt and completion tokens this turn cost (0 when answered from the cache)

    def message(self) -> dict[str, Any]:
        """The assistant message to append to the conversation (the wire shape the endpoint expects back).

        Without tool calls the content is never null: some providers reject such a message. Calls read from the
        text go back as structured calls without that text, so the server's chat template writes each call once.
        """
        content = self.content if self.content is not None or self.tool_calls else ""
        if self.tool_calls and self.call_form not in (None, STRUCTURED):
            content = None
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if self.tool_calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments_json}}
                for c in self.tool_calls
            ]
        return message


def reply_calls(message: Any, offered: Collection[str]) -> tuple[list[ToolCallRequest], str | None]:
    """The calls of an assistant message and their form: its `tool_calls`, else those of `offered` tools written in
    its text (`content_calls`). Null arguments become "" (the check names them: "the call has no arguments").

    Calls read from the text get ids made from their position (`content-1`, …): the same reply gives the same
    conversation, so the answer cache keeps working.
    """
    structured = [
        ToolCallRequest(c.id, c.function.name, c.function.arguments or "")
        for c in message.tool_calls or []
        if c.type == "function"
    ]
    if structured:
        return structured, STRUCTURED
    written = calls_in_content(message.content, offered)
    calls = [ToolCallRequest(f"content-{i}", c.name, c.arguments_json) for i, c in enumerate(written, 1)]
    return calls, (written[0].form if written else None)
