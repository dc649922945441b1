"""From a classified PR to a validated task instance (no Dagster)."""
