"""Every LLM call, recorded as it happens: stage, model, tokens, cost, latency, cache hit.

One JSON line per call, appended under an exclusive `flock` and flushed at once, so concurrent
runs interleave whole lines and a crash loses nothing already paid for. DuckDB reads the files
as the `llm_calls` view with an explicit column list (a torn last line is skipped). With the shared
database (`SWE_FORGE_POSTGRES_URL`) the calls go to its `llm_calls` table instead (`llm.ledger_postgres`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import pyarrow as pa

from swe_forge_dagster.common.jsonl import append_lines
from swe_forge_dagster.common.store import StorePath, write_bytes_atomic

LLM_CALLS = "llm_calls"

LLM_CALLS_SCHEMA = pa.schema(
    [
        ("at", pa.timestamp("us", tz="UTC")),
        ("stage", pa.string()),
        ("item", pa.string()),
        ("model", pa.string()),
        ("attempt", pa.int64()),
        ("outcome", pa.string()),
        ("error", pa.string()),
        ("prompt_tokens", pa.int64()),
        ("completion_tokens", pa.int64()),
        ("cost", pa.float64()),
        ("cost_source", pa.string()),
        ("latency_ms", pa.float64()),
        ("cache_hit", pa.bool_()),
        ("call_form", pa.string()),
    ]
)


@dataclass(frozen=True)
class CallRecord:
    stage: str
    model: str
    outcome: str  # ok | repair (answer rejected, asked again) | failed | http_error | cached
    item: str | None = None
    attempt: int = 1
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    cost_source: str | None = None  # provider | price | None
    latency_ms: float = 0.0
    cache_hit: bool = False
    call_form: str | None = None  # how the answer's tool calls came (`content_calls.FORMS`); None without calls
    at: str = dataclasses.field(default_factory=lambda: dt.datetime.now(dt.UTC).isoformat())


class CallSink(Protocol):
    """Where the client records calls: these JSONL files in the lake, or the shared database
    (`llm.ledger_postgres`); `wiring.shared_state` chooses by the setting."""

    def append(self, record: CallRecord) -> None: ...


class CallLedger:
    def __init__(self, directory: Path) -> None:
        self.path = Path(directory) / "calls.jsonl"

    def append(self, record: CallRecord) -> None:
        line = (json.dumps(dataclasses.asdict(record), separators=(",", ":")) + "\n").encode("utf-8")
        append_lines(self.path, line)


class StoreCallLedger:
    """The calls on an object-store lake (`SWE_FORGE_HOME=s3://…` without the shared database): an object
    cannot be appended to, so each call is its own one-line object, written in one PUT as it happens (a crash
    still loses nothing already paid for); the `llm_calls` view reads them with the same glob."""

    def __init__(self, directory: StorePath) -> None:
        self.directory = directory

    def append(self, record: CallRecord) -> None:
        line = (json.dumps(dataclasses.asdict(record), separators=(",", ":")) + "\n").encode("utf-8")
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")
        write_bytes_atomic(self.directory / f"calls-{stamp}-{uuid.uuid4().hex[:12]}.jsonl", line)
