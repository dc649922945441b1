"""The processed-PR ledger: the seed's `--pr-file` JSONL, so a re-run never re-pays for a PR.

One line per PR with its outcome and reason, accepted and rejected alike:
`{"repo": "o/r", "pr": 12, "outcome": "rejected", "reason": "...", "stage": "filter",
"hour": "2015-01-01-00:00", "at": "..."}`. Lines written by the seed (`{"repo", "pr"}` only)
are read too. Appends take an exclusive `flock` and are fsync'ed before returning, so
concurrent runs interleave whole lines and a crash never leaves a PR half-recorded; a torn
last line (power loss mid-write) is skipped on read.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

from swe_forge_dagster.common.jsonl import append_lines

Key = tuple[str, int]


@dataclass(frozen=True)
class LedgerEntry:
    repo: str
    pr: int
    outcome: str | None = None  # accepted | rejected (None: a seed line)
    reason: str | None = None
    stage: str | None = None
    hour: str | None = None
    at: str | None = None

    @property
    def key(self) -> Key:
        return (self.repo, self.pr)


class PRLedger(Protocol):
    """What the candidate stages use: this JSONL file, or the shared database (`candidates.ledger_postgres`);
    `wiring.shared_state` chooses by the setting."""

    def load(self) -> dict[Key, LedgerEntry]: ...
    def append(self, entries: Iterable[LedgerEntry]) -> int: ...


class Ledger:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def load(self) -> dict[Key, LedgerEntry]:
        """Every PR recorded so far (the last line for a PR wins)."""
        entries: dict[Key, LedgerEntry] = {}
        if not self.path.exists():
            return entries
        with open(self.path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    raw = json.loads(line)
                    entry = LedgerEntry(**{k: raw.get(k) for k in LedgerEntry.__dataclass_fields__})
                    entry = LedgerEntry(**{**asdict(entry), "repo": str(raw["repo"]), "pr": int(raw["pr"])})
                except (ValueError, KeyError, TypeError):
                    continue  # torn or foreign line
                entries[entry.key] = entry
        return entries

    def append(self, entries: Iterable[LedgerEntry]) -> int:
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        lines = [
            json.dumps({k: v for k, v in asdict(e).items() if v is not None} | {"at": e.at or now}) + "\n"
            for e in entries
        ]
        if not lines:
            return 0
        append_lines(self.path, "".join(lines).encode("utf-8"), fsync=True)
        return len(lines)
