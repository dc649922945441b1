"""Task formats: SWE-bench instances, swe-forge task directories (no Dagster)."""
