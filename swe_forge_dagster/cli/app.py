"""`swe-forge`: the command line. Each command lives in its own module of this package.

Which commands run the Dagster assets: `ingest`, `mine` and `demo` launch the jobs in-process
(recorded in the instance, visible in the UI); `harness`, `validate` and `export` call the same
domain functions the assets call (`harness` also records its results in the `eval_results`
dataset), without a Dagster run. `sql` reads the lake; `setup` and `dev` manage the instance.
Heavy imports happen inside the commands, so `swe-forge --help` stays fast.
"""

from __future__ import annotations

from typing import Annotated

import typer

from swe_forge_dagster.cli.agents import agents_app
from swe_forge_dagster.cli.demo import demo
from swe_forge_dagster.cli.dev import dev
from swe_forge_dagster.cli.export import export
from swe_forge_dagster.cli.gym import gym_app
from swe_forge_dagster.cli.harness import harness
from swe_forge_dagster.cli.help_format import configure_help
from swe_forge_dagster.cli.ingest import ingest
from swe_forge_dagster.cli.llm import llm_app
from swe_forge_dagster.cli.mine import mine
from swe_forge_dagster.cli.setup import setup
from swe_forge_dagster.cli.sql import sql
from swe_forge_dagster.cli.validate import validate

app = typer.Typer(
    name="swe-forge",
    help="Mine GH Archive PRs into validated SWE-bench tasks, on Dagster.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(shown: bool) -> None:
    if shown:
        from importlib.metadata import PackageNotFoundError, version

        try:
            print(f"swe-forge {version('swe-forge-dagster')}")
        except PackageNotFoundError:
            print("swe-forge (not installed: run ./swe-forge)")
        raise typer.Exit()


@app.callback()
def _options(
    shown: Annotated[
        bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Mine GH Archive PRs into validated SWE-bench tasks, on Dagster."""


for _command in (setup, ingest, sql, demo, mine, harness, validate, export):
    app.command(_command.__name__)(_command)
app.command("dev", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(dev)
app.add_typer(gym_app)
app.add_typer(llm_app)
app.add_typer(agents_app)


def main() -> None:
    """The CLI; a store or database setting that cannot be used is exit 2 (fix the setting), a shared database
    that cannot be reached or used while a command runs is exit 1 (a runtime failure; retrying may work).
    Either way one line naming the setting, never its value or a traceback."""
    from swe_forge_dagster.common.postgres import SharedStateError
    from swe_forge_dagster.common.postgres_url import PostgresUrlError
    from swe_forge_dagster.common.store import StoreConfigError

    configure_help()
    try:
        app()
    except (StoreConfigError, PostgresUrlError, SharedStateError) as exc:
        from swe_forge_dagster.cli.common import say

        say("error:", "red", exc)
        raise SystemExit(1 if isinstance(exc, SharedStateError) else 2) from None


if __name__ == "__main__":
    main()
