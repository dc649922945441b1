"""The DuckDB catalog: views over the lake's Parquet globs, and SQL on them.

DuckDB lets one process write a database file and that writer blocks every other process, even
read-only ones. So the catalog file holds only views (no data), it is written briefly under a
file lock (by the catalog asset in pool `duckdb_catalog`, or by `swe-forge sql`), and queries
run on an in-memory connection with the same views: a query never waits for an ingest, and an
ingest never waits for a query.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import duckdb
import pyarrow as pa
from filelock import FileLock, Timeout

from swe_forge_dagster.candidates.datasets import ENRICHED_PRS_SCHEMA, PR_CANDIDATES_SCHEMA
from swe_forge_dagster.common.postgres import SharedStateError
from swe_forge_dagster.common.store import StorePath, register_with_duckdb
from swe_forge_dagster.gharchive.schema import PR_EVENTS_SCHEMA
from swe_forge_dagster.gym.episodes import EPISODES_SCHEMA
from swe_forge_dagster.harness.results import EVAL_RESULTS_SCHEMA
from swe_forge_dagster.llm.ledger import LLM_CALLS, LLM_CALLS_SCHEMA
from swe_forge_dagster.llm.ledger_postgres import llm_calls_table
from swe_forge_dagster.tasks.status import TASKS_SCHEMA
from swe_forge_dagster.triage.pipeline import CLASSIFIED_PRS_SCHEMA


class CatalogBusyError(RuntimeError):
    """Another process holds the catalog file open for writing."""


class QueryError(ValueError):
    """The user's SQL failed; the message is DuckDB's, plus the views that exist."""


class CatalogWarning(UserWarning):
    """A view was built from less than it should (the shared database could not be read)."""


Warn = Callable[[str], None]


def _warn_by_default(message: str) -> None:
    warnings.warn(message, CatalogWarning, stacklevel=3)


@dataclass(frozen=True)
class Dataset:
    """A lake dataset: its folder, hive partition columns, and the schema of its files."""

    name: str
    schema: pa.Schema
    hive_types: dict[str, str] = field(default_factory=dict)
    fmt: Literal["parquet", "jsonl"] = "parquet"

    @property
    def pattern(self) -> str:
        return "/".join(["*"] * len(self.hive_types) + [f"*.{self.fmt}"])

    def glob(self, lake_dir: StorePath) -> str:
        return str(lake_dir / self.name / self.pattern)

    def has_files(self, lake_dir: StorePath) -> bool:
        return any((lake_dir / self.name).glob(self.pattern))


# Public views (the README's SQL section): every dataset of the lake, one view each.
DATASETS: dict[str, Dataset] = {
    "gharchive_pr_events": Dataset(
        name="gharchive_pr_events",
        schema=PR_EVENTS_SCHEMA,
        hive_types={"dt": "DATE", "hour": "INTEGER"},
    ),
    "pr_candidates": Dataset(
        name="pr_candidates", schema=PR_CANDIDATES_SCHEMA, hive_types={"dt": "DATE", "hour": "INTEGER"}
    ),
    "enriched_prs": Dataset(
        name="enriched_prs", schema=ENRICHED_PRS_SCHEMA, hive_types={"dt": "DATE", "hour": "INTEGER"}
    ),
    "classified_prs": Dataset(
        name="classified_prs", schema=CLASSIFIED_PRS_SCHEMA, hive_types={"dt": "DATE", "hour": "INTEGER"}
    ),
    # One file per task partition, replaced after every stage: the latest state of each task.
    "tasks": Dataset(name="tasks", schema=TASKS_SCHEMA, hive_types={"task": "VARCHAR"}),
    # One file per (agent, task): the latest evaluation of each task by each agent.
    "eval_results": Dataset(
        name="eval_results", schema=EVAL_RESULTS_SCHEMA, hive_types={"agent_key": "VARCHAR", "task": "VARCHAR"}
    ),
    # Appended call by call (a JSONL ledger), so it is read as JSON with an explicit column list.
    "llm_calls": Dataset(name="llm_calls", schema=LLM_CALLS_SCHEMA, fmt="jsonl"),
    # One file per gym episode (`gym.episodes`): written when it opens, replaced when it ends.
    "episodes": Dataset(name="episodes", schema=EPISODES_SCHEMA, hive_types={"episode": "VARCHAR"}),
}


def _duckdb_types(schema: pa.Schema) -> list[tuple[str, str]]:
    """DuckDB's names for an Arrow schema's types, asked of DuckDB itself (no hand-kept mapping)."""
    con = duckdb.connect()
    try:
        con.register("empty_arrow", schema.empty_table())
        return [(row[0], row[1]) for row in con.sql("DESCRIBE SELECT * FROM empty_arrow").fetchall()]
    finally:
        con.close()


def _jsonl_select(dataset: Dataset, lake_dir: StorePath) -> str:
    """`SELECT` over a JSONL dataset's files (which exist), with its explicit column list."""
    glob = dataset.glob(lake_dir).replace("'", "''")
    columns = ", ".join(f"'{name}': '{kind}'" for name, kind in _duckdb_types(dataset.schema))
    first = dataset.schema.names[1]
    return (
        f"SELECT * FROM read_json('{glob}', format = 'newline_delimited', columns = {{{columns}}}, "
        f"ignore_errors = true) WHERE {first} IS NOT NULL"  # a torn last line reads as all-NULL
    )


def view_sql(dataset: Dataset, lake_dir: StorePath) -> str:
    """`CREATE OR REPLACE VIEW` over the dataset's files, or a typed empty view if none exist yet."""
    if dataset.has_files(lake_dir) and dataset.fmt == "jsonl":
        return f"CREATE OR REPLACE VIEW {dataset.name} AS {_jsonl_select(dataset, lake_dir)}"
    if dataset.has_files(lake_dir):
        glob = dataset.glob(lake_dir).replace("'", "''")
        types = ", ".join(f"'{k}': {v}" for k, v in dataset.hive_types.items())
        hive = f", hive_partitioning = true, hive_types = {{{types}}}" if dataset.hive_types else ""
        return (
            f"CREATE OR REPLACE VIEW {dataset.name} AS SELECT * FROM read_parquet('{glob}', union_by_name = true{hive})"
        )
    columns = [f"CAST(NULL AS {kind}) AS {name}" for name, kind in _duckdb_types(dataset.schema)]
    columns += [f"CAST(NULL AS {t}) AS {k}" for k, t in dataset.hive_types.items()]
    return f"CREATE OR REPLACE VIEW {dataset.name} AS SELECT {', '.join(columns)} WHERE false"


def create_views(
    con: duckdb.DuckDBPyConnection,
    lake_dir: StorePath,
    datasets: Iterable[Dataset],
    *,
    persistent: bool = False,
    calls_from_database: bool = True,
    warn: Warn | None = None,
) -> list[str]:
    """The views on `con`; an object-store lake's filesystem is registered with the connection first (a catalog
    file opened by another DuckDB client then needs the store's own credentials: README, SQL).
    `calls_from_database=False` leaves the shared database's rows out of `llm_calls` (a query that does not
    read the view need not wait for the database); a database that cannot be read is a warning, not an error."""
    register_with_duckdb(con, lake_dir)
    names = []
    for dataset in datasets:
        if dataset.name == LLM_CALLS:
            con.execute(_calls_view_sql(con, dataset, lake_dir, persistent, calls_from_database, warn))
        else:
            con.execute(view_sql(dataset, lake_dir))
        names.append(dataset.name)
    return names


def _calls_view_sql(
    con: duckdb.DuckDBPyConnection,
    dataset: Dataset,
    lake_dir: StorePath,
    persistent: bool,
    from_database: bool,
    warn: Warn | None,
) -> str:
    """The `llm_calls` view: the shared database's rows (SWE_FORGE_POSTGRES_URL, read now) and the JSONL files
    in the lake (every call recorded before the database was set, or by a machine without it), both when both
    exist. A catalog file keeps a copy of the rows (other DuckDB clients cannot see a registered Arrow table)."""
    calls = None
    if from_database:
        try:
            calls = llm_calls_table()
        except SharedStateError as exc:
            (warn or _warn_by_default)(f"llm_calls holds only the calls in the lake's files: {exc}")
    sources = []
    if calls is not None:
        con.register("llm_calls_rows", calls)
        sources.append("SELECT * FROM llm_calls_rows")
        if persistent:
            con.execute("CREATE OR REPLACE TABLE llm_calls_snapshot AS SELECT * FROM llm_calls_rows")
            sources[-1] = "SELECT * FROM llm_calls_snapshot"
    if dataset.has_files(lake_dir):
        sources.append(_jsonl_select(dataset, lake_dir))
    if not sources:
        return view_sql(dataset, lake_dir)  # typed and empty
    return f"CREATE OR REPLACE VIEW {LLM_CALLS} AS {' UNION ALL '.join(sources)}"


def refresh_catalog(
    catalog_path: Path, lake_dir: StorePath, lock_timeout: float = 30.0, warn: Warn | None = None
) -> list[str]:
    """(Re)create every view: built in a new file, then renamed over the catalog.

    DuckDB lets no process write a file that another process has open, even read-only. Building
    the views in a fresh file and renaming it into place means open sessions (a user's
    `duckdb -readonly`, a notebook) never block a refresh: they keep reading the old file
    until they reconnect. The file lock only orders concurrent refreshes.
    """
    catalog_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(catalog_path) + ".lock", timeout=lock_timeout):
            fresh = catalog_path.with_name(f".{catalog_path.name}.{os.getpid()}.new")
            fresh.unlink(missing_ok=True)
            try:
                con = duckdb.connect(str(fresh))
                try:
                    names = create_views(con, lake_dir, DATASETS.values(), persistent=True, warn=warn)
                finally:
                    con.close()
                os.replace(fresh, catalog_path)
            finally:
                fresh.unlink(missing_ok=True)
                Path(str(fresh) + ".wal").unlink(missing_ok=True)
            return names
    except Timeout as exc:
        raise CatalogBusyError(f"timed out after {lock_timeout}s waiting for another catalog refresh") from exc


def query(lake_dir: StorePath, sql: str, warn: Warn | None = None) -> pa.Table:
    """Run `sql` against fresh views of the lake on an in-memory connection. The shared database is read only
    when `sql` names `llm_calls`: counting PR events neither waits for it nor needs it up."""
    con = duckdb.connect()
    try:
        reads_calls = re.search(rf"\b{LLM_CALLS}\b", sql, re.IGNORECASE) is not None
        create_views(con, lake_dir, DATASETS.values(), calls_from_database=reads_calls, warn=warn)
        try:
            relation = con.sql(sql)
        except duckdb.Error as exc:
            raise QueryError(f"{exc}\n(views: {', '.join(DATASETS)})") from exc
        if relation is None:  # a statement with no result set
            return pa.table({})
        try:
            return relation.to_arrow_table()
        except duckdb.Error as exc:
            raise QueryError(f"{exc}\n(views: {', '.join(DATASETS)})") from exc
    finally:
        con.close()


def refresh_catalog_or_warning(catalog_path: Path, lake_dir: StorePath) -> str | None:
    """Refresh the views after a command's runs; another process holding the file, or a shared database that
    cannot be read (the `llm_calls` view then without its rows), is a warning (returned), not a failure:
    `swe-forge sql` builds fresh views anyway."""
    said: list[str] = []
    try:
        refresh_catalog(catalog_path, lake_dir, warn=said.append)
    except CatalogBusyError as exc:
        said.append(f"catalog not refreshed: {exc}")
    return "; ".join(said) or None
