"""GH Archive: hours, download and parsing (no Dagster imports)."""
