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
from collections.abc import Callable, Container, Iterable
from pathlib import Path

import duckdb
import pyarrow as pa
from filelock import FileLock, Timeout

from swe_forge_dagster.common.postgres import SharedStateError
from swe_forge_dagster.common.store import StorePath, register_with_duckdb
from swe_forge_dagster.lake.dataset import Dataset, Datasets


class CatalogBusyError(RuntimeError):
    """Another process holds the catalog file open for writing."""


class QueryError(ValueError):
    """The user's SQL failed; the message is DuckDB's, plus the views that exist."""


class CatalogWarning(UserWarning):
    """A view was built from less than it should (the shared database could not be read)."""


Warn = Callable[[str], None]


def _warn_by_default(message: str) -> None:
    warnings.warn(message, CatalogWarning, stacklevel=3)


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
    shared_rows_of: Container[str] | None = None,
    warn: Warn | None = None,
) -> list[str]:
    """The views on `con`; an object-store lake's filesystem is registered with the connection first (a catalog
    file opened by another DuckDB client then needs the store's own credentials: README, SQL).
    `shared_rows_of` names the datasets whose rows in the shared database are read (None: all that have some);
    the others' views leave those rows out (a query that does not read the view need not wait for the
    database). A database that cannot be read is a warning, not an error."""
    register_with_duckdb(con, lake_dir)
    names = []
    for dataset in datasets:
        if dataset.shared_rows is not None:
            from_database = shared_rows_of is None or dataset.name in shared_rows_of
            con.execute(_shared_view_sql(con, dataset, lake_dir, persistent, from_database, warn))
        else:
            con.execute(view_sql(dataset, lake_dir))
        names.append(dataset.name)
    return names


def _shared_view_sql(
    con: duckdb.DuckDBPyConnection,
    dataset: Dataset,
    lake_dir: StorePath,
    persistent: bool,
    from_database: bool,
    warn: Warn | None,
) -> str:
    """The view of a dataset kept partly in the shared database (`llm_calls`): the database's rows
    (SWE_FORGE_POSTGRES_URL, read now) and the JSONL files in the lake (every call recorded before the
    database was set, or by a machine without it), both when both exist. A catalog file keeps a copy of the
    rows (other DuckDB clients cannot see a registered Arrow table)."""
    assert dataset.shared_rows is not None
    rows = None
    if from_database:
        try:
            rows = dataset.shared_rows()
        except SharedStateError as exc:
            (warn or _warn_by_default)(f"{dataset.name} holds only the rows in the lake's files: {exc}")
    sources = []
    if rows is not None:
        con.register(f"{dataset.name}_rows", rows)
        sources.append(f"SELECT * FROM {dataset.name}_rows")
        if persistent:
            con.execute(f"CREATE OR REPLACE TABLE {dataset.name}_snapshot AS SELECT * FROM {dataset.name}_rows")
            sources[-1] = f"SELECT * FROM {dataset.name}_snapshot"
    if dataset.has_files(lake_dir):
        sources.append(_jsonl_select(dataset, lake_dir))
    if not sources:
        return view_sql(dataset, lake_dir)  # typed and empty
    return f"CREATE OR REPLACE VIEW {dataset.name} AS {' UNION ALL '.join(sources)}"


def refresh_catalog(
    catalog_path: Path, lake_dir: StorePath, datasets: Datasets, lock_timeout: float = 30.0, warn: Warn | None = None
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
                    names = create_views(con, lake_dir, datasets.values(), persistent=True, warn=warn)
                finally:
                    con.close()
                os.replace(fresh, catalog_path)
            finally:
                fresh.unlink(missing_ok=True)
                Path(str(fresh) + ".wal").unlink(missing_ok=True)
            return names
    except Timeout as exc:
        raise CatalogBusyError(f"timed out after {lock_timeout}s waiting for another catalog refresh") from exc


def query(lake_dir: StorePath, sql: str, datasets: Datasets, warn: Warn | None = None) -> pa.Table:
    """Run `sql` against fresh views of the lake on an in-memory connection. The shared database is read only
    for the views `sql` names (`llm_calls`): counting PR events neither waits for it nor needs it up."""
    con = duckdb.connect()
    try:
        named = {name for name in datasets if re.search(rf"\b{name}\b", sql, re.IGNORECASE)}
        create_views(con, lake_dir, datasets.values(), shared_rows_of=named, warn=warn)
        try:
            relation = con.sql(sql)
        except duckdb.Error as exc:
            raise QueryError(f"{exc}\n(views: {', '.join(datasets)})") from exc
        if relation is None:  # a statement with no result set
            return pa.table({})
        try:
            return relation.to_arrow_table()
        except duckdb.Error as exc:
            raise QueryError(f"{exc}\n(views: {', '.join(datasets)})") from exc
    finally:
        con.close()


def refresh_catalog_or_warning(catalog_path: Path, lake_dir: StorePath, datasets: Datasets) -> str | None:
    """Refresh the views after a command's runs; another process holding the file, or a shared database that
    cannot be read (the `llm_calls` view then without its rows), is a warning (returned), not a failure:
    `swe-forge sql` builds fresh views anyway."""
    said: list[str] = []
    try:
        refresh_catalog(catalog_path, lake_dir, datasets, warn=said.append)
    except CatalogBusyError as exc:
        said.append(f"catalog not refreshed: {exc}")
    return "; ".join(said) or None
