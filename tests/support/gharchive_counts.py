"""An independent count of a GH Archive hour (plain json, not our parser), to check the parser against."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path


def independent_count(path: Path) -> tuple[int, Counter[str], int]:
    """Events, PR events by action, and merged PRs, counted with plain json (not our parser)."""
    events, actions, merged = 0, Counter(), 0
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            event = json.loads(line)
            events += 1
            if event["type"] == "PullRequestEvent":
                actions[event["payload"]["action"]] += 1
                merged += bool(event["payload"]["pull_request"].get("merged"))
    return events, actions, merged
