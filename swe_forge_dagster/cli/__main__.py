"""`python -m swe_forge_dagster.cli`: the `swe-forge` command."""

from swe_forge_dagster.cli.app import main

if __name__ == "__main__":
    main()
