"""The lake writer (atomic, idempotent, disk-full safe) and the DuckDB catalog (views, locking, any registry)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from swe_forge_dagster.gharchive.schema import PR_EVENTS_SCHEMA
from swe_forge_dagster.lake import catalog
from swe_forge_dagster.lake.dataset import Dataset, datasets_by_name
from swe_forge_dagster.lake.writer import LakeWriteError, remove_stale_temp_files, write_partition
from swe_forge_dagster.wiring.catalog import DATASETS, QueryError, query, refresh_catalog


def events(n: int, start: int = 0, body: str | list[str] = "") -> pa.Table:
    rows = {name: [None] * n for name in PR_EVENTS_SCHEMA.names}
    rows["event_id"] = list(range(start, start + n))
    rows["repo_name"] = [f"o/r{i % 7}" for i in range(n)]
    rows["action"] = ["closed"] * n
    rows["body"] = body if isinstance(body, list) else [body] * n
    rows["payload_format"] = ["classic"] * n
    return pa.table(rows).cast(PR_EVENTS_SCHEMA)


def hour_dir(lake: Path, day: str, hour: int) -> Path:
    return lake / "gharchive_pr_events" / f"dt={day}" / f"hour={hour:02d}"


def test_rewrite_replaces_never_duplicates(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    write_partition(events(10), hour_dir(lake, "2015-01-01", 0))
    write_partition(events(5), hour_dir(lake, "2015-01-01", 1))
    write_partition(events(12), hour_dir(lake, "2015-01-01", 0))
    result = query(lake, "SELECT hour, count(*) AS n FROM gharchive_pr_events GROUP BY hour ORDER BY hour")
    assert result.to_pylist() == [{"hour": 0, "n": 12}, {"hour": 1, "n": 5}]
    assert sorted(p.name for p in hour_dir(lake, "2015-01-01", 0).iterdir()) == ["part-0.parquet"]


def test_hive_columns_are_typed(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    write_partition(events(1), hour_dir(lake, "2015-01-01", 3))
    row = query(lake, "SELECT typeof(dt) AS t_dt, typeof(hour) AS t_hour FROM gharchive_pr_events").to_pylist()[0]
    assert row == {"t_dt": "DATE", "t_hour": "INTEGER"}


def test_views_exist_on_an_empty_lake(tmp_path: Path) -> None:
    result = query(tmp_path / "nothing", "SELECT count(*) AS n FROM gharchive_pr_events")
    assert result.to_pylist() == [{"n": 0}]
    columns = query(tmp_path / "nothing", "DESCRIBE gharchive_pr_events").column("column_name").to_pylist()
    assert columns == [*PR_EVENTS_SCHEMA.names, "dt", "hour"]


def test_bad_sql_is_a_query_error_naming_the_views(tmp_path: Path) -> None:
    with pytest.raises(QueryError, match="gharchive_pr_events"):
        query(tmp_path, "SELECT nope FROM missing_table")


def test_stale_temp_files_are_removed_and_never_queried(tmp_path: Path) -> None:
    folder = hour_dir(tmp_path / "lake", "2015-01-01", 0)
    write_partition(events(3), folder)
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = folder / f".part-0.parquet.{finished.stdout.strip()}-abc.tmp"  # its writer has exited
    live = folder / f".part-0.parquet.{os.getpid()}-def.tmp"  # a writer that is still running
    dead.write_bytes(b"half a file")
    live.write_bytes(b"being written")
    assert query(tmp_path / "lake", "SELECT count(*) AS n FROM gharchive_pr_events").to_pylist() == [{"n": 3}]
    assert remove_stale_temp_files(folder) == 1
    assert not dead.exists() and live.exists()


def test_catalog_file_serves_other_duckdb_clients(tmp_path: Path) -> None:
    lake, catalog = tmp_path / "lake", tmp_path / "catalog.duckdb"
    assert refresh_catalog(catalog, lake) == list(DATASETS)
    write_partition(events(4), hour_dir(lake, "2015-01-01", 0))
    refresh_catalog(catalog, lake)  # switches the view from the empty definition to the glob
    write_partition(events(6), hour_dir(lake, "2015-01-01", 1))
    con = duckdb.connect(str(catalog), read_only=True)
    try:  # the view globs at query time, so later hours appear without a refresh
        assert con.sql("SELECT count(*) FROM gharchive_pr_events").fetchall() == [(10,)]
    finally:
        con.close()


@pytest.mark.parametrize("read_only", [True, False])
def test_open_sessions_never_block_a_refresh(tmp_path: Path, read_only: bool) -> None:
    """Review finding: DuckDB locks a file against writers even for read-only sessions elsewhere."""
    lake, catalog = tmp_path / "lake", tmp_path / "catalog.duckdb"
    refresh_catalog(catalog, lake)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import duckdb,time; c=duckdb.connect({str(catalog)!r}, read_only={read_only}); "
            "print('ok', flush=True); time.sleep(30)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ok"
        write_partition(events(4), hour_dir(lake, "2015-01-01", 0))
        assert refresh_catalog(catalog, lake) == list(DATASETS)
        con = duckdb.connect(str(catalog), read_only=True)
        try:  # a new session sees the refreshed views
            assert con.sql("SELECT count(*) FROM gharchive_pr_events").fetchall() == [(4,)]
        finally:
            con.close()
    finally:
        holder.kill()
        holder.wait()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".catalog")) == []


def test_queries_work_while_partitions_are_rewritten(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    for hour in range(4):
        write_partition(events(1000, body="x" * 200), hour_dir(lake, "2015-01-01", hour))
    stop = threading.Event()
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            while not stop.is_set():
                for hour in range(4):
                    write_partition(events(1000, body="y" * 200), hour_dir(lake, "2015-01-01", hour))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        for _ in range(30):
            assert query(lake, "SELECT count(*) AS n FROM gharchive_pr_events").to_pylist() == [{"n": 4000}]
    finally:
        stop.set()
        thread.join()
    assert not errors


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 256 KiB filesystem (tmpfs), so a write really runs out of space."""
    mount_point = tmp_path / "tiny"
    mount_point.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tiny tmpfs to fill the disk needs root")
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mount_point)], capture_output=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount tmpfs here: {result.stderr.decode().strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)


def test_disk_full_keeps_the_old_partition_and_leaves_no_half_file(tiny_disk: Path) -> None:
    lake = tiny_disk / "lake"
    folder = hour_dir(lake, "2015-01-01", 0)
    write_partition(events(20), folder)
    incompressible = [os.urandom(100_000).hex() for _ in range(3)]  # ~300 KB even compressed
    with pytest.raises(LakeWriteError, match="disk full"):
        write_partition(events(3, body=incompressible), folder)
    assert sorted(p.name for p in folder.iterdir()) == ["part-0.parquet"]
    assert query(lake, "SELECT count(*) AS n FROM gharchive_pr_events").to_pylist() == [{"n": 20}]


def test_csv_output_encodes_nested_columns_as_json(tmp_path: Path) -> None:
    """Review finding: list/struct columns (enriched_prs.file_paths) must not crash --format csv."""
    import io

    from rich.console import Console

    from swe_forge_dagster.lake.render import render

    table = pa.table({"n": [1], "paths": [["a.py", "b.py"]], "issue": [{"number": 3, "title": "x"}]})
    console = Console(file=io.StringIO())
    render(table, "csv", console)
    assert console.file.getvalue().splitlines() == [
        "n,paths,issue",
        '1,"[""a.py"", ""b.py""]","{""number"": 3, ""title"": ""x""}"',
    ]


def test_the_catalog_reads_any_registry_of_datasets(tmp_path: Path) -> None:
    """`lake.catalog` knows no dataset of its own: it shows what it is given, a database's rows unioned in."""
    schema = pa.schema([("n", pa.int64())])
    rows = pa.table({"n": [7]}, schema=schema)
    shared_schema = pa.schema([("id", pa.string()), ("n", pa.int64())])
    registry = datasets_by_name(
        [
            Dataset(name="things", schema=schema, hive_types={"k": "VARCHAR"}),
            Dataset(name="kept", schema=schema),
            Dataset(
                name="shared", schema=shared_schema, fmt="jsonl", shared_rows=lambda: pa.table({"id": ["x"], "n": [3]})
            ),
        ]
    )
    lake = tmp_path / "lake"
    write_partition(rows, registry["things"].partition_dir(lake, k="a"))
    assert registry["things"].partition_dir(lake, k="a") == lake / "things" / "k=a"
    with pytest.raises(ValueError, match="partitioned by k"):
        registry["things"].partition_dir(lake, day="x")
    with pytest.raises(ValueError, match="declared twice"):
        datasets_by_name([registry["kept"], registry["kept"]])
    result = catalog.query(lake, "SELECT k, n FROM things UNION ALL SELECT 'db', n FROM shared", registry)
    assert sorted(result.to_pylist(), key=str) == [{"k": "a", "n": 7}, {"k": "db", "n": 3}]
    assert catalog.query(lake, "SELECT count(*) AS c FROM kept", registry).to_pylist() == [{"c": 0}]
    with pytest.raises(QueryError, match="views: things, kept, shared"):
        catalog.query(lake, "SELECT * FROM gharchive_pr_events", registry)


def test_the_project_declares_every_public_view() -> None:
    assert list(DATASETS) == [
        "gharchive_pr_events",
        "pr_candidates",
        "enriched_prs",
        "classified_prs",
        "tasks",
        "eval_results",
        "llm_calls",
        "episodes",
    ]
    assert [name for name, dataset in DATASETS.items() if dataset.shared_rows is not None] == ["llm_calls"]
