"""The types of an exported dataset's fields, as the field's own loaders read them (issue 24, item 4).

SWE-bench's `load_swebench_dataset` reads a `.jsonl` with `json` and a `.parquet` with `datasets`; the Hugging Face
`datasets` JSON loader infers column types with pyarrow. Our JSONL and Parquet files of the same instances must
give every SWE-bench column the same type through each (strings: `version` even for a repository without release
tags, `created_at` not inferred as a timestamp), and the values must be equal.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_forge_dagster.export.swebench import (
    SWEBENCH_COLUMNS,
    SWEBenchInstance,
    dataset_timestamp,
    write_jsonl,
    write_parquet,
)
from swe_forge_dagster.tasks.build import swebench_version


def exported(number: int, release: str | None) -> SWEBenchInstance:
    return SWEBenchInstance(
        instance_id=f"acme__calc-{number}",
        repo="acme/calc",
        base_commit="a" * 40,
        patch="diff --git a/x b/x\n",
        test_patch="diff --git a/t b/t\n",
        problem_statement="It rounds wrong.",
        hints_text="",
        created_at=dataset_timestamp("2021-10-13T11:35:29Z"),
        version=swebench_version(release),
        FAIL_TO_PASS=["tests/test_x.py::test_a"],
        PASS_TO_PASS=[],
        environment_setup_commit="a" * 40,
    )


def test_created_at_keeps_its_instant_and_gains_milliseconds() -> None:
    assert dataset_timestamp("2021-10-13T11:35:29Z") == "2021-10-13T11:35:29.000Z"
    assert dataset_timestamp("2021-10-13T13:35:29.5+02:00") == "2021-10-13T11:35:29.500Z"
    assert dataset_timestamp("yesterday") == "yesterday" and dataset_timestamp(None) is None


def test_jsonl_and_parquet_load_with_the_same_string_types(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets", reason="`datasets` not installed")
    utils = pytest.importorskip("swebench.harness.utils", reason="`swebench` not installed")
    instances = [exported(1, None), exported(2, "3.0.0rc3")]
    jsonl, parquet = write_jsonl(instances, tmp_path / "d.jsonl"), write_parquet(instances, tmp_path / "d.parquet")
    from_json = datasets.load_dataset("json", data_files=str(jsonl), split="train")
    from_parquet = datasets.load_dataset("parquet", data_files=str(parquet), split="train")
    for column in SWEBENCH_COLUMNS:
        assert from_json.features[column] == from_parquet.features[column] == datasets.Value("string"), column
    assert from_json["version"] == from_parquet["version"] == ["0.0", "3.0"]
    assert from_json["created_at"] == from_parquet["created_at"] == ["2021-10-13T11:35:29.000Z"] * 2
    by_swebench = [utils.load_swebench_dataset(str(path), "train") for path in (jsonl, parquet)]
    for rows in by_swebench:
        assert [(row["version"], row["created_at"]) for row in rows] == [
            ("0.0", "2021-10-13T11:35:29.000Z"),
            ("3.0", "2021-10-13T11:35:29.000Z"),
        ]
