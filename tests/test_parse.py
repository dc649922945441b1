"""Parsing real and damaged GH Archive hours: both payload formats, every kind of bad input."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from swe_forge_dagster.demo.worlds.gharchive_world import write_hour
from swe_forge_dagster.gharchive.parse import CorruptArchiveError, TooManyBadLinesError, parse_hour
from swe_forge_dagster.gharchive.schema import PR_EVENTS_SCHEMA
from tests.support.gharchive_counts import independent_count


def gz(path: Path, lines: list[bytes]) -> Path:
    with gzip.open(path, "wb") as handle:
        for line in lines:
            handle.write(line)
    return path


@pytest.mark.parametrize("name", ["2015-01-01-0.json.gz", "2015-01-01-1.json.gz"])
def test_real_hour_matches_independent_count(gharchive_2015: Path, tmp_path: Path, name: str) -> None:
    source = gharchive_2015 / name
    parsed = parse_hour(source, tmp_path)
    events, actions, merged = independent_count(source)
    table = parsed.table
    assert parsed.events_read == events
    assert parsed.bad_lines == 0
    assert table.num_rows == sum(actions.values())
    assert Counter(table.column("action").to_pylist()) == actions
    assert sum(v is True for v in table.column("merged").to_pylist()) == merged
    assert set(table.column("payload_format").to_pylist()) == {"classic"}
    assert table.schema.names == PR_EVENTS_SCHEMA.names
    # classic payloads carry what downstream needs
    row = table.slice(0, 1).to_pylist()[0]
    assert row["repo_name"] and "/" in row["repo_name"]
    assert row["title"] and row["base_sha"] and row["head_sha"] and row["number"] > 0
    assert row["created_at"].tzinfo is not None


def test_provenance_counts_of_hour_zero(gharchive_2015: Path, tmp_path: Path) -> None:
    """PROVENANCE.md of the fixture: 7,702 events, 315 PR events (163 opened, 151 closed, 1 reopened), 126 merged."""
    table = parse_hour(gharchive_2015 / "2015-01-01-0.json.gz", tmp_path).table
    assert table.num_rows == 315
    assert Counter(table.column("action").to_pylist()) == {"opened": 163, "closed": 151, "reopened": 1}
    assert sum(v is True for v in table.column("merged").to_pylist()) == 126


def _fixture_event(shared_fixtures: Path, name: str) -> bytes:
    path = shared_fixtures / "gharchive" / "trimmed-payload-2025" / "octocrab" / name
    if not path.is_file():
        pytest.skip(f"missing {path}")
    return json.dumps(json.loads(path.read_text()), separators=(",", ":")).encode() + b"\n"


def test_trimmed_and_classic_payloads(shared_fixtures: Path, tmp_path: Path) -> None:
    trimmed = _fixture_event(shared_fixtures, "pull_request_event.trimmed_at_730b70f.json")
    classic = _fixture_event(shared_fixtures, "pull_request_event.before_730b70f.json")
    push = _fixture_event(shared_fixtures, "push_event.trimmed_at_730b70f.json")
    path = gz(tmp_path / "2025-10-08-3.json.gz", [trimmed, classic, push])
    parsed = parse_hour(path, tmp_path / "work")
    rows = {r["payload_format"]: r for r in parsed.table.to_pylist()}
    assert parsed.events_read == 3 and parsed.table.num_rows == 2
    new, old = rows["trimmed"], rows["classic"]
    assert new["title"] is None and new["body"] is None and new["merged"] is None and new["author_login"] is None
    assert new["number"] == 8 and new["head_sha"] == "184cb4b61e26de7cccc385d37da25cd8bd817d27"
    assert new["base_ref"] == "master" and new["repo_name"] == "wayofthepie/test-events"
    assert old["title"] and old["author_login"] and old["merged"] is not None


def test_trimmed_merged_action_reads_as_merged(tmp_path: Path) -> None:
    event = {
        "id": "1",
        "type": "PullRequestEvent",
        "created_at": "2025-11-01T00:00:00Z",
        "actor": {"id": 1, "login": "a"},
        "repo": {"id": 2, "name": "o/r"},
        "payload": {"action": "merged", "number": 5, "pull_request": {"id": 9, "number": 5}},
    }
    path = gz(tmp_path / "h.json.gz", [json.dumps(event).encode() + b"\n"])
    (row,) = parse_hour(path, tmp_path / "w").table.to_pylist()
    assert row["merged"] is True and row["payload_format"] == "trimmed"


def test_generated_hours_match_their_truth(tmp_path: Path) -> None:
    for when in (dt.datetime(2024, 1, 1, tzinfo=dt.UTC), dt.datetime(2025, 10, 8, tzinfo=dt.UTC)):
        path, truth = write_hour(tmp_path / "m", when, events=3000, seed=7)
        parsed = parse_hour(path, tmp_path / "w")
        assert parsed.events_read == truth.events
        assert Counter(parsed.table.column("action").to_pylist()) == truth.pr_by_action
        # IssueCommentEvents mention "PullRequestEvent" in their text: they must not be counted
        assert truth.by_type["IssueCommentEvent"] > 0


def test_truncated_gzip_is_a_clear_error(gharchive_2015: Path, tmp_path: Path) -> None:
    data = (gharchive_2015 / "2015-01-01-1.json.gz").read_bytes()
    path = tmp_path / "2015-01-01-1.json.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptArchiveError, match="truncated"):
        parse_hour(path, tmp_path / "w")


def test_corrupt_gzip_is_a_clear_error(gharchive_2015: Path, tmp_path: Path) -> None:
    data = bytearray((gharchive_2015 / "2015-01-01-1.json.gz").read_bytes())
    for offset in range(200_000, 200_400):
        data[offset] ^= 0xFF
    path = tmp_path / "bad.json.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptArchiveError, match=r"not a valid gzip|truncated"):
        parse_hour(path, tmp_path / "w")


@pytest.mark.parametrize(("content", "match"), [(b"", "empty"), (b"<html>502 Bad Gateway</html>", "not a valid gzip")])
def test_not_gzip_at_all(tmp_path: Path, content: bytes, match: str) -> None:
    path = tmp_path / "x.json.gz"
    path.write_bytes(content)
    with pytest.raises(CorruptArchiveError, match=match):
        parse_hour(path, tmp_path / "w")


def test_empty_hour_gives_empty_typed_table(tmp_path: Path) -> None:
    path = gz(tmp_path / "empty.json.gz", [])
    parsed = parse_hour(path, tmp_path / "w")
    assert parsed.events_read == 0 and parsed.table.num_rows == 0
    assert parsed.table.schema.names == PR_EVENTS_SCHEMA.names


def test_non_json_lines_are_skipped_and_counted(tmp_path: Path) -> None:
    mirror = tmp_path / "m"
    when = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
    junk = [
        b"this is not json",
        b'{"id":"1","type":"PullRequestEvent","payload": {broken',  # unframed and a PR candidate
        b'{"id":"2","type":"PullRequestEvent", oops}',  # framed, but not JSON
        b"[1, 2, 3]",
    ]
    path, truth = write_hour(mirror, when, events=2000, seed=1, extra_lines=junk)
    parsed = parse_hour(path, tmp_path / "w", max_bad_line_fraction=0.01)
    assert parsed.bad_lines == 4
    assert parsed.events_read == truth.events
    assert parsed.table.num_rows == sum(truth.pr_by_action.values())
    assert any("not json" in s for s in parsed.bad_line_samples)


def test_too_many_bad_lines_fail_the_hour(tmp_path: Path) -> None:
    lines = [b'{"id":"%d","type":"PushEvent","payload":{}}\n' % i for i in range(50)] + [b"garbage\n"] * 5
    path = gz(tmp_path / "h.json.gz", lines)
    with pytest.raises(TooManyBadLinesError, match="5 of 55 lines"):
        parse_hour(path, tmp_path / "w", max_bad_line_fraction=0.05)


def test_crlf_blank_lines_and_missing_final_newline(tmp_path: Path) -> None:
    pr = (
        b'{"id":"7","type":"PullRequestEvent","created_at":"2024-01-01T00:00:00Z",'
        b'"payload":{"action":"opened","number":3}}'
    )
    path = gz(tmp_path / "h.json.gz", [b'{"id":"1","type":"PushEvent"}\r\n', b"\n", pr])
    parsed = parse_hour(path, tmp_path / "w")
    assert (parsed.events_read, parsed.bad_lines, parsed.table.num_rows) == (2, 0, 1)
    assert parsed.table.column("number").to_pylist() == [3]


def test_no_work_files_left_behind(gharchive_2015: Path, tmp_path: Path) -> None:
    work = tmp_path / "w"
    parse_hour(gharchive_2015 / "2015-01-01-0.json.gz", work)
    assert list(work.iterdir()) == []
