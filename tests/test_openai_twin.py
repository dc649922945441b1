"""The OpenAI twin driven by the real `openai` SDK: wire format, faults, scripting, usage, responders.

These pin what the LLM client's tests, the benchmark and the demo rely on, so a twin that drifts
from what the SDK parses (or from what real providers send on failure) fails here first.
"""

from __future__ import annotations

import enum
import json
import threading
import time
from collections.abc import Iterator
from typing import Any, Literal

import httpx
import openai
import pytest
from openai import OpenAI
from pydantic import BaseModel, Field

from swe_forge_dagster.demo.twins.openai_twin import (
    TIERS,
    HttpError,
    MultipleToolCalls,
    OpenAITwin,
    Slow,
    Text,
    ToolCall,
    Usage,
    classify_text,
    fill_from_schema,
    triage_responder,
)

MODEL = "openai/gpt-test"
MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "You triage pull requests."},
    {"role": "user", "content": "Fix the parser.\nadded lines: 12"},
]


class Difficulty(BaseModel):
    difficulty: Literal["easy", "medium", "hard"]
    score: float = Field(ge=0.0, le=1.0)
    reasoning: str


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Location(BaseModel):
    path: str
    line: int = Field(ge=5)


class Tree(BaseModel):
    label: str
    children: list[Tree]


class Review(BaseModel):
    """Exercises what pydantic puts in tool schemas: $defs/$ref, enum, const, anyOf-null, bounds."""

    verdict: Literal["approve", "reject"]
    version: Literal["v1"]
    color: Color
    confidence: float = Field(ge=0.6, le=0.9)
    ratio: float = Field(gt=1.0, lt=2.0)
    location: Location
    extra_locations: list[Location] = Field(min_length=1)
    note: str | None
    maybe_location: Location | None = None
    tree: Tree
    approved: bool


def tool(name: str, model: type[BaseModel]) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "parameters": model.model_json_schema()}}


def forced(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


@pytest.fixture
def twin() -> Iterator[OpenAITwin]:
    with OpenAITwin() as twin:
        yield twin


_open_clients: list[OpenAI] = []


def client_for(
    twin: OpenAITwin, api_key: str = "test-key", timeout: float = 5.0, base_url: str | None = None
) -> OpenAI:
    """The SDK exactly as the project's LLM client builds it (no SDK retries: the client owns retrying)."""
    client = OpenAI(base_url=base_url or twin.url, api_key=api_key, max_retries=0, timeout=timeout)
    _open_clients.append(client)
    return client


@pytest.fixture(autouse=True)
def close_clients() -> Iterator[None]:
    """Close every SDK client a test made, so no keep-alive socket is left for the garbage collector."""
    yield
    while _open_clients:
        _open_clients.pop().close()


def test_forced_tool_call_round_trips_and_is_recorded(twin: OpenAITwin) -> None:
    tools = [tool("classify_difficulty", Difficulty), tool("submit_review", Review)]
    completion = client_for(twin).chat.completions.create(
        model=MODEL, messages=MESSAGES, tools=tools, tool_choice=forced("classify_difficulty")
    )

    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert completion.model == MODEL and completion.object == "chat.completion"
    assert completion.id.startswith("chatcmpl-")
    call = choice.message.tool_calls[0]
    assert call.type == "function" and call.id.startswith("call_")
    assert call.function.name == "classify_difficulty"
    parsed = Difficulty.model_validate_json(call.function.arguments)
    assert parsed.difficulty == "easy" and TIERS["easy"][0] <= parsed.score <= TIERS["easy"][1]

    (record,) = twin.requests
    assert (record.method, record.path, record.replied_status) == ("POST", "/v1/chat/completions", 200)
    assert record.headers["authorization"] == "Bearer test-key"
    assert record.json["model"] == MODEL
    assert record.json["messages"] == MESSAGES
    assert record.json["tools"] == tools
    assert record.json["tool_choice"] == forced("classify_difficulty")


def test_path_without_v1_prefix_is_accepted(twin: OpenAITwin) -> None:
    twin.queue(Text("hi"))
    client = client_for(twin, base_url=twin.url.removesuffix("/v1"))
    assert client.chat.completions.create(model=MODEL, messages=MESSAGES).choices[0].message.content == "hi"
    assert twin.requests[0].path == "/chat/completions"


def test_invalid_json_arguments_are_delivered_verbatim(twin: OpenAITwin) -> None:
    twin.queue(ToolCall("classify_difficulty", '{"difficulty": "easy", "score": 0.2'))
    completion = client_for(twin).chat.completions.create(model=MODEL, messages=MESSAGES)
    assert completion.choices[0].message.tool_calls[0].function.arguments == '{"difficulty": "easy", "score": 0.2'


def test_multiple_tool_calls_and_text(twin: OpenAITwin) -> None:
    twin.queue(MultipleToolCalls([ToolCall("a", {"x": 1}), ToolCall("b", "{}", id="call_fixed")]), Text("no tools"))
    client = client_for(twin)
    calls = client.chat.completions.create(model=MODEL, messages=MESSAGES).choices[0].message.tool_calls
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [("a", {"x": 1}), ("b", {})]
    assert calls[1].id == "call_fixed" and calls[0].id != calls[1].id

    choice = client.chat.completions.create(model=MODEL, messages=MESSAGES).choices[0]
    assert choice.message.tool_calls is None
    assert (choice.message.content, choice.finish_reason) == ("no tools", "stop")


def test_429_with_retry_after_is_a_rate_limit_error(twin: OpenAITwin) -> None:
    twin.queue(HttpError(429, headers={"retry-after": "1"}))
    with pytest.raises(openai.RateLimitError) as caught:
        client_for(twin).chat.completions.create(model=MODEL, messages=MESSAGES)
    assert caught.value.status_code == 429
    assert caught.value.response.headers["retry-after"] == "1"
    assert caught.value.code == "rate_limit_exceeded"
    assert twin.requests[0].replied_status == 429


@pytest.mark.parametrize("status", [500, 503])
def test_5xx_is_an_internal_server_error(twin: OpenAITwin, status: int) -> None:
    twin.queue(HttpError(status, "boom"))
    with pytest.raises(openai.InternalServerError) as caught:
        client_for(twin).chat.completions.create(model=MODEL, messages=MESSAGES)
    assert caught.value.status_code == status
    assert caught.value.body == {"message": "boom", "type": "server_error", "code": None}


def test_slow_answer_past_the_client_timeout_is_an_api_timeout(twin: OpenAITwin) -> None:
    twin.queue(Slow(1.0, Text("too late")))
    started = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        client_for(twin, timeout=0.2).chat.completions.create(model=MODEL, messages=MESSAGES)
    assert time.monotonic() - started < 0.9
    assert twin.count() == 1


def test_slow_answer_within_the_timeout_arrives(twin: OpenAITwin) -> None:
    twin.queue(Slow(0.05, Slow(0.05, Text("eventually"))))
    completion = client_for(twin).chat.completions.create(model=MODEL, messages=MESSAGES)
    assert completion.choices[0].message.content == "eventually"


def test_wrong_or_missing_key_is_401_without_echoing_it(twin: OpenAITwin) -> None:
    twin.queue(Text("kept for the authorised request"))
    with pytest.raises(openai.AuthenticationError) as caught:
        client_for(twin, api_key="sk-secret-wrong").chat.completions.create(model=MODEL, messages=MESSAGES)
    assert "sk-secret-wrong" not in caught.value.response.text
    assert caught.value.code == "invalid_api_key"

    raw = httpx.post(f"{twin.url}/chat/completions", json={"model": MODEL, "messages": MESSAGES})
    assert raw.status_code == 401
    assert raw.json() == {
        "error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}
    }
    assert twin.pending() == 1  # rejected requests never reach the script


def test_twin_without_api_key_accepts_any_key() -> None:
    with OpenAITwin(api_key=None, responder=lambda _: Text("open")) as twin:
        completion = client_for(twin, api_key="anything").chat.completions.create(model=MODEL, messages=MESSAGES)
    assert completion.choices[0].message.content == "open"


def test_unknown_forced_tool_is_400(twin: OpenAITwin) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        client_for(twin).chat.completions.create(
            model=MODEL, messages=MESSAGES, tools=[tool("classify_difficulty", Difficulty)], tool_choice=forced("nope")
        )
    assert "nope" in caught.value.message


@pytest.mark.parametrize(
    "body",
    [{"messages": MESSAGES}, {"model": MODEL}, {"model": MODEL, "messages": []}],
    ids=["no-model", "no-messages", "empty-messages"],
)
def test_malformed_requests_are_400(twin: OpenAITwin, body: dict[str, Any]) -> None:
    raw = httpx.post(f"{twin.url}/chat/completions", json=body, headers={"Authorization": "Bearer test-key"})
    assert raw.status_code == 400
    assert raw.json()["error"]["type"] == "invalid_request_error"


def test_unknown_path_is_404(twin: OpenAITwin) -> None:
    raw = httpx.get(f"{twin.url}/models", headers={"Authorization": "Bearer test-key"})
    assert raw.status_code == 404 and "error" in raw.json()


def test_queue_is_consumed_before_the_responder() -> None:
    asked: list[dict[str, Any]] = []

    def responder(request: dict[str, Any]) -> Text:
        asked.append(request)
        return Text(f"responder {len(asked)}")

    with OpenAITwin(responder=responder) as twin:
        twin.queue(ToolCall("f", {"n": 1}), Text("queued"))
        client = client_for(twin)
        answers = []
        for _ in range(4):
            message = client.chat.completions.create(model=MODEL, messages=MESSAGES).choices[0].message
            answers.append(message.tool_calls[0].function.name if message.tool_calls else message.content)
        assert answers == ["f", "queued", "responder 1", "responder 2"]
        assert twin.pending() == 0 and len(asked) == 2
        assert asked[0]["messages"] == MESSAGES


def test_default_usage_estimate_has_no_cost(twin: OpenAITwin) -> None:
    twin.queue(ToolCall("f", {"answer": "x" * 40}))
    usage = client_for(twin).chat.completions.create(model=MODEL, messages=MESSAGES).usage
    assert usage is not None
    assert usage.prompt_tokens == len(json.dumps(MESSAGES)) // 4
    assert usage.completion_tokens == len(json.dumps({"answer": "x" * 40})) // 4 + 1
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert "cost" not in (usage.model_extra or {})


def test_cost_per_mtok_and_usage_override() -> None:
    with OpenAITwin(cost_per_mtok=(2.0, 8.0)) as twin:
        twin.queue(Text("a", usage=Usage(1000, 500)), Text("b", usage=Usage(10, 20, cost=0.25)), Text("c"))
        client = client_for(twin)
        priced, fixed, estimated = (client.chat.completions.create(model=MODEL, messages=MESSAGES) for _ in range(3))
    assert priced.usage is not None and fixed.usage is not None and estimated.usage is not None
    assert (priced.usage.prompt_tokens, priced.usage.completion_tokens, priced.usage.total_tokens) == (1000, 500, 1500)
    assert priced.usage.model_extra["cost"] == pytest.approx(1000 * 2.0 / 1e6 + 500 * 8.0 / 1e6)
    assert fixed.usage.model_extra["cost"] == 0.25
    expected = estimated.usage.prompt_tokens * 2.0 / 1e6 + estimated.usage.completion_tokens * 8.0 / 1e6
    assert estimated.usage.model_extra["cost"] == pytest.approx(expected)


def triage_request(text: str, tool_name: str = "classify_difficulty") -> dict[str, Any]:
    return {
        "model": MODEL,
        "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": text}],
        "tools": [tool(tool_name, Difficulty)],
        "tool_choice": forced(tool_name),
    }


@pytest.mark.parametrize(
    ("text", "tier"),
    [
        ("added lines: 0", "easy"),
        ("Additions: 29", "easy"),
        ("additions: 30", "medium"),
        ("file a: added lines: 100\nfile b: added lines: 99", "medium"),
        ("added lines: 200", "hard"),
        ("added_lines = 5000", "hard"),
    ],
)
def test_triage_tier_follows_added_lines(text: str, tier: str) -> None:
    action = triage_responder(triage_request(text))
    assert isinstance(action, ToolCall) and action.name == "classify_difficulty"
    parsed = Difficulty.model_validate_json(action.arguments_json())
    low, high = TIERS[tier]
    assert parsed.difficulty == tier and low <= parsed.score <= high


def test_triage_is_deterministic_and_in_tier_without_a_size_line() -> None:
    seen = set()
    for i in range(60):
        request = triage_request(f"Refactor module {i} for clarity.")
        first, second = triage_responder(request), triage_responder(json.loads(json.dumps(request)))
        assert first == second
        assert isinstance(first, ToolCall)
        parsed = Difficulty.model_validate_json(first.arguments_json())
        low, high = TIERS[parsed.difficulty]
        assert low <= parsed.score <= high
        assert classify_text(f"Refactor module {i} for clarity.")[:2] == (parsed.difficulty, parsed.score)
        seen.add(parsed.difficulty)
    assert seen == {"easy", "medium", "hard"}


def test_triage_through_the_twin_matches_the_function(twin: OpenAITwin) -> None:
    client = client_for(twin)
    request = triage_request("Bump the version.\nadditions: 3")
    answers = {
        client.chat.completions.create(**request).choices[0].message.tool_calls[0].function.arguments for _ in range(2)
    }
    direct = triage_responder(request)
    assert isinstance(direct, ToolCall)
    assert answers == {direct.arguments_json()}


def test_triage_without_tools_answers_text() -> None:
    action = triage_responder({"model": MODEL, "messages": MESSAGES})
    assert isinstance(action, Text) and action.content


def test_schema_filler_validates_against_pydantic() -> None:
    filled = fill_from_schema(Review.model_json_schema())
    review = Review.model_validate(filled)
    assert review.verdict == "approve" and review.version == "v1" and review.color is Color.RED
    assert 0.6 <= review.confidence <= 0.9 and 1.0 < review.ratio < 2.0
    assert review.location.line >= 5 and len(review.extra_locations) == 1
    assert review.maybe_location is None  # optional with a default: left out


def test_triage_fills_any_other_forced_tool_from_its_schema(twin: OpenAITwin) -> None:
    tools = [tool("classify_difficulty", Difficulty), tool("submit_review", Review)]
    completion = client_for(twin).chat.completions.create(
        model=MODEL, messages=MESSAGES, tools=tools, tool_choice=forced("submit_review")
    )
    call = completion.choices[0].message.tool_calls[0]
    assert call.function.name == "submit_review"
    Review.model_validate_json(call.function.arguments)


def test_concurrent_requests_are_all_in_flight_at_once() -> None:
    with OpenAITwin(latency=0.2, responder=lambda _: Text("ok")) as twin:
        client = client_for(twin)
        barrier = threading.Barrier(10)
        errors: list[BaseException] = []

        def call() -> None:
            try:
                barrier.wait()
                client.chat.completions.create(model=MODEL, messages=MESSAGES)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=call) for _ in range(10)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert not errors
        assert twin.max_in_flight == 10 and twin.count() == 10

        twin.reset()
        twin.set_latency(0.0)
        assert (twin.count(), twin.max_in_flight) == (0, 0)
        client.chat.completions.create(model=MODEL, messages=MESSAGES)
        assert (twin.count(), twin.max_in_flight) == (1, 1)
