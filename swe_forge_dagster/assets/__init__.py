"""Thin Dagster assets: read inputs, call domain code, write outputs, report metadata."""
