"""Tool calls a model wrote in its text instead of the API's `tool_calls`, in the common open-model forms.

A small open model served by llama.cpp (Qwen2.5-Coder, issue 26) asked to use a tool answers with the right name
and arguments, but as text: a fenced JSON block, bare JSON (sometimes with a stray brace around it and a run of
newlines after it), or Hermes/Qwen `<tool_call>…</tool_call>` tags, with `tool_calls` empty. The client reads those
only when the server returned no structured call, and records which form each call came in (`FORMS`) in the call
ledger, so a run shows how often a model needed this.

What counts as a call outside tags: a JSON object naming one of the offered tools (`name`, `function` or `tool`, or
OpenAI's own `{"function": {"name", "arguments"}}` written out) with its `arguments` (or `parameters`): an object or
a JSON string of one. The text is scanned for every JSON value that decodes from an opening brace or bracket, so
prose or a stray brace around the call does not hide it; JSON that names no offered tool, or has no arguments, is
not a call (a model quoting `package.json`, `{"name": "my-lib", "version": …}`, runs nothing). Inside `<tool_call>`
tags the text is a call whatever it holds: an unknown name or arguments that are not JSON are kept as written, so
checking them says what is wrong and the model is asked to repair them (never dropped in silence).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

STRUCTURED = "tool_calls"
TAG = "content-tag"
FENCED = "content-fenced"
BARE = "content-json"
FORMS = (STRUCTURED, TAG, FENCED, BARE)
"""How a call reached us: the API's field, `<tool_call>` tags, JSON in a fenced block, or JSON in the text."""

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
NAME_KEYS = ("name", "function", "tool", "tool_name")
"""Where a written call names its tool: `name`; `function` or `tool` as a plain string is what small models also
write (Qwen2.5-Coder 1.5B here: `{"function": "shell", "arguments": {...}}`)."""
_NAME = re.compile(r'"name"\s*:\s*"([^"\\]+)"')
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class ContentCall:
    """One call read from a reply's text: the tool's name, its arguments as JSON text, and the form it came in."""

    name: str
    arguments_json: str
    form: str


def calls_in_content(content: str | None, offered: Collection[str]) -> list[ContentCall]:
    """The calls of tools in `offered` written in `content`, in order; tagged calls of any name when tags are used."""
    text = (content or "").strip()
    if not text:
        return []
    if "<tool_call>" in text:
        return [call for payload in _TAGGED.findall(text) if (call := _tagged(payload))]
    form = FENCED if "```" in text else BARE
    calls: list[ContentCall] = []
    for value in _json_values(text):
        for item in value if isinstance(value, list) else [value]:
            call = _as_call(item, form)
            if call is not None and call.name in offered and _has_arguments(item):
                calls.append(call)
    return calls


def _json_values(text: str) -> list[Any]:
    """Every JSON object or array that decodes from an opening `{` or `[` of `text`, outermost first, none nested."""
    values, index = [], 0
    while (start := _next_open(text, index)) >= 0:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError:
            index = start + 1
            continue
        values.append(value)
        index = end
    return values


def _next_open(text: str, index: int) -> int:
    found = [position for position in (text.find("{", index), text.find("[", index)) if position >= 0]
    return min(found) if found else -1


def _tagged(payload: str) -> ContentCall | None:
    """A `<tool_call>` payload as a call; unreadable JSON is kept as written for the check to name."""
    for value in _json_values(payload):
        if (call := _as_call(value, TAG)) is not None:
            return call
    name = _NAME.search(payload)
    return ContentCall(name.group(1) if name else "", payload, TAG) if payload.strip() else None


def _has_arguments(item: Any) -> bool:
    inner = item.get("function") if isinstance(item.get("function"), dict) else item
    return "arguments" in inner or "parameters" in inner


def _as_call(item: Any, form: str) -> ContentCall | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):  # OpenAI's wire shape, written out
        item = item["function"]
    name = next((item[key] for key in NAME_KEYS if isinstance(item.get(key), str) and item[key]), None)
    if name is None:
        return None
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):
        return ContentCall(name, arguments, form)  # checked by the caller like any call's arguments
    return ContentCall(name, json.dumps(arguments, ensure_ascii=False), form)
