"""One client for every structured LLM call: forced function calling, validated, repaired, cached.

Each call offers exactly one tool whose JSON schema is a pydantic model and forces it with
`tool_choice`. The arguments are validated by that model; a missing tool call, invalid JSON or
a schema violation goes back to the model as an error message and is retried a bounded number
of times, then the item fails with the reason. Nothing is ever defaulted silently. 429/5xx,
timeouts and connection errors are retried with backoff, honouring `Retry-After` (the shared
policy in `common.retry`). Identical requests are answered from the cache; every call lands in
the ledger.

`chat` is the other kind of call: one turn of a tool-using agent, tools offered but not forced,
with the same retries, cache and ledger (the agent loop itself is in `tasks.agent_tools`).
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from swe_forge_dagster.common.retry import Backoff
from swe_forge_dagster.common.slots import RequestSlots
from swe_forge_dagster.llm.cache import AnswerStore, request_key
from swe_forge_dagster.llm.content_calls import STRUCTURED
from swe_forge_dagster.llm.ledger import CallRecord, CallSink
from swe_forge_dagster.llm.turns import ChatTurn, ToolCallRequest, reply_calls

T = TypeVar("T", bound=BaseModel)
KEY_ENVS = "SWE_FORGE_LLM_API_KEY or OPENROUTER_API_KEY"
# Worth another try: rate limits, 5xx, timeouts and dropped connections. Other errors are final.
_TRANSIENT = (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError, openai.APIConnectionError)


class LLMError(Exception):
    """An LLM call failed for good (after retries and repairs)."""


class LLMAuthError(LLMError):
    """The endpoint rejected the key: nothing works until it is fixed."""


class LLMRequestRejected(LLMError):
    """The endpoint refused this request itself (400, 413, 422: e.g. a prompt past the model's context): another
    item's request may well pass, so an agent ends this item's episode, not the run."""


class StructuredOutputError(LLMError):
    """The model never produced a valid call of the tool; the reasons are in the message."""


@dataclass
class LLMStats:
    calls: int = 0  # requests that reached the endpoint
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    repairs: int = 0
    failures: int = 0

    def snapshot(self) -> LLMStats:
        return LLMStats(**vars(self))


@dataclass(frozen=True)
class Prices:
    """USD per million tokens, used when the provider does not report a cost."""

    input_per_mtok: float | None = None
    output_per_mtok: float | None = None


@functools.lru_cache(maxsize=64)
def _schema(model_cls: type[BaseModel]) -> str:
    """The tool's JSON schema, built once per model class (it is not cheap, and calls are many)."""
    return json.dumps(model_cls.model_json_schema())


def _error_text(exc: Exception) -> str:
    """A transient error as the ledger and the final message name it, e.g. `RateLimitError: 429`."""
    return f"{type(exc).__name__}: {getattr(exc, 'status_code', '')}".strip(": ")


def _retry_after(exc: BaseException) -> float | None:
    """The endpoint's `Retry-After` in seconds, or None (unparseable or absent) to back off instead."""
    response = getattr(exc, "response", None)
    header = response.headers.get("retry-after") if response is not None else None
    try:
        return max(0.0, float(header)) if header is not None else None
    except ValueError:
        return None


def tool_for(model_cls: type[BaseModel], name: str, description: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": json.loads(_schema(model_cls))},
    }


class LLMClient:
    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str,
        *,
        cache: AnswerStore | None = None,
        ledger: CallSink | None = None,
        slots: RequestSlots | None = None,
        max_in_flight: int = 10,
        max_repairs: int = 2,
        max_attempts: int = 5,
        backoff_initial: float = 1.0,
        backoff_max: float = 60.0,
        timeout: float = 120.0,
        prices: Prices = Prices(),
        forced_choice: str = "function",
        max_output_tokens: int | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not api_key:
            raise LLMAuthError(f"no LLM API key: set {KEY_ENVS}")
        self.model = model
        self.cache = cache
        self.ledger = ledger
        self.slots = slots
        self.max_repairs = max_repairs
        self.max_attempts = max_attempts
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.prices = prices
        self.forced_choice = forced_choice  # "function": by name; "required": any tool (one is offered)
        self.max_output_tokens = max_output_tokens  # sent as `max_tokens` when set: a model that never stops
        self.stats = LLMStats()
        self._sleep = sleep
        self._lock = threading.Lock()
        self._in_flight = threading.BoundedSemaphore(max_in_flight)
        self._openai = openai.OpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout)

    def close(self) -> None:
        self._openai.close()

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- structured calls -----------------------------------------------------------------
    def structured(
        self,
        stage: str,
        messages: list[dict[str, Any]],
        output: type[T],
        *,
        tool_name: str,
        tool_description: str,
        item: str | None = None,
        context: dict[str, Any] | None = None,
    ) -> T:
        """Force one call of `tool_name` and return its arguments validated by `output`."""
        tools = [tool_for(output, tool_name, tool_description)]
        choice: str | dict[str, Any] = (
            "required" if self.forced_choice == "required" else {"type": "function", "function": {"name": tool_name}}
        )
        key = request_key(self.model, messages, tools, choice)
        cached = self.cache.get(key) if self.cache else None
        if cached is not None:
            try:
                value = output.model_validate(cached["arguments"], context=context)
            except ValidationError:
                value = None  # the model class changed since: ask again
            if value is not None:
                self._record(CallRecord(stage, self.model, "cached", item, cache_hit=True))
                with self._lock:
                    self.stats.cache_hits += 1
                return value
        conversation = list(messages)
        problems: list[str] = []
        for attempt in range(1, self.max_repairs + 2):
            message, usage = self._complete(stage, conversation, tools, choice, item, attempt)
            replied, form = reply_calls(message, {tool_name})
            calls = [c for c in replied if c.name == tool_name]
            if not calls:
                other = ", ".join(sorted({c.name or "(no name)" for c in replied}))
                problem = f"no call of {tool_name} " + (
                    f"(called {other}: not a function here)"
                    if other
                    else f"(answered {'text' if message.content else 'nothing'})"
                )
                conversation += [
                    {"role": "assistant", "content": message.content or ""},
                    {"role": "user", "content": f"Error: {problem}. Answer only by calling the function {tool_name}."},
                ]
            else:
                call = calls[0]
                problem, value = self._parse(call.arguments_json, output, context)
                if value is not None:
                    self._record(CallRecord(stage, self.model, "ok", item, attempt, call_form=form, **usage))
                    if self.cache:
                        self.cache.put(key, stage, {"arguments": json.loads(call.arguments_json)})
                    return value
                conversation += [
                    ChatTurn(message.content, [call], cached=False, call_form=form).message(),
                    {
                        "role": "tool",
                        "tool_call_id": call.id,
                        "content": f"Error: {problem}. Call {tool_name} again with arguments that fix this.",
                    },
                ]
            problems.append(problem)
            outcome = "repair" if attempt <= self.max_repairs else "failed"
            self._record(
                CallRecord(stage, self.model, outcome, item, attempt, error=problem[:500], call_form=form, **usage)
            )
            with self._lock:
                self.stats.repairs += outcome == "repair"
        with self._lock:
            self.stats.failures += 1
        raise StructuredOutputError(
            f"{stage}: no valid {tool_name} call after {len(problems)} attempts: " + " | ".join(problems)
        )

    # -- agent turns ----------------------------------------------------------------------
    def chat(
        self,
        stage: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        *,
        item: str | None = None,
        tool_choice: str | dict[str, Any] = "auto",
    ) -> ChatTurn:
        """One agent turn: a completion with `tools` offered (not forced), answered from the cache if seen.

        Nothing is validated or repaired here: in an agent loop a bad tool call is the agent's to
        fix, so it goes back to the model as a tool message from the loop. The cache keys the whole
        request and stores the whole assistant message (tool call ids included): a re-run whose
        tool results come out the same replays the conversation exactly, with no request at all.
        """
        # Its own key space: a structured call's entry (validated arguments only) must never be
        # read, or overwritten, as a chat turn, even for an identical request.
        key = "chat:" + request_key(self.model, messages, tools, tool_choice)
        cached = self.cache.get(key) if self.cache else None
        if cached is not None and isinstance(cached.get("tool_calls"), list):
            turn = ChatTurn(
                cached.get("content"),
                [ToolCallRequest(c["id"], c["name"], c["arguments"]) for c in cached["tool_calls"]],
                cached=True,
                call_form=cached.get("call_form") or (STRUCTURED if cached["tool_calls"] else None),
            )
            self._record(CallRecord(stage, self.model, "cached", item, cache_hit=True))
            with self._lock:
                self.stats.cache_hits += 1
            return turn
        message, usage = self._complete(stage, messages, tools, tool_choice, item, 1)
        calls, form = reply_calls(message, {tool["function"]["name"] for tool in tools})
        self._record(CallRecord(stage, self.model, "ok", item, call_form=form, **usage))
        if self.cache:
            stored = [{"id": c.id, "name": c.name, "arguments": c.arguments_json} for c in calls]
            self.cache.put(key, stage, {"content": message.content, "tool_calls": stored, "call_form": form})
        tokens = usage["prompt_tokens"] + usage["completion_tokens"]
        return ChatTurn(message.content, calls, cached=False, call_form=form, tokens=tokens)

    @staticmethod
    def _parse(arguments: str | None, output: type[T], context: dict[str, Any] | None) -> tuple[str, T | None]:
        if not isinstance(arguments, str) or not arguments.strip():  # null arguments (some providers): repairable
            return "the call has no arguments; send them as a JSON object", None
        try:
            data = json.loads(arguments)
        except json.JSONDecodeError as exc:
            return f"the arguments are not valid JSON ({exc.msg} at char {exc.pos})", None
        try:
            return "", output.model_validate(data, context=context)
        except ValidationError as exc:
            details = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
            return f"the arguments do not match the schema ({details})", None

    # -- one completion, with transport retries -------------------------------------------
    def _complete(
        self,
        stage: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        choice: str | dict[str, Any],
        item: str | None,
        attempt: int,
    ) -> tuple[Any, dict[str, Any]]:
        """One chat completion (retried on transport errors): the message and its usage for the ledger."""
        backoff = Backoff(self.max_attempts, self.backoff_initial, self.backoff_max)
        retrying = backoff.retrying(_TRANSIENT, sleep=self._sleep, server_wait=_retry_after)
        try:
            return retrying(self._complete_once, stage, messages, tools, choice, item, attempt)
        except _TRANSIENT as exc:
            raise LLMError(f"{stage}: {_error_text(exc)} persisted through {self.max_attempts} attempts") from exc

    def _complete_once(
        self,
        stage: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        choice: str | dict[str, Any],
        item: str | None,
        attempt: int,
    ) -> tuple[Any, dict[str, Any]]:
        """One request; every failure lands in the ledger, and only `_TRANSIENT` ones are left to retry."""
        started = time.perf_counter()
        try:
            with self._in_flight, self.slots.hold() if self.slots else nullcontext():
                limit = {"max_tokens": self.max_output_tokens} if self.max_output_tokens else {}
                completion = self._openai.chat.completions.create(
                    model=self.model,
                    messages=messages,
                    tools=tools,
                    tool_choice=choice,  # type: ignore[arg-type]
                    **limit,  # type: ignore[arg-type]
                )
        except openai.AuthenticationError as exc:
            self._record(CallRecord(stage, self.model, "http_error", item, attempt, error="401"))
            raise LLMAuthError(f"the LLM endpoint rejected the API key (401): check {KEY_ENVS}") from exc
        except _TRANSIENT as exc:
            latency = (time.perf_counter() - started) * 1000
            self._record(
                CallRecord(stage, self.model, "http_error", item, attempt, error=_error_text(exc), latency_ms=latency)
            )
            raise
        except openai.APIStatusError as exc:
            self._record(CallRecord(stage, self.model, "http_error", item, attempt, error=str(exc.status_code)))
            kind = LLMRequestRejected if exc.status_code in (400, 413, 422) else LLMError
            raise kind(f"{stage}: the LLM endpoint answered {exc.status_code}: {exc.message}") from exc
        usage = self._account(completion, (time.perf_counter() - started) * 1000)
        if not completion.choices:
            self._record(CallRecord(stage, self.model, "failed", item, attempt, error="no choices", **usage))
            raise LLMError(f"{stage}: the LLM endpoint returned no choices")
        return completion.choices[0].message, usage

    def _account(self, completion: Any, latency_ms: float) -> dict[str, Any]:
        """Add a completion's tokens and cost to the stats; return them as ledger fields."""
        usage = completion.usage
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        output = int(getattr(usage, "completion_tokens", 0) or 0)
        reported = (usage.model_extra or {}).get("cost") if usage is not None else None
        cost, source = (float(reported), "provider") if reported is not None else self._priced(prompt, output)
        with self._lock:
            self.stats.calls += 1
            self.stats.prompt_tokens += prompt
            self.stats.completion_tokens += output
            self.stats.cost += cost or 0.0
        return {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "cost": cost,
            "cost_source": source,
            "latency_ms": round(latency_ms, 1),
        }

    def _priced(self, prompt: int, output: int) -> tuple[float | None, str | None]:
        if self.prices.input_per_mtok is None and self.prices.output_per_mtok is None:
            return None, None
        cost = prompt * (self.prices.input_per_mtok or 0) / 1e6 + output * (self.prices.output_per_mtok or 0) / 1e6
        return cost, "price"

    def _record(self, record: CallRecord) -> None:
        if self.ledger:
            self.ledger.append(record)
