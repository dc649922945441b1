"""The `llm_calls` dataset: JSONL in the lake, plus the shared database's rows when it is set.

Declared apart from `llm.ledger` (the JSONL ledger) because its view also reads `llm.ledger_postgres`,
which builds on `llm.ledger`: this module sits above both.
"""

from __future__ import annotations

from swe_forge_dagster.lake.dataset import Dataset
from swe_forge_dagster.llm.ledger import LLM_CALLS, LLM_CALLS_SCHEMA
from swe_forge_dagster.llm.ledger_postgres import llm_calls_table

LLM_CALLS_DATASET = Dataset(name=LLM_CALLS, schema=LLM_CALLS_SCHEMA, fmt="jsonl", shared_rows=llm_calls_table)
"""Appended call by call (a JSONL ledger), so it is read as JSON with an explicit column list."""
