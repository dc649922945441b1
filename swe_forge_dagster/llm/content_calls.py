"""Tool calls a model wrote in its text instead of the API's `tool_calls`, in the common open-model forms.

A small open model served by llama.cpp (Qwen2.5-Coder, issue 26) asked to use a tool answers with the right name
and arguments, but as text: a fenced JSON block, or Hermes/Qwen `<tool_call>…</tool_call>` tags, with `tool_calls`
empty. The client reads those only when the server returned no structured call, and records which form each call
came in (`FORMS`) in the call ledger, so a run shows how often a model needed this.

What counts as a call: a JSON object with a tool `name` (also `{"function": {"name", "arguments"}}`, OpenAI's own
shape written out) and its `arguments` (or `parameters`), an object or a JSON string of one. JSON in the text
without a name is not a call (a model showing a config file). Inside `<tool_call>` tags the text is a call
whatever it holds: when it is not JSON, its name is read if it can be and its arguments are kept as written, so
checking them says what is wrong and the model is asked to repair them (never dropped in silence).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

STRUCTURED = "tool_calls"
TAG = "content-tag"
FENCED = "content-fenced"
BARE = "content-json"
FORMS = (STRUCTURED, TAG, FENCED, BARE)
"""How a call reached us: the API's field, `<tool_call>` tags, a fenced block, or the whole text as JSON."""

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"```[ \t]*(?:json|tool_call|tool_code)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_NAME = re.compile(r'"name"\s*:\s*"([^"\\]+)"')


@dataclass(frozen=True)
class ContentCall:
    """One call read from a reply's text: the tool's name, its arguments as JSON text, and the form it came in."""

    name: str
    arguments_json: str
    form: str


def calls_in_content(content: str | None) -> list[ContentCall]:
    """The tool calls written in `content`, in order: tagged ones if any, else fenced blocks, else the whole text."""
    text = (content or "").strip()
    if not text:
        return []
    if "<tool_call>" in text:
        return [call for payload in _TAGGED.findall(text) if (call := _tagged(payload))]
    fenced = [call for block in _FENCE.findall(text) for call in _json_calls(block, FENCED)]
    if fenced:
        return fenced
    if text[0] in "{[" and text[-1] in "}]":
        return _json_calls(text, BARE)
    return []


def _tagged(payload: str) -> ContentCall | None:
    """A `<tool_call>` payload as a call; unreadable JSON is kept as written for the check to name."""
    calls = _json_calls(payload, TAG)
    if calls:
        return calls[0]
    name = _NAME.search(payload)
    return ContentCall(name.group(1) if name else "", payload, TAG) if payload.strip() else None


def _json_calls(text: str, form: str) -> list[ContentCall]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return []
    items = data if isinstance(data, list) else [data]
    return [call for item in items if (call := _as_call(item, form))]


def _as_call(item: Any, form: str) -> ContentCall | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):  # OpenAI's wire shape, written out
        item = item["function"]
    name = item.get("name")
    if not isinstance(name, str) or not name:
        return None
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):
        return ContentCall(name, arguments, form)  # checked by the caller like any call's arguments
    return ContentCall(name, json.dumps(arguments, ensure_ascii=False), form)
