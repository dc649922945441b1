"""Answers to identical LLM requests, kept on disk so a re-run costs nothing.

The key is a hash of everything that determines the answer (model, messages, tools, tool
choice); the value is the validated tool arguments. SQLite (WAL) so several run processes can
share it; thread-local connections so the 10 calls in flight can too.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any, Protocol

SCHEMA = "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, stage TEXT, value TEXT, stored_at REAL)"


def request_key(model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], tool_choice: Any) -> str:
    canonical = json.dumps(
        {"model": model, "messages": messages, "tools": tools, "tool_choice": tool_choice},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class AnswerStore(Protocol):
    """What the client uses: this SQLite cache (one machine) or the shared database's (`llm.cache_postgres`,
    every machine); `wiring.shared_state` chooses by the setting."""

    def get(self, key: str) -> dict[str, Any] | None: ...
    def put(self, key: str, stage: str, value: dict[str, Any]) -> None: ...


class AnswerCache:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        con = self._con()
        con.execute("PRAGMA journal_mode=WAL")
        con.execute(SCHEMA)

    def _con(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            con.execute("PRAGMA busy_timeout=60000")
            con.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: survives a crash, no fsync per answer
            self._local.con = con
        return con

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._con().execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, stage: str, value: dict[str, Any]) -> None:
        self._con().execute(
            "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?)", (key, stage, json.dumps(value), time.time())
        )
