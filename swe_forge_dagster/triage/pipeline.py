"""Classify an hour's accepted PRs by difficulty, once each, up to N calls in flight.

Every accepted PR is classified whatever difficulty a user targets: the target is applied
downstream, so one classification (and one payment) serves any `--difficulty`. An item whose
model answers never validate is kept as an `error` row with the reason, never defaulted.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa

from swe_forge_dagster.candidates.datasets import ENRICHED_PRS, partition_file, read_partition
from swe_forge_dagster.common.store import StorePath
from swe_forge_dagster.lake.dataset import HOURLY_HIVE, Dataset
from swe_forge_dagster.lake.writer import write_partition
from swe_forge_dagster.llm.client import LLMAuthError, LLMClient, LLMError
from swe_forge_dagster.llm.functions import DifficultyTriage, PRFacts, classify_difficulty

CLASSIFIED_PRS = "classified_prs"
CLASSIFIED_PRS_SCHEMA = pa.schema(
    [
        ("repo_name", pa.string()),
        ("number", pa.int64()),
        ("status", pa.string()),
        ("difficulty", pa.string()),
        ("score", pa.float64()),
        ("reasoning", pa.string()),
        ("error", pa.string()),
        ("model", pa.string()),
        ("title", pa.string()),
        ("language", pa.string()),
        ("additions", pa.int64()),
        ("deletions", pa.int64()),
        ("changed_files", pa.int64()),
    ]
)
CLASSIFIED_PRS_DATASET = Dataset(name=CLASSIFIED_PRS, schema=CLASSIFIED_PRS_SCHEMA, hive_types=HOURLY_HIVE)


@dataclass
class ClassifyReport:
    hour: str
    prs_in: int
    classified: int
    errors: int
    by_difficulty: dict[str, int]
    calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    cost: float
    seconds: float
    path: Path
    error_samples: list[str]


def facts(row: dict) -> PRFacts:
    return PRFacts(
        repo=row["repo_name"],
        number=int(row["number"]),
        title=row.get("title") or "",
        body=row.get("body") or "",
        files=list(row.get("file_paths") or []),
        additions=int(row.get("additions") or 0),
        deletions=int(row.get("deletions") or 0),
        language=row.get("language"),
    )


def classify_hour(lake_dir: StorePath, hour: str, client: LLMClient, workers: int = 10) -> ClassifyReport:
    started = time.perf_counter()
    enriched = pl.from_arrow(read_partition(lake_dir, ENRICHED_PRS, hour, ENRICHED_PRS))
    assert isinstance(enriched, pl.DataFrame)
    rows = enriched.filter(pl.col("status") == "accepted").to_dicts()
    before = client.stats.snapshot()

    def one(row: dict) -> DifficultyTriage | LLMError:
        try:
            return classify_difficulty(client, facts(row))
        except LLMAuthError:
            raise
        except LLMError as exc:
            return exc

    with ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="triage") as pool:
        results = list(pool.map(one, rows))
    out, errors = [], []
    for row, result in zip(rows, results, strict=True):
        record = {
            name: row.get(name)
            for name in ("repo_name", "number", "title", "language", "additions", "deletions", "changed_files")
        }
        record["model"] = client.model
        if isinstance(result, DifficultyTriage):
            record.update(
                status="classified", difficulty=result.difficulty, score=result.score, reasoning=result.reasoning
            )
        else:
            record.update(status="error", error=str(result)[:1000])
            errors.append(f"{row['repo_name']}#{row['number']}: {result}")
        out.append(record)
    table = pa.Table.from_pylist(out, schema=CLASSIFIED_PRS_SCHEMA)
    path = write_partition(table, partition_file(lake_dir, CLASSIFIED_PRS, hour).parent, CLASSIFIED_PRS_SCHEMA)
    after = client.stats
    return ClassifyReport(
        hour=hour,
        prs_in=len(rows),
        classified=sum(r["status"] == "classified" for r in out),
        errors=len(errors),
        by_difficulty=dict(Counter(r["difficulty"] for r in out if r.get("difficulty"))),
        calls=after.calls - before.calls,
        cache_hits=after.cache_hits - before.cache_hits,
        prompt_tokens=after.prompt_tokens - before.prompt_tokens,
        completion_tokens=after.completion_tokens - before.completion_tokens,
        cost=round(after.cost - before.cost, 6),
        seconds=round(time.perf_counter() - started, 3),
        path=path,
        error_samples=errors[:5],
    )
