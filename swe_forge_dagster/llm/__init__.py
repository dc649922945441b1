"""LLM work: one client for structured function calls, its cache and call ledger, and the prompts (no Dagster)."""
