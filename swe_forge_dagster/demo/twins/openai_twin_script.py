"""What the OpenAI twin answers: scripted actions, the deterministic triage responder, a JSON-schema filler.

Kept apart from the wire handling in `openai_twin` so tests and the benchmark can build and check
answers (e.g. `fill_from_schema(Model.model_json_schema())`) without starting a server, and so the
twin itself stays a thin, predictable HTTP shell around these values.
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Usage:
    """Token counts (and an OpenRouter-style `cost`) reported instead of the twin's estimate.

    Lets a test pin exact numbers for budget and cost accounting. With `cost=None` a twin created
    with `cost_per_mtok` still derives the cost from these counts, as OpenRouter would.
    """

    prompt_tokens: int
    completion_tokens: int
    cost: float | None = None


@dataclass(frozen=True)
class ToolCall:
    """One function call by the assistant (finish_reason "tool_calls", content null).

    A dict `arguments` is JSON-dumped; a str is sent verbatim, so tests can deliver the truncated or
    malformed JSON real models sometimes produce and check the client copes.
    """

    name: str
    arguments: str | dict[str, Any] = field(default_factory=dict)
    usage: Usage | None = None
    id: str | None = None  # None: the twin numbers it ("call_...") per request

    def arguments_json(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True)
class MultipleToolCalls:
    """Several parallel function calls in one assistant message, as models with parallel tool use send."""

    calls: Sequence[ToolCall]
    usage: Usage | None = None


@dataclass(frozen=True)
class Text:
    """A plain assistant message with no tool call (finish_reason "stop"): the model ignoring the tools."""

    content: str
    usage: Usage | None = None


@dataclass(frozen=True)
class HttpError:
    """A non-2xx answer in OpenAI's error JSON shape; `headers` e.g. {"retry-after": "1"} for a 429.

    `message=None` picks the text OpenAI sends for that status, so tests need not invent one.
    """

    status: int
    message: str | None = None
    headers: dict[str, str] | None = None


@dataclass(frozen=True)
class Slow:
    """Sleep `seconds`, then answer with `then`: a provider that stalls long enough to trip SDK timeouts."""

    seconds: float
    then: Action


Action = ToolCall | MultipleToolCalls | Text | HttpError | Slow
Responder = Callable[[dict[str, Any]], Action]

# Difficulty tiers of the seed's rubric: a classification's score must fall inside its tier's range.
TIERS: dict[str, tuple[float, float]] = {"easy": (0.1, 0.35), "medium": (0.4, 0.65), "hard": (0.7, 1.0)}
_ADDED = re.compile(r"\b(?:added[ _-]?lines|lines[ _-]?added|additions)\s*[:=]\s*(\d+)", re.IGNORECASE)


def user_text(request: dict[str, Any]) -> str:
    """Every user message's text (plain strings and text parts), which is what triage answers depend on."""
    parts: list[str] = []
    for message in request.get("messages") or []:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "\n".join(parts)


def forced_tool_name(request: dict[str, Any]) -> str | None:
    """The function `tool_choice` forces, if any (Chat Completions shape, or the flat Responses shape)."""
    choice = request.get("tool_choice")
    if not isinstance(choice, dict):
        return None
    function = choice.get("function")
    name = function.get("name") if isinstance(function, dict) else choice.get("name")
    return name if isinstance(name, str) else None


def tool_schemas(request: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Tool name → its parameters schema, in request order."""
    found: dict[str, dict[str, Any]] = {}
    for tool in request.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            parameters = function.get("parameters")
            found[function["name"]] = parameters if isinstance(parameters, dict) else {}
    return found


def classify_text(text: str) -> tuple[str, float, str]:
    """(difficulty, score, reasoning) from the prompt alone, so the same prompt always gets the same answer.

    Summed `added lines: N` / `additions: N` mentions decide the tier (<30 easy, <200 medium, else
    hard) and the score grows with size inside it; without such a line a crc32 of the text decides.
    """
    added = [int(n) for n in _ADDED.findall(text)]
    if added:
        total = sum(added)
        if total < 30:
            tier, frac = "easy", total / 30
        elif total < 200:
            tier, frac = "medium", (total - 30) / 170
        else:
            tier, frac = "hard", min(1.0, (total - 200) / 1800)
        reasoning = f"{total} added lines put this change in the {tier} tier."
    else:
        crc = zlib.crc32(text.encode())
        tier, frac = ("easy", "medium", "hard")[crc % 3], (crc >> 8) % 1001 / 1000
        reasoning = f"No size signal in the prompt; checksum {crc:08x} picks the {tier} tier."
    low, high = TIERS[tier]
    return tier, round(low + frac * (high - low), 3), reasoning


def triage_responder(request: dict[str, Any]) -> Action:
    """The demo's and benchmark's stand-in model: deterministic, schema-valid answers to any request.

    A forced tool is called (else, with tools offered and tool_choice not "none", the first tool);
    `classify_difficulty` gets a real-looking classification, every other tool schema-filled
    arguments; a request without tools gets a short text reply.
    """
    tools = tool_schemas(request)
    name = forced_tool_name(request)
    if name is None:
        if not tools or request.get("tool_choice") == "none":
            text = user_text(request)
            return Text(f"Twin reply to a {len(text)}-character prompt (crc {zlib.crc32(text.encode()):08x}).")
        name = next(iter(tools))
    schema = tools.get(name) or {"type": "object"}
    filled = fill_from_schema(schema)
    arguments: dict[str, Any] = filled if isinstance(filled, dict) else {}
    if name == "classify_difficulty":
        arguments = _with_classification(schema, arguments, user_text(request))
    return ToolCall(name, arguments)


def _with_classification(schema: dict[str, Any], arguments: dict[str, Any], text: str) -> dict[str, Any]:
    """Overlay the classification on the filled arguments, keeping only keys (and enum spelling) the schema has."""
    difficulty, score, reasoning = classify_text(text)
    values: dict[str, Any] = {"difficulty": difficulty, "score": score, "reasoning": reasoning}
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not properties:
        return {**arguments, **values}
    out = dict(arguments)
    for key, value in values.items():
        if key in properties:
            enum = _enum_values(properties[key], schema)
            out[key] = next((e for e in enum if str(e).lower() == str(value).lower()), value)
    return out


def _enum_values(schema: dict[str, Any], root: dict[str, Any]) -> list[Any]:
    resolved = _resolve(schema, root)
    if resolved.get("enum"):
        return list(resolved["enum"])
    for key in ("anyOf", "oneOf"):
        for branch in resolved.get(key) or []:
            if values := _enum_values(branch, root):
                return values
    return []


# --- schema filler ---------------------------------------------------------------------------
SENTENCE = "A short deterministic answer from the OpenAI twin."
_FORMATS = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "00:00:00",
    "duration": "PT1S",
    "email": "twin@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "127.0.0.1",
}
_MAX_DEPTH = 6  # past this, arrays stay empty and optionals null, so self-referential models terminate


def fill_from_schema(schema: dict[str, Any], root: dict[str, Any] | None = None, depth: int = 0) -> Any:
    """A minimal value valid against `schema`: what a well-behaved model would put in tool arguments.

    Only required properties are filled (optional ones fall back to their defaults in pydantic);
    handles `$ref`/`$defs`, `anyOf`/`oneOf` (first non-null branch), `allOf`, `const`, `enum`,
    numeric bounds (incl. exclusive and `multipleOf`), string lengths and common formats.
    """
    root = schema if root is None else root
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if branches := schema.get(key):
            non_null = [b for b in branches if _resolve(b, root).get("type") != "null"]
            if not non_null or (depth >= _MAX_DEPTH and len(non_null) < len(branches)):
                return None
            return fill_from_schema(non_null[0], root, depth)
    if branches := schema.get("allOf"):
        merged: dict[str, Any] = {}
        for branch in branches:
            merged.update(_resolve(branch, root))
        merged.update({k: v for k, v in schema.items() if k != "allOf"})
        return fill_from_schema(merged, root, depth)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
    if kind == "object":
        properties = schema.get("properties") or {}
        return {
            name: fill_from_schema(properties.get(name, {}), root, depth + 1) for name in schema.get("required", [])
        }
    if kind == "array":
        return _array(schema, root, depth)
    if kind in ("number", "integer"):
        return _number(schema, integer=kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    return _string(schema)


def _resolve(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """Follow local `$ref`s ("#/$defs/Name"); sibling keywords next to a `$ref` are kept on top."""
    for _ in range(32):
        if not isinstance(schema, dict) or not isinstance(schema.get("$ref"), str):
            break
        ref: str = schema["$ref"]
        target: Any = root
        for part in ref.removeprefix("#").strip("/").split("/"):
            if part:
                target = target.get(part.replace("~1", "/").replace("~0", "~"), {}) if isinstance(target, dict) else {}
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema if isinstance(schema, dict) else {}


def _array(schema: dict[str, Any], root: dict[str, Any], depth: int) -> list[Any]:
    if prefix := schema.get("prefixItems"):
        return [fill_from_schema(item, root, depth + 1) for item in prefix]
    count = max(int(schema.get("minItems", 0)), 0 if depth >= _MAX_DEPTH else 1)
    if depth >= 4 * _MAX_DEPTH:  # an unsatisfiable recursive minItems: stop, invalid but finite
        count = 0
    if "maxItems" in schema:
        count = min(count, int(schema["maxItems"]))
    items = schema.get("items")
    return [fill_from_schema(items if isinstance(items, dict) else {}, root, depth + 1) for _ in range(count)]


def _number(schema: dict[str, Any], integer: bool) -> float | int:
    """0.5 (1 for integers) when the bounds allow it, else the first in-bounds candidate near them."""
    low, high = schema.get("minimum"), schema.get("maximum")
    xlow, xhigh = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    step = schema.get("multipleOf")

    def fits(v: float) -> bool:
        return (
            (low is None or v >= low)
            and (high is None or v <= high)
            and (xlow is None or v > xlow)
            and (xhigh is None or v < xhigh)
            and (not step or abs(v / step - round(v / step)) < 1e-9)
        )

    floor = low if low is not None else xlow
    ceiling = high if high is not None else xhigh
    bases: list[float] = [1 if integer else 0.5]
    if floor is not None and ceiling is not None:
        bases.append((floor + ceiling) / 2)
    bases += [b for b in (low, high) if b is not None]
    bases += [xlow + d for d in (1, 0.5, 1e-6) if xlow is not None] + [
        xhigh - d for d in (1, 0.5, 1e-6) if xhigh is not None
    ]
    candidates: list[float] = []
    for base in bases:
        options = [base]
        if step:
            options = [math.ceil(base / step) * step, math.floor(base / step) * step]
        if integer:
            options = [v for o in options for v in (math.ceil(o), math.floor(o))]
        candidates += options
    chosen = next((c for c in candidates if fits(c)), candidates[-1])
    return int(chosen) if integer else float(chosen)


def _string(schema: dict[str, Any]) -> str:
    value = _FORMATS.get(schema.get("format", ""), SENTENCE)
    min_length, max_length = int(schema.get("minLength", 0)), schema.get("maxLength")
    if len(value) < min_length:
        value += "." * (min_length - len(value))
    return value[: int(max_length)] if max_length is not None else value
