"""Difficulty triage of enriched PRs (no Dagster)."""
