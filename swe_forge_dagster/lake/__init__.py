"""The Parquet lake and its DuckDB catalog (no Dagster imports)."""
