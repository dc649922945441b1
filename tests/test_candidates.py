"""Pre-filter rules on both payload formats, the processed-PR ledger, the local filter, path rules."""

from __future__ import annotations

import datetime as dt
import json
import multiprocessing
from pathlib import Path

import polars as pl
import pytest

from swe_forge_dagster.candidates.filters import FilterConfig, filter_reasons
from swe_forge_dagster.candidates.ledger import Ledger, LedgerEntry
from swe_forge_dagster.candidates.rules import CandidateRules, select_candidates
from swe_forge_dagster.common.paths import is_docs_path
from swe_forge_dagster.gharchive.parse import parse_hour
from swe_forge_dagster.gharchive.schema import PR_EVENTS_SCHEMA
from swe_forge_dagster.github.models import ChangedFile, EnrichedPR, LinkedIssue, RepoInfo
from swe_forge_dagster.languages.registry import is_test_path

HOUR = "2015-01-01-00:00"


def events(*rows: dict) -> pl.DataFrame:
    base = dict.fromkeys(PR_EVENTS_SCHEMA.names)
    full = [
        {
            **base,
            "event_id": i,
            "created_at": dt.datetime(2015, 1, 1, tzinfo=dt.UTC),
            "org_login": "org",
            "action": "closed",
            "payload_format": "classic",
            **row,
        }
        for i, row in enumerate(rows)
    ]
    frame = pl.from_arrow(pl.DataFrame(full).to_arrow().cast(PR_EVENTS_SCHEMA))
    assert isinstance(frame, pl.DataFrame)
    return frame


def outcome(frame: pl.DataFrame) -> dict[tuple[str, int], str | None]:
    return {(r["repo_name"], r["number"]): r["reason"] for r in frame.iter_rows(named=True)}


def test_classic_payload_rules() -> None:
    frame = events(
        {"repo_name": "org/a", "number": 1, "merged": True, "author_login": "ada"},
        {"repo_name": "org/a", "number": 2, "merged": False, "author_login": "ada"},
        {"repo_name": "org/a", "number": 3, "merged": True, "author_login": "dependabot[bot]"},
        {"repo_name": "org/a", "number": 4, "merged": True, "author_login": "renovate"},
        {"repo_name": "user/b", "number": 5, "merged": True, "author_login": "ada", "org_login": None},
        {"repo_name": "org/a", "number": 6, "merged": True, "author_login": "ada", "action": "opened"},
        {"repo_name": "org/a", "number": 1, "merged": True, "author_login": "ada"},  # duplicate
    )
    result = select_candidates(frame, {}, HOUR)
    assert outcome(result) == {
        ("org/a", 1): None,
        ("org/a", 2): "not merged",
        ("org/a", 3): "bot author (dependabot[bot])",
        ("org/a", 4): "bot author (renovate)",
        ("user/b", 5): "not an org repo",
    }
    assert result.filter(pl.col("status") == "candidate").height == 1
    lifted = select_candidates(frame, {}, HOUR, CandidateRules(org_only=False))
    assert outcome(lifted)[("user/b", 5)] is None


def test_trimmed_payload_closed_prs_stay_candidates_until_enrichment() -> None:
    frame = events(
        {"repo_name": "org/a", "number": 1, "merged": None, "payload_format": "trimmed", "actor_login": "ada"},
        {
            "repo_name": "org/a",
            "number": 2,
            "merged": None,
            "payload_format": "trimmed",
            "actor_login": "dependabot[bot]",
        },
        {"repo_name": "org/a", "number": 3, "merged": None, "payload_format": "trimmed", "actor_login": "bors[bot]"},
    )
    assert outcome(select_candidates(frame, {}, HOUR)) == {
        ("org/a", 1): None,
        ("org/a", 2): "bot actor (dependabot[bot])",
        ("org/a", 3): None,  # a merge bot closing a human's PR is not a bot author
    }


def test_already_processed_prs_are_skipped_but_not_on_a_rerun_of_their_hour() -> None:
    frame = events(
        {"repo_name": "org/a", "number": 1, "merged": True}, {"repo_name": "org/a", "number": 2, "merged": True}
    )
    ledger = {
        ("org/a", 1): LedgerEntry("org/a", 1, "rejected", "stars", "filter", hour="2014-12-31-23:00"),
        ("org/a", 2): LedgerEntry("org/a", 2, "accepted", None, "filter", hour=HOUR),
    }
    result = outcome(select_candidates(frame, ledger, HOUR))
    assert result[("org/a", 1)] == "already processed in hour 2014-12-31-23:00 (rejected)"
    assert result[("org/a", 2)] is None
    # A new home sharing the ledger (the hour is not in its lake) skips the hour's own PRs too.
    fresh = outcome(select_candidates(frame, ledger, HOUR, hour_in_lake=False))
    assert fresh[("org/a", 2)] == f"already processed in hour {HOUR} (accepted)"


def test_real_hour_candidates(gharchive_2015: Path, tmp_path: Path) -> None:
    frame = pl.from_arrow(parse_hour(gharchive_2015 / "2015-01-01-0.json.gz", tmp_path).table)
    assert isinstance(frame, pl.DataFrame)
    result = select_candidates(frame, {}, HOUR)
    closed = frame.filter(pl.col("action") == "closed")
    assert closed.height == 151  # the fixture's PROVENANCE.md (../shared/fixtures/gharchive)
    assert result.height == closed.select("repo_name", "number").n_unique()  # one row per PR
    last = closed.unique(subset=["repo_name", "number"], keep="last")
    assert result.filter(pl.col("reason") == "not merged").height == last.filter(~pl.col("merged")).height
    candidates = result.filter(pl.col("status") == "candidate")
    assert 0 < candidates.height <= 126
    assert candidates["org_login"].null_count() == 0


def test_ledger_roundtrip_reads_seed_lines_and_skips_torn_ones(tmp_path: Path) -> None:
    path = tmp_path / "processed.jsonl"
    path.write_text('{"repo": "o/r", "pr": 7}\n')  # a line as the seed writes it
    ledger = Ledger(path)
    ledger.append([LedgerEntry("o/r", 8, "rejected", "stars 3 below minimum 20", "filter", HOUR)])
    with open(path, "a") as handle:
        handle.write('{"repo": "o/r", "pr": 9, "outc')  # torn by a crash
    loaded = ledger.load()
    assert set(loaded) == {("o/r", 7), ("o/r", 8)}
    assert loaded[("o/r", 8)].reason == "stars 3 below minimum 20"
    assert json.loads(path.read_text().splitlines()[1])["at"]


def _append_many(path: str, worker: int) -> None:
    Ledger(Path(path)).append(LedgerEntry("o/r", worker * 1000 + i, "accepted") for i in range(200))


def test_concurrent_appends_from_processes_interleave_whole_lines(tmp_path: Path) -> None:
    path = tmp_path / "processed.jsonl"
    context = multiprocessing.get_context("spawn")
    procs = [context.Process(target=_append_many, args=(str(path), w)) for w in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join()
    lines = path.read_text().splitlines()
    assert len(lines) == 800 and all(json.loads(line)["repo"] == "o/r" for line in lines)


def pr(**changes: object) -> EnrichedPR:
    base: dict = {
        "repo": "org/a",
        "number": 1,
        "merged": True,
        "title": "Fix rounding",
        "body": "Rounding of negative numbers was off by one; this fixes it and adds a test.",
        "author_login": "ada",
        "additions": 20,
        "deletions": 3,
        "changed_files": 2,
        "files": (ChangedFile(path="src/calc.py", additions=10), ChangedFile(path="tests/test_calc.py", additions=10)),
        "repository": RepoInfo(full_name="org/a", stars=120, language="Python", owner_type="Organization"),
    }
    base.update(changes)
    return EnrichedPR(**base)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, []),
        ({"merged": False}, ["not merged"]),
        ({"author_is_bot": True, "author_login": "x[bot]"}, ["bot author (x[bot])"]),
        ({"repository": RepoInfo(full_name="org/a", stars=5, language="Python")}, ["stars 5 below minimum 20"]),
        (
            {"repository": RepoInfo(full_name="org/a", stars=50, language="Haskell")},
            ["language Haskell not in python, javascript, typescript, go, rust, java"],
        ),
        ({"repository": RepoInfo(full_name="org/a", stars=50, language=None)}, []),  # unknown language passes
        (
            {"repository": RepoInfo(full_name="org/a", stars=50, language="Go", owner_type="User")},
            ["not an org repo (owner is a user)"],
        ),
        ({"changed_files": 51}, ["files changed 51 above maximum 50"]),
        ({"additions": 2}, ["added lines 2 below minimum 3"]),
        ({"additions": 1001}, ["added lines 1001 above maximum 1000"]),
        ({"files": (ChangedFile(path="README.md"), ChangedFile(path="docs/guide.rst"))}, ["docs/config-only change"]),
        ({"files": (ChangedFile(path="tests/test_x.py"), ChangedFile(path="pkg/x_test.go"))}, ["tests-only change"]),
        ({"body": "fix"}, ["description under 30 chars and no linked issue"]),
        ({"body": "fix", "closing_issues": (LinkedIssue(number=3, title="Crash on empty input"),)}, []),
    ],
)
def test_local_filter_rules(changes: dict, expected: list[str]) -> None:
    assert filter_reasons(pr(**changes), FilterConfig()) == expected


def test_filter_reports_every_failing_rule() -> None:
    reasons = filter_reasons(pr(merged=False, additions=2, body=""), FilterConfig())
    assert reasons == ["not merged", "added lines 2 below minimum 3", "description under 30 chars and no linked issue"]


@pytest.mark.parametrize(
    ("path", "test", "docs"),
    [
        ("tests/test_calc.py", True, False),
        ("src/calc.py", False, False),
        ("pkg/calc_test.go", True, False),
        ("web/__tests__/App.tsx", True, False),
        ("web/src/App.spec.ts", True, False),
        ("src/test/java/org/AppTest.java", True, False),
        ("crates/x/tests/it.rs", True, False),
        ("conftest.py", True, False),
        ("README.md", False, True),
        ("docs/index.rst", False, True),
        (".github/workflows/ci.yml", False, True),
        ("pyproject.toml", False, True),
        ("LICENSE", False, True),
        ("src/contest.py", False, False),
        ("latest/main.go", False, False),
        ("app/tests.py", True, False),
        ("pkg/util_tests.py", True, False),
        ("web/e2e/login.ts", True, False),
        ("web/src/__mocks__/api.ts", True, False),
        ("web/cypress/login.cy.ts", True, False),
        ("src/main/java/org/DbIT.java", True, False),
        ("src/FooSpec.kt", True, False),
        ("Lib.Tests/LibTests.cs", True, False),
        ("spec/models/user_spec.rb", True, False),
        ("testing/python/fixtures.py", True, False),
        ("api/spec/openapi.yaml", False, True),
    ],
)
def test_path_rules(path: str, test: bool, docs: bool) -> None:
    assert (is_test_path(path), is_docs_path(path)) == (test, docs)


def test_a_torn_line_does_not_swallow_the_next_record(tmp_path: Path) -> None:
    """Review finding: after a crash mid-line, the next append must start on a fresh line."""
    path = tmp_path / "processed.jsonl"
    ledger = Ledger(path)
    ledger.append([LedgerEntry("o/r", 1, "accepted")])
    with open(path, "a") as handle:
        handle.write('{"repo": "o/r", "pr": 2, "outc')  # torn by a crash
    ledger.append([LedgerEntry("o/r", 3, "rejected", "stars")])
    assert set(ledger.load()) == {("o/r", 1), ("o/r", 3)}


def test_a_language_allowed_but_without_a_test_runner_is_rejected_before_any_llm_call() -> None:
    config = FilterConfig(languages=["python", "haskell", "c++"])
    haskell = pr(repository=RepoInfo(full_name="org/a", stars=50, language="Haskell", owner_type="Organization"))
    (reason,) = filter_reasons(haskell, config)
    assert reason.startswith("no test runner for Haskell") and "c++" in reason
    cpp = pr(repository=RepoInfo(full_name="org/a", stars=50, language="C++", owner_type="Organization"))
    assert filter_reasons(cpp, config) == []
