"""Small helpers shared by the domain packages (no Dagster imports)."""
