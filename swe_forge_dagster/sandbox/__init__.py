"""Docker sandboxes where repository code runs: never on the host (no Dagster)."""
