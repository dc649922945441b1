"""`SWE_FORGE_HOME` by URI: the lake on a real S3-compatible store (SeaweedFS on 127.0.0.1), and clear errors.

The CLI runs as a user runs it (subprocesses, the real Dagster instance in the local dir, real Parquet on the
store, DuckDB over it); the counts of the real GH Archive fixture hours are checked against an independent
count.
"""

from __future__ import annotations

import functools
import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.common.store import StoreConfigError, polars_storage_options, read_parquet, store_path
from swe_forge_dagster.lake.writer import write_partition
from swe_forge_dagster.llm.ledger import CallRecord
from swe_forge_dagster.settings import Settings
from swe_forge_dagster.tasks.shared_files import SharedTaskFiles
from swe_forge_dagster.tasks.work import temp_file
from swe_forge_dagster.wiring.catalog import query
from swe_forge_dagster.wiring.shared_state import call_ledger
from tests.support.common import run_cli
from tests.support.gharchive_counts import independent_count
from tests.support.s3_server import ACCESS_KEY, SECRET_KEY, S3Server, s3_store

STORE_VARS = ("SWE_FORGE_", "DAGSTER_", "AWS_")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(STORE_VARS)}
    return {**env, "COLUMNS": "200", "NO_COLOR": "1", **extra}


cli = run_cli


# -- without a store ---------------------------------------------------------------------------------


def test_a_store_home_without_its_settings_names_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no .env with credentials here
    for name in ("SWE_FORGE_S3_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(StoreConfigError, match="SWE_FORGE_S3_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY"):
        store_path("s3://lake/x")
    monkeypatch.setenv("SWE_FORGE_S3_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "k")
    with pytest.raises(StoreConfigError, match=r"AWS_SECRET_ACCESS_KEY is not set"):
        store_path("s3://lake/x")
    with pytest.raises(StoreConfigError, match="unknown scheme 'gs'"):
        store_path("gs://lake/x")
    with pytest.raises(StoreConfigError, match="names no bucket"):
        store_path("s3:///x")
    assert store_path(f"file://{tmp_path}/h") == tmp_path / "h"
    local = HomeLayout.of(tmp_path / "h")
    assert local.root == local.shared == tmp_path / "h" and local.lake == tmp_path / "h" / "lake" and not local.remote


def test_a_local_home_is_any_path_without_a_scheme(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert store_path("backup:old") == tmp_path / "backup:old"  # a colon is not a scheme without "//"
    assert HomeLayout.of("backup:old").lake == tmp_path / "backup:old" / "lake"
    assert store_path("file://localhost/srv/h") == Path("/srv/h") and store_path("file:///srv/h%20x") == Path(
        "/srv/h x"
    )
    with pytest.raises(StoreConfigError, match=r"SWE_FORGE_HOME='file://data/home' names host 'data'"):
        store_path("file://data/home")  # not silently /home


def test_temporary_credentials_carry_their_session_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name, value in (
        ("SWE_FORGE_S3_ENDPOINT_URL", "http://127.0.0.1:9"),
        ("AWS_ACCESS_KEY_ID", "k"),
        ("AWS_SECRET_ACCESS_KEY", "s"),
        ("AWS_SESSION_TOKEN", "session-token"),
    ):
        monkeypatch.setenv(name, value)
    path = store_path("s3://lake/x")
    assert path.fs.token == "session-token"  # s3fs signs every request with it
    assert polars_storage_options(path)["aws_session_token"] == "session-token"
    monkeypatch.delenv("AWS_SESSION_TOKEN")
    assert "aws_session_token" not in polars_storage_options(store_path("s3://lake/y"))


def test_the_cli_exits_non_zero_naming_the_missing_setting(tmp_path: Path) -> None:
    result = cli("sql", "SELECT 1", env=clean_env(SWE_FORGE_HOME="s3://x"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "SWE_FORGE_S3_ENDPOINT_URL" in result.stderr and "AWS_ACCESS_KEY_ID" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "s3:").exists()


# -- on SeaweedFS ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with s3_store(tmp_path_factory.mktemp("seaweedfs")) as server:
        yield server


def test_partitions_on_the_store_are_replaced_whole_and_read_by_duckdb(
    s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in s3.env("s3://lake/unit", tmp_path / "local").items():
        monkeypatch.setenv(name, value)
    layout = HomeLayout.of("s3://lake/unit")
    assert layout.remote and str(layout.lake) == "s3://lake/unit/lake" and layout.root == tmp_path / "local"
    folder = layout.lake / "tasks" / "task=a__b-1"
    schema = pa.schema([("task_id", pa.string()), ("status", pa.string())])
    write_partition(pa.table({"task_id": ["a__b-1"], "status": ["building"]}), folder, schema)
    final = write_partition(pa.table({"task_id": ["a__b-1"], "status": ["accepted"]}), folder, schema)
    assert read_parquet(final).to_pylist() == [{"task_id": "a__b-1", "status": "accepted"}]
    assert s3.filesystem().ls("lake/unit/lake/tasks/task=a__b-1") == ["lake/unit/lake/tasks/task=a__b-1/part-0.parquet"]
    rows = query(layout.lake, "SELECT task_id, status, task FROM tasks").to_pylist()
    assert rows[0]["status"] == "accepted" and rows[0]["task"] == "a__b-1" and len(rows) == 1
    assert not (tmp_path / "local" / "lake").exists()  # nothing of the lake on local disk


def test_ingest_to_the_store_then_sql_gives_the_hours_pr_events(
    s3: S3Server, gharchive_2015: Path, tmp_path: Path
) -> None:
    """Issue 15: the fixture hours ingested into an S3 lake, `swe-forge sql` over it: 315 and 293."""
    env = clean_env(
        **s3.env("s3://lake/ingest", tmp_path / "local"),
        SWE_FORGE_START_DATE="2015-01-01",
        SWE_FORGE_GHARCHIVE_URL=f"file://{gharchive_2015}",
    )
    ingest = cli("ingest", "2015-01-01-00:00", "2015-01-01-01:00", env=env, cwd=tmp_path)
    assert ingest.returncode == 0, ingest.stdout[-2000:] + ingest.stderr[-3000:]
    expected = [sum(independent_count(gharchive_2015 / f"2015-01-01-{h}.json.gz")[1].values()) for h in (0, 1)]
    assert expected == [315, 293]
    sql = "SELECT hour, count(*) AS n FROM gharchive_pr_events GROUP BY hour ORDER BY hour"
    result = cli("sql", sql, "--format", "json", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert json.loads(result.stdout) == [{"hour": 0, "n": 315}, {"hour": 1, "n": 293}]
    keys = s3.filesystem().find("lake/ingest/lake/gharchive_pr_events")
    assert keys == [f"lake/ingest/lake/gharchive_pr_events/dt=2015-01-01/hour={h}/part-0.parquet" for h in ("00", "01")]
    local = tmp_path / "local"
    assert (local / "dagster" / "dagster.yaml").is_file() and not (local / "lake").exists()

    again = cli("ingest", "2015-01-01-00:00", env=env, cwd=tmp_path)  # a re-run replaces, never duplicates
    assert again.returncode == 0, again.stderr[-3000:]
    result = cli("sql", "SELECT count(*) AS n FROM gharchive_pr_events", "--format", "json", env=env, cwd=tmp_path)
    assert json.loads(result.stdout) == [{"n": 315 + 293}]


def two_machines(s3: S3Server, home: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[SharedTaskFiles]:
    """Machines "a" and "b": one store home, each its own local dir under tmp_path."""
    for name, value in s3.env(home, tmp_path / "a").items():
        monkeypatch.setenv(name, value)
    return [SharedTaskFiles.of(HomeLayout.of(home, tmp_path / m), tmp_path / m / "tasks") for m in "ab"]


def test_task_folders_follow_the_store_between_machines(
    s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two local dirs on one store home: what one machine's stage wrote, the other pulls, deletions included."""
    machine_a, machine_b = two_machines(s3, "s3://lake/machines", tmp_path, monkeypatch)
    work_a = tmp_path / "a" / "work" / "o__r-1"
    work_a.mkdir(parents=True)
    (work_a / "patch.json").write_text('{"base_commit": "abc"}')
    (work_a / "environment.json").write_text("{}")
    fd, leftover = temp_file(work_a, "environment.json")  # a writer's temporary file (a crash) never travels
    os.write(fd, b"half")
    os.close(fd)
    (tmp_path / "a" / "tasks" / "o__r-1").mkdir(parents=True)
    (tmp_path / "a" / "tasks" / "o__r-1" / "workspace.yaml").write_text("id: o__r-1\n")
    assert machine_a.push("o__r-1") == 3 and machine_a.push("o__r-1") == 0  # unchanged: nothing sent again

    exported = machine_b.export_dir("o__r-1", "/elsewhere/tasks/o__r-1")  # the row names machine a's path
    assert exported == tmp_path / "b" / "tasks" / "o__r-1" and (exported / "workspace.yaml").is_file()
    assert machine_b.export_dir("o__r-9", "/elsewhere/tasks/o__r-9") is None
    assert machine_b.pull("o__r-1") == 2
    work_b = tmp_path / "b" / "work" / "o__r-1"
    assert sorted(p.name for p in work_b.iterdir()) == ["environment.json", "patch.json"]

    (work_b / "environment.json").unlink()  # machine b re-runs the environment stage: later results dropped
    (work_b / "patch.json").write_text('{"base_commit": "def"}')
    assert machine_b.push("o__r-1") == 2
    assert machine_a.pull("o__r-1") == 2
    assert sorted(p.name for p in work_a.iterdir()) == [Path(leftover).name, "patch.json"]
    assert (work_a / "patch.json").read_text() == '{"base_commit": "def"}'
    assert machine_a.pull("o__r-2") == 0 and not (tmp_path / "a" / "work" / "o__r-2").exists()


def test_llm_calls_on_the_store_are_one_object_each_and_read_as_the_view(
    s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in s3.env("s3://lake/calls", tmp_path / "local").items():
        monkeypatch.setenv(name, value)
    layout = HomeLayout.of("s3://lake/calls")
    ledger = call_ledger(layout)
    ledger.append(CallRecord("triage", "m", "ok", "o/r#1", prompt_tokens=10, cost=0.5, cost_source="provider"))
    ledger.append(CallRecord("triage", "m", "cached", "o/r#1", cache_hit=True))
    keys = s3.filesystem().find("lake/calls/lake/llm_calls")
    assert len(keys) == 2 and all(k.endswith(".jsonl") for k in keys)
    rows = query(layout.lake, 'SELECT outcome, cost, cache_hit FROM llm_calls ORDER BY "at"').to_pylist()
    assert rows == [
        {"outcome": "ok", "cost": 0.5, "cache_hit": False},
        {"outcome": "cached", "cost": None, "cache_hit": True},
    ]


def test_a_file_sent_in_parts_is_not_sent_again(s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """s3fs uploads from 100 MiB in parts, whose ETag is not the content's MD5: the MD5 travels as metadata."""
    machine_a, machine_b = two_machines(s3, "s3://lake/big", tmp_path, monkeypatch)
    work_a = tmp_path / "a" / "work" / "o__r-1"
    work_a.mkdir(parents=True)
    data = os.urandom(101 * 2**20)  # measured: ~5 s for the four transfers below on SeaweedFS
    (work_a / "transcript.bin").write_bytes(data)
    assert machine_a.push("o__r-1") == 1
    assert "-" in s3.filesystem().info("lake/big/work/o__r-1/transcript.bin")["ETag"]  # a multipart upload
    assert machine_a.push("o__r-1") == 0
    assert machine_b.pull("o__r-1") == 1 and machine_b.pull("o__r-1") == 0
    assert (tmp_path / "b" / "work" / "o__r-1" / "transcript.bin").read_bytes() == data


def test_a_task_exported_again_elsewhere_is_pulled_over_the_local_copy(
    s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    machines = two_machines(s3, "s3://lake/reexport", tmp_path, monkeypatch)
    for machine, version in zip(machines, ("1", "2"), strict=True):  # A exports, then B exports again
        (machine.output_dir / "o__r-1").mkdir(parents=True)
        (machine.output_dir / "o__r-1" / "workspace.yaml").write_text(f"version: {version}\n")
        machine.push("o__r-1")
    recorded = str(tmp_path / "a" / "tasks" / "o__r-1")  # A's row still names A's (stale) directory
    exported = machines[0].export_dir("o__r-1", recorded)
    assert exported is not None and (exported / "workspace.yaml").read_text() == "version: 2\n"


def test_a_pull_swaps_the_folder_in_whole(s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A reader on this machine holding the folder open sees one stage's files, never some of each."""
    writer, reader = two_machines(s3, "s3://lake/swap", tmp_path, monkeypatch)
    work_w, work_r = tmp_path / "a" / "work" / "o__r-1", tmp_path / "b" / "work" / "o__r-1"
    work_w.mkdir(parents=True)
    names = [f"stage{i:02}.json" for i in range(20)]

    def publish(version: int) -> None:
        for name in names:
            (work_w / name).write_text(str(version))
        writer.push("o__r-1")

    publish(0)
    reader.pull("o__r-1")
    seen: list[set[str]] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            folder = os.open(work_r, os.O_RDONLY | os.O_DIRECTORY)
            try:
                opener = functools.partial(os.open, dir_fd=folder)
                seen.append({open(name, opener=opener).read() for name in names})  # noqa: SIM115
            except FileNotFoundError:
                pass  # the old folder removed while read: read again (never a mix)
            finally:
                os.close(folder)

    thread = threading.Thread(target=read)
    thread.start()
    try:
        for version in range(1, 6):
            publish(version)
            assert reader.pull("o__r-1") == len(names)
    finally:
        done.set()
        thread.join()
    assert len(seen) > 10 and all(len(versions) == 1 for versions in seen), [v for v in seen if len(v) > 1][:3]
    assert sorted(p.name for p in work_r.parent.iterdir()) == ["o__r-1"]  # no staging folder left behind


def test_store_settings_given_in_code_reach_the_resources(
    s3: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env here
    for name in ("SWE_FORGE_S3_ENDPOINT_URL", "SWE_FORGE_S3_REGION", "SWE_FORGE_LOCAL_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)  # secrets: by name only, never in the settings
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    settings = Settings(
        SWE_FORGE_HOME="s3://lake/coded",
        SWE_FORGE_S3_ENDPOINT_URL=s3.endpoint,
        SWE_FORGE_LOCAL_DIR=str(tmp_path / "local"),
    )
    assert settings.layout.remote and settings.home_abs == tmp_path / "local"
    resource_side = HomeLayout.of(settings.home_ref)  # what every resource does with its `home` config
    assert resource_side.root == tmp_path / "local" and str(resource_side.lake) == "s3://lake/coded/lake"
    assert SECRET_KEY not in settings.home_ref
    schema = pa.schema([("task_id", pa.string())])
    write_partition(pa.table({"task_id": ["a__b-1"]}), resource_side.lake / "tasks" / "task=a__b-1", schema)
    assert query(settings.lake_dir, "SELECT task_id FROM tasks").to_pylist() == [{"task_id": "a__b-1"}]
