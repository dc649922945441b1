"""State shared across machines on a real PostgreSQL (Debian's, on 127.0.0.1; `tests/support/postgres_server.py`).

Each store against the database, through the chooser the resources use (`wiring.shared_state`); several
processes writing the same keys at once; request slots held across processes, and freed when a holder is
killed. A "machine" is a process with its own SWE_FORGE_HOME: what one stored, another reads.
The whole pipeline on two homes is in tests/test_shared_state_pipeline.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import psycopg2
import pytest

from swe_forge_dagster.candidates.ledger import Ledger, LedgerEntry
from swe_forge_dagster.candidates.ledger_postgres import PostgresLedger
from swe_forge_dagster.common.dagster_names import GITHUB_API_POOL, LLM_API_POOL
from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.common.postgres import Database, SharedStateError
from swe_forge_dagster.common.postgres_url import PostgresUrlError
from swe_forge_dagster.common.slots import RequestSlots, Slots, SlotTimeoutError
from swe_forge_dagster.common.slots_postgres import PostgresSlots
from swe_forge_dagster.github.models import EnrichedPR, RepoInfo
from swe_forge_dagster.github.store import CachedResponse, GithubStore
from swe_forge_dagster.github.store_postgres import PostgresGithubStore
from swe_forge_dagster.llm.cache import AnswerCache
from swe_forge_dagster.llm.ledger import LLM_CALLS_SCHEMA, CallLedger, CallRecord
from swe_forge_dagster.llm.ledger_postgres import llm_calls_table
from swe_forge_dagster.wiring.catalog import query, refresh_catalog
from swe_forge_dagster.wiring.shared_state import (
    answer_cache,
    call_ledger,
    github_store,
    processed_ledger,
    request_slots,
)
from tests.support.postgres_server import PostgresServer

SETTING = "SWE_FORGE_POSTGRES_URL"


@pytest.fixture
def shared(postgres_db: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The setting on, naming a fresh database."""
    monkeypatch.setenv(SETTING, postgres_db)
    return postgres_db


def machine(tmp_path: Path, name: str) -> HomeLayout:
    return HomeLayout.of(tmp_path / name)


def enriched(repo: str, number: int, title: str = "Fix it") -> EnrichedPR:
    info = RepoInfo(full_name=repo, stars=50, language="Python", owner_type="Organization")
    return EnrichedPR(repo=repo, number=number, merged=True, title=title, repository=info)


def test_without_the_setting_every_store_stays_a_file_under_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SETTING, raising=False)
    home = machine(tmp_path, "a")
    assert isinstance(github_store(home), GithubStore) and isinstance(answer_cache(home), AnswerCache)
    assert isinstance(call_ledger(home), CallLedger) and isinstance(processed_ledger(home.processed_prs), Ledger)
    assert isinstance(request_slots(home, GITHUB_API_POOL, 3), Slots)
    assert llm_calls_table() is None


def test_the_github_store_is_shared_between_machines(shared: str, tmp_path: Path) -> None:
    a, b = github_store(machine(tmp_path, "a")), github_store(machine(tmp_path, "b"))
    assert isinstance(a, PostgresGithubStore) and not (tmp_path / "a").exists()  # nothing written locally
    body = bytes(range(256)) * 4  # binary-safe
    a.put_response("/repos/o/r", CachedResponse('W/"1"', 200, {"x-ratelimit-remaining": "9"}, body))
    assert b.get_response("/repos/o/r") == CachedResponse('W/"1"', 200, {"x-ratelimit-remaining": "9"}, body)
    b.put_response("/repos/o/r", CachedResponse('W/"2"', 200, {}, b"{}"))  # replaced, as SQLite's OR REPLACE
    assert a.get_response("/repos/o/r") == CachedResponse('W/"2"', 200, {}, b"{}")
    assert a.get_response("/repos/o/other") is None

    a.put_chunk([enriched("o/r", n) for n in (1, 2, 3)], {("o/r", 4): "not found", ("p/q", 1): "gone"})
    b.put_chunk([enriched("o/r", 2, "Retitled")], {})
    keys = [("o/r", n) for n in range(1, 6)] + [("p/q", 1), ("o/r", 1)]  # a repeated key is harmless
    found = b.get_enriched(keys)
    assert sorted(found) == [("o/r", 1), ("o/r", 2), ("o/r", 3)] and found[("o/r", 2)].title == "Retitled"
    assert found[("o/r", 1)] == enriched("o/r", 1).model_copy(update={"fetched_at": found[("o/r", 1)].fetched_at})
    assert a.get_missing(keys) == {("o/r", 4): "not found", ("p/q", 1): "gone"}
    assert a.get_enriched([]) == {} and a.get_missing([]) == {}


def test_the_answer_cache_and_the_call_ledger_are_shared(shared: str, tmp_path: Path) -> None:
    a_cache, b_cache = answer_cache(machine(tmp_path, "a")), answer_cache(machine(tmp_path, "b"))
    assert a_cache.get("k") is None
    a_cache.put("k", "triage", {"arguments": {"difficulty": "easy", "note": "ünïcode"}})
    assert b_cache.get("k") == {"arguments": {"difficulty": "easy", "note": "ünïcode"}}
    b_cache.put("k", "triage", {"arguments": {"difficulty": "hard"}})  # a re-asked answer replaces the old one
    assert a_cache.get("k") == {"arguments": {"difficulty": "hard"}}

    paid = CallRecord("triage", "m", "ok", "o/r#1", prompt_tokens=10, completion_tokens=5, cost=0.25, cost_source="p")
    call_ledger(machine(tmp_path, "a")).append(paid)
    call_ledger(machine(tmp_path, "b")).append(CallRecord("triage", "m", "cached", "o/r#1", cache_hit=True))
    table = llm_calls_table()
    assert table is not None and table.schema == LLM_CALLS_SCHEMA
    rows = table.to_pylist()
    assert [(r["outcome"], r["cache_hit"], r["cost"], r["prompt_tokens"]) for r in rows] == [
        ("ok", False, 0.25, 10),
        ("cached", True, None, 0),
    ]
    assert all(r["at"].tzinfo is not None for r in rows) and not (tmp_path / "a").exists()

    # `swe-forge sql` and the catalog file show the database's calls as the `llm_calls` view
    lake = machine(tmp_path, "c").lake
    sql = 'SELECT outcome, cost FROM llm_calls ORDER BY "at"'
    assert query(lake, sql).to_pylist() == [{"outcome": "ok", "cost": 0.25}, {"outcome": "cached", "cost": None}]
    catalog = tmp_path / "c" / "catalog.duckdb"
    refresh_catalog(catalog, lake)
    with duckdb.connect(str(catalog), read_only=True) as con:  # another DuckDB client, on the file alone
        assert con.sql(sql).fetchall() == [("ok", 0.25), ("cached", None)]


def test_the_ledger_holds_one_row_per_pr_and_still_reads_the_pr_file(shared: str, tmp_path: Path) -> None:
    pr_file = tmp_path / "processed_prs.jsonl"  # a machine's ledger from before it joined the database
    pr_file.write_text(json.dumps({"repo": "old/one", "pr": 1}) + "\n" + json.dumps({"repo": "o/r", "pr": 1}) + "\n")
    a, b = processed_ledger(pr_file), processed_ledger(tmp_path / "absent.jsonl")
    assert isinstance(a, PostgresLedger)
    assert (
        a.append(
            [
                LedgerEntry("o/r", 1, "rejected", "too small", "filter", "2015-01-01-00:00"),
                LedgerEntry("o/r", 2, "accepted", None, "filter", "2015-01-01-00:00"),
                LedgerEntry("o/r", 1, "accepted", None, "filter", "2015-01-01-01:00"),
            ]
        )
        == 2
    )
    b.append([LedgerEntry("o/r", 2, "rejected", "no tests", "filter", "2015-01-01-02:00")])
    seen = a.load()
    assert sorted(seen) == [("o/r", 1), ("o/r", 2), ("old/one", 1)]  # the file's lines, the rows over them
    assert (seen[("o/r", 1)].outcome, seen[("o/r", 1)].hour) == ("accepted", "2015-01-01-01:00")  # last wins
    assert (seen[("o/r", 2)].outcome, seen[("o/r", 2)].reason) == ("rejected", "no tests")
    assert seen[("old/one", 1)].outcome is None and ("old/one", 1) not in b.load()
    assert pr_file.read_text().count("\n") == 2  # read, never written
    assert a.append([]) == 0


WRITER = """
import random, sys, threading
from pathlib import Path
from swe_forge_dagster.candidates.ledger import LedgerEntry
from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.wiring.shared_state import answer_cache, call_ledger, github_store, processed_ledger
from swe_forge_dagster.github.models import EnrichedPR, RepoInfo
from swe_forge_dagster.llm.ledger import CallRecord

worker, home = sys.argv[1], HomeLayout.of(sys.argv[2])
ledger, cache, calls = processed_ledger(home.processed_prs), answer_cache(home), call_ledger(home)
store = github_store(home)
info = RepoInfo(full_name="o/r", stars=1)

def work(thread):
    rng = random.Random(f"{worker}/{thread}")
    for i in range(10):
        keys = rng.sample(range(40), 40)  # every writer touches every key, each in its own order
        ledger.append([LedgerEntry("o/r", n, "accepted", f"{worker}/{thread}", "filter", "h") for n in keys])
        store.put_chunk([EnrichedPR(repo="o/r", number=n, merged=True, repository=info) for n in keys[:20]],
                        {("o/r", n): f"{worker}/{thread}" for n in keys[20:]})
        cache.put(f"k{i}", "triage", {"by": f"{worker}/{thread}"})
        calls.append(CallRecord("triage", "m", "ok", f"{worker}/{thread}/{i}"))

threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
for t in threads: t.start()
for t in threads: t.join()
print("done")
"""


def test_concurrent_writers_on_several_machines_leave_one_row_per_key(shared: str, tmp_path: Path) -> None:
    env = {**os.environ, SETTING: shared}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(w), str(tmp_path / f"m{w}")],
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for w in range(3)
    ]
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0 and out.strip() == "done", err[-3000:]
    with contextlib.closing(psycopg2.connect(shared)) as connection, connection.cursor() as cursor:

        def rows(sql: str) -> list[tuple]:
            cursor.execute(sql)
            return cursor.fetchall()

        # counted in SQL, not through dicts (which would hide a key stored twice): one row per key, every key
        for table, key, total in (
            ("processed_prs", "repo, pr", 40),
            ("llm_answers", "key", 10),
            ("llm_calls", "item", 3 * 4 * 10),
        ):
            assert rows(f"SELECT {key} FROM swe_forge.{table} GROUP BY {key} HAVING count(*) > 1") == [], table
            assert rows(f"SELECT count(*) FROM swe_forge.{table}") == [(total,)], table
        for table in ("github_enriched_prs", "github_missing_prs"):  # a PR may be in both: writers disagree
            assert rows(f"SELECT repo, number FROM swe_forge.{table} GROUP BY 1, 2 HAVING count(*) > 1") == []
        either = " UNION ".join(f"SELECT repo, number FROM swe_forge.github_{t}_prs" for t in ("enriched", "missing"))
        assert rows(f"SELECT count(*) FROM ({either}) AS keys") == [(40,)]
    ledger = processed_ledger(tmp_path / "none.jsonl").load()
    assert sorted(ledger) == [("o/r", n) for n in range(40)]


def test_a_lost_connection_is_retried_and_a_dead_server_names_the_setting(
    shared: str, postgres_server: PostgresServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = answer_cache(machine(tmp_path, "a"))
    cache.put("k", "s", {"v": 1})
    with postgres_server.admin() as cursor:  # the server ends every session of the user (a restart, a cut)
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'swe'")
        assert cursor.fetchone()[0] >= 1
    assert cache.get("k") == {"v": 1}  # a new connection, transparently

    secret = "pw-not-to-be-shown"
    monkeypatch.setenv(SETTING, f"postgresql://swe:{secret}@127.0.0.1:9/nothing")  # a closed port
    with pytest.raises(SharedStateError) as caught:
        github_store(machine(tmp_path, "b"))
    assert SETTING in str(caught.value) and "127.0.0.1:9/nothing" in str(caught.value)
    assert secret not in str(caught.value)


@pytest.mark.parametrize(
    "url", ["postgresql://u:TOPSECRET@[127.0.0.1/db", "postgresql://u:pa%zzTOPSECRET@127.0.0.1/db"]
)
def test_a_malformed_url_is_refused_without_its_password(url: str, tmp_path: Path) -> None:
    """libpq's parse errors quote the whole URL: the CLI says which setting is wrong and never echoes it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SWE_FORGE_", "DAGSTER_"))}
    env.update({SETTING: url, "SWE_FORGE_HOME": str(tmp_path / "home"), "COLUMNS": "200", "NO_COLOR": "1"})
    result = subprocess.run(
        [sys.executable, "-m", "swe_forge_dagster.cli", "sql", "SELECT 1"],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr[-3000:]
    assert SETTING in result.stderr and "Traceback" not in result.stderr
    assert "TOPSECRET" not in result.stdout + result.stderr
    with pytest.raises(PostgresUrlError, match=SETTING) as caught:
        Database(url)
    assert "TOPSECRET" not in str(caught.value)


HOLDER = """
import sys, threading, time
from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.wiring.shared_state import request_slots
from swe_forge_dagster.common.slots import SlotTimeoutError

name, limit, hold, timeout = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
slots = request_slots(HomeLayout.of(sys.argv[1]), name, limit)
said = threading.Lock()  # print() writes the text and the newline apart: two threads would interleave

def say(line):
    with said:
        sys.stdout.write(line + "\\n")
        sys.stdout.flush()

def one():
    try:
        with slots.hold(timeout=timeout) as index:
            start = time.time()
            time.sleep(hold)
            say(f"held {index} {start} {time.time()}")  # both times inside the hold
    except SlotTimeoutError:
        say("timeout")

threads = [threading.Thread(target=one) for _ in range(int(sys.argv[6]))]
for t in threads: t.start()
for t in threads: t.join()
"""


def holder(
    tmp_path: Path, url: str, name: str, limit: int, hold: float, timeout: float, threads: int = 1
) -> subprocess.Popen[str]:
    command = [
        sys.executable,
        "-c",
        HOLDER,
        str(tmp_path / f"h{time.monotonic_ns()}"),
        name,
        str(limit),
        str(hold),
        str(timeout),
        str(threads),
    ]
    return subprocess.Popen(command, env={**os.environ, SETTING: url}, stdout=subprocess.PIPE, text=True)


def test_slots_hold_across_processes(shared: str, tmp_path: Path) -> None:
    mine = request_slots(machine(tmp_path, "a"), GITHUB_API_POOL, 2)
    assert isinstance(mine, PostgresSlots)
    with mine.hold() as first, mine.hold() as second:  # this process holds both slots
        assert {first, second} == {0, 1}
        other = holder(tmp_path, shared, GITHUB_API_POOL, 2, 0, 1.0)
        assert other.communicate(timeout=60)[0].strip() == "timeout"  # another machine gets none
        assert holder(tmp_path, shared, LLM_API_POOL, 2, 0, 1.0).communicate(timeout=60)[0].startswith("held")
    # Three processes of two threads, each wanting one of 3 slots for 1 s: never more than 3 inside, 3 at once.
    procs = [holder(tmp_path, shared, GITHUB_API_POOL, 3, 1.0, 120, threads=2) for _ in range(3)]
    spans = []
    for proc in procs:
        lines = proc.communicate(timeout=180)[0].splitlines()
        assert proc.returncode == 0 and len(lines) == 2 and all(line.startswith("held") for line in lines), lines
        spans += [(float(line.split()[2]), float(line.split()[3])) for line in lines]
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    inside = [sum(step for _, step in events[: i + 1]) for i in range(len(events))]
    assert max(inside) == 3
    assert not (tmp_path / "a" / "locks").exists()  # no flock file: the slots are the database's


def _taken(slots: RequestSlots) -> bool:
    try:
        with slots.hold(timeout=0):
            return False
    except SlotTimeoutError:
        return True


def test_a_killed_holder_frees_its_slot(shared: str, tmp_path: Path) -> None:
    victim = holder(tmp_path, shared, LLM_API_POOL, 1, 3600, 60)
    slots = request_slots(machine(tmp_path, "a"), LLM_API_POOL, 1)
    deadline = time.monotonic() + 60
    while not _taken(slots) and time.monotonic() < deadline:  # wait until the victim holds the slot
        time.sleep(0.1)
    with pytest.raises(SlotTimeoutError), slots.hold(timeout=0.5):
        pass
    victim.send_signal(signal.SIGKILL)
    victim.wait(30)
    started = time.monotonic()
    with slots.hold(timeout=30) as index:  # the server ended the dead process's session, and its lock
        assert index == 0
    assert time.monotonic() - started < 5


def test_a_slot_limit_below_one_is_refused(postgres_db: str) -> None:
    with pytest.raises(ValueError, match=GITHUB_API_POOL):
        PostgresSlots(Database(postgres_db), GITHUB_API_POOL, 0)


def test_ledger_rows_read_back_as_ledger_entries(postgres_db: str, tmp_path: Path) -> None:
    ledger = PostgresLedger(Database(postgres_db))
    ledger.append([LedgerEntry("o/r", 7, "accepted", None, "filter", "h", "2015-01-01T00:00:00+00:00")])
    assert ledger.load() == {
        ("o/r", 7): LedgerEntry("o/r", 7, "accepted", None, "filter", "h", "2015-01-01T00:00:00+00:00")
    }
