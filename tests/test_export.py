"""SWE-bench instances against real data: every shared SWE-bench instance file (and swe-forge's
own parquet export) must read and validate, and our JSONL and Parquet writers must round-trip the
instances unchanged, with exactly the SWE-bench columns and clear errors for bad input."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest

from swe_forge_dagster.export.swebench import (
    EXTRA_COLUMNS,
    SWEBENCH_COLUMNS,
    BadRecord,
    InstanceFormatError,
    SWEBenchInstance,
    read_instance_records,
    read_instances,
    to_record,
    validate_instance,
    write_jsonl,
    write_parquet,
)
from tests.support.records import make_instance
from tests.support.swebench_files import SWEBENCH_FILES

EXPECTED_COUNTS = {"lite-dev": 23, "swebench_lite_origin": 300, "swebench_multi": 50}
TEST_LISTS = ("FAIL_TO_PASS", "PASS_TO_PASS")


def _raw_records(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return json.loads(path.read_text())


def _assert_same_as_raw(raw: dict[str, Any], back: SWEBenchInstance, *, with_extras: bool = True) -> None:
    """Field by field: every original value is back, unchanged (string forms included)."""
    dumped = back.model_dump()
    for key, value in raw.items():
        if key in TEST_LISTS:
            expected = json.loads(value) if isinstance(value, str) else value
            assert dumped[key] == expected, key
        elif with_extras or key in SWEBENCH_COLUMNS + EXTRA_COLUMNS:
            assert key in dumped, key
            assert dumped[key] == value, key
        else:
            assert key not in dumped, key
    # Nothing invented: keys not in the original are null (our full-id lists: empty, i.e. unknown).
    for key, value in dumped.items():
        if key in ("fail_to_pass_full", "pass_to_pass_full") and key not in raw:
            assert value == [], key
        elif key not in raw and key not in TEST_LISTS:
            assert value is None, key


# --- SWE-bench instances ---


@pytest.mark.parametrize("rel", SWEBENCH_FILES)
def test_fixture_instances_round_trip(swebench_dir: Path, tmp_path: Path, rel: str) -> None:
    path = swebench_dir / rel
    raws = _raw_records(path)
    instances = read_instances(path)
    assert len(instances) == len(raws) > 0
    for stem, count in EXPECTED_COUNTS.items():
        if stem in rel:
            assert len(instances) == count

    jsonl = write_jsonl(instances, tmp_path / "out.jsonl")
    full = write_parquet(instances, tmp_path / "full.parquet", include_extra_fields=True)
    plain = write_parquet(instances, tmp_path / "plain.parquet")
    for raw, a, b, c in zip(raws, read_instances(jsonl), read_instances(full), read_instances(plain), strict=True):
        _assert_same_as_raw(raw, a)
        _assert_same_as_raw(raw, b)
        _assert_same_as_raw(raw, c, with_extras=False)

    # On disk F2P/P2P are JSON strings; where the original was a string, byte-identical to it.
    lines = [json.loads(line) for line in jsonl.read_text().splitlines()]
    columns = pq.read_table(plain).to_pydict()
    for i, raw in enumerate(raws):
        for key in TEST_LISTS:
            assert isinstance(lines[i][key], str) and isinstance(columns[key][i], str)
            if isinstance(raw[key], str):
                assert lines[i][key] == raw[key] == columns[key][i]
        assert lines[i]["created_at"] == raw["created_at"] == columns["created_at"][i]


def test_every_fixture_instance_validates(swebench_dir: Path) -> None:
    total = 0
    for rel in SWEBENCH_FILES:
        for inst in read_instances(swebench_dir / rel):
            assert validate_instance(inst) == [], inst.instance_id
            total += 1
    assert total == 389


def test_parquet_has_exactly_the_swebench_columns_and_extras(tmp_path: Path) -> None:
    path = write_parquet(
        [make_instance(), make_instance(instance_id="octo__widgets-43", quality_score=None)], tmp_path / "x.parquet"
    )
    expected = list(SWEBENCH_COLUMNS) + list(EXTRA_COLUMNS)
    for schema in (pq.read_schema(path), pads.dataset(path, format="parquet").schema):
        assert schema.names == expected
        for field in schema:
            want = pa.float64() if field.name in ("difficulty_score", "quality_score") else pa.string()
            assert field.type == want, field.name
    table = pq.read_table(path)
    assert json.loads(table.column("FAIL_TO_PASS")[0].as_py()) == ["tests/test_w.py::test_x"]
    assert table.column("quality_score").to_pylist() == [0.8, None]


def test_empty_parquet_keeps_schema(tmp_path: Path) -> None:
    path = write_parquet([], tmp_path / "empty.parquet")
    assert pq.read_schema(path).names == list(SWEBENCH_COLUMNS) + list(EXTRA_COLUMNS)
    assert read_instances(path) == []


def test_datasets_loads_our_parquet(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets", reason="`datasets` is not installed (not a project dependency)")
    path = write_parquet([make_instance()], tmp_path / "x.parquet")
    loaded = datasets.load_dataset("parquet", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf"))
    assert loaded.column_names == list(SWEBENCH_COLUMNS) + list(EXTRA_COLUMNS)
    row = loaded[0]
    assert json.loads(row["FAIL_TO_PASS"]) == ["tests/test_w.py::test_x"]
    assert row["instance_id"] == "octo__widgets-42"


def test_reads_swe_forge_parquet_export(seed_root: Path) -> None:
    rows = [inst for path in sorted(seed_root.glob("test-run/*/*.parquet")) for inst in read_instances(path)]
    assert len(rows) == 14
    assert all(isinstance(r.FAIL_TO_PASS, list) and r.language for r in rows)
    # swe-forge's ids keep the slash, unlike SWE-bench's owner__repo-N: our validator says so.
    assert any("is not" in p for p in validate_instance(rows[0]))


def test_validate_instance_reports_problems() -> None:
    assert validate_instance(make_instance()) == []
    bad = make_instance(
        instance_id="octo/widgets-42",
        base_commit="abc",
        patch="",
        test_patch=None,
        FAIL_TO_PASS=[],
        created_at="yesterday",
        difficulty="trivial",
        quality_score=1.5,
    )
    problems = "\n".join(validate_instance(bad))
    needles = "instance_id|base_commit|empty patch|empty test_patch|no FAIL_TO_PASS|created_at|difficulty|quality_score"
    for needle in needles.split("|"):
        assert needle in problems
    overlap = make_instance(PASS_TO_PASS=["tests/test_w.py::test_x"])
    assert any("both" in p for p in validate_instance(overlap))


def test_test_lists_accept_strings_and_lists() -> None:
    assert make_instance(FAIL_TO_PASS='["a", "b"]').FAIL_TO_PASS == ["a", "b"]
    assert make_instance(FAIL_TO_PASS=["a"]).FAIL_TO_PASS == ["a"]
    assert make_instance(PASS_TO_PASS="").PASS_TO_PASS == []
    with pytest.raises(ValueError, match="JSON list"):
        make_instance(FAIL_TO_PASS="not json")
    created = make_instance(created_at=dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC))
    assert created.created_at == "2024-01-02T03:04:05Z"


def test_read_instances_errors_name_the_place(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(to_record(make_instance())) + "\n{oops\n")
    with pytest.raises(InstanceFormatError, match=r"bad\.jsonl:2: invalid JSON"):
        read_instances(bad)
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps([{"instance_id": "a__b-1", "repo": "a/b"}]))
    with pytest.raises(InstanceFormatError, match=r"record 0 \(a__b-1\)"):
        read_instances(missing)
    with pytest.raises(InstanceFormatError, match="unknown instance file type"):
        read_instances(tmp_path / "x.csv")


def test_a_bad_record_is_reported_alone_in_every_format(tmp_path: Path) -> None:
    """One broken record costs that record only: the others read, the bad one says where and why."""
    good, other = to_record(make_instance()), to_record(make_instance(instance_id="octo__widgets-43"))
    wrong_types = {**other, "instance_id": "octo__widgets-44", "base_commit": 7, "FAIL_TO_PASS": "not json"}
    lines = [json.dumps(good), "{oops", json.dumps(["a list"]), json.dumps(wrong_types), json.dumps(other)]
    jsonl = tmp_path / "mixed.jsonl"
    jsonl.write_bytes(("\n".join(lines) + "\n").encode() + b"\xff\xfe\n")
    records = read_instance_records(jsonl)
    good_ids = [r.instance_id for r in records if isinstance(r, SWEBenchInstance)]
    assert good_ids == ["octo__widgets-42", "octo__widgets-43"]
    bad = {r.label: str(r) for r in records if isinstance(r, BadRecord)}
    assert list(bad) == ["mixed.jsonl:2", "mixed.jsonl:3", "octo__widgets-44", "mixed.jsonl:6"]
    assert "mixed.jsonl:2: invalid JSON" in bad["mixed.jsonl:2"] and "not a JSON object" in bad["mixed.jsonl:3"]
    assert "base_commit: Input should be a valid string" in bad["octo__widgets-44"]
    assert "FAIL_TO_PASS" in bad["octo__widgets-44"] and "not UTF-8" in bad["mixed.jsonl:6"]

    listing = tmp_path / "mixed.json"
    listing.write_text(json.dumps([good, 3, {"instance_id": "a__b-1"}]))
    kinds = [type(r).__name__ for r in read_instance_records(listing)]
    assert kinds == ["SWEBenchInstance", "BadRecord", "BadRecord"]
    assert "patch: Field required" in str(read_instance_records(listing)[2])

    table = pa.Table.from_pylist([good, {**other, "instance_id": None}])
    pq.write_table(table, tmp_path / "mixed.parquet")
    first, second = read_instance_records(tmp_path / "mixed.parquet")
    assert isinstance(first, SWEBenchInstance) and isinstance(second, BadRecord)
    assert second.label == "mixed.parquet[1]" and "instance_id" in second.problem

    (tmp_path / "broken.parquet").write_bytes(b"not parquet")
    with pytest.raises(InstanceFormatError, match="not a readable Parquet file"):
        read_instance_records(tmp_path / "broken.parquet")


def test_writers_are_atomic_and_leave_no_temp_files(tmp_path: Path) -> None:
    write_jsonl([make_instance()], tmp_path / "a.jsonl")
    write_parquet([make_instance()], tmp_path / "a.parquet")
    write_jsonl([make_instance(), make_instance(instance_id="octo__widgets-43")], tmp_path / "a.jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "a.parquet"]
    assert len(read_instances(tmp_path / "a.jsonl")) == 2
