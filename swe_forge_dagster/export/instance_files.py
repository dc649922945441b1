"""The raw records of a SWE-bench instance file (a JSON list, JSON Lines, Parquet), each on its own.

Why records are read one by one: instance files are written by many tools and edited by hand, and
one broken record (a line that is not JSON, a list item that is not an object, a Parquet cell
whose JSON does not decode) must cost that record only. So a record's problem is kept beside it
(`RawRecord.problem`) for the caller to report as that task's error, and `InstanceFormatError` is
raised only when the file as a whole cannot be read (missing, not UTF-8 JSON at all, not a
Parquet file, not a list): then there are no records to tell apart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

JSON_COLUMNS_METADATA_KEY = b"swe_forge_dagster.json_columns"
"""Parquet schema metadata: the extra columns written as JSON text (decoded again on reading)."""

INSTANCE_SUFFIXES = (".json", ".jsonl", ".ndjson", ".parquet")


class InstanceFormatError(ValueError):
    """A file or record that cannot be read as SWE-bench instances (the message names where)."""


@dataclass(frozen=True)
class RawRecord:
    """One record of a file: its data when it is a JSON object, else `problem` says what it is."""

    path: Path
    index: int  # 0-based among the file's records
    line: int | None = None  # 1-based line of a JSON Lines record
    data: dict[str, Any] | None = None
    problem: str | None = None

    @property
    def where(self) -> str:
        """Where the record is, for messages: `file.jsonl:3`, `file.json: record 2` or a task directory."""
        if self.path.is_dir():
            return str(self.path)
        return f"{self.path}:{self.line}" if self.line is not None else f"{self.path}: record {self.index}"

    @property
    def label(self) -> str:
        """A short name for a record that has no usable instance id: `file.jsonl:3`, `file.json[2]`, or a task
        repository's task directory name."""
        if self.path.is_dir():
            return self.path.name
        return f"{self.path.name}:{self.line}" if self.line is not None else f"{self.path.name}[{self.index}]"


def _record(path: Path, index: int, value: Any, line: int | None = None) -> RawRecord:
    if isinstance(value, dict):
        return RawRecord(path, index, line, data=value)
    return RawRecord(path, index, line, problem=f"a {type(value).__name__}, not a JSON object")


def _jsonl_records(path: Path, raw: bytes) -> list[RawRecord]:
    records: list[RawRecord] = []
    for lineno, chunk in enumerate(raw.split(b"\n"), start=1):
        if not chunk.strip():
            continue
        index = len(records)
        try:
            value = json.loads(chunk.decode("utf-8").removeprefix("\ufeff"))
        except UnicodeDecodeError as exc:
            records.append(RawRecord(path, index, lineno, problem=f"not UTF-8: {exc}"))
            continue
        except json.JSONDecodeError as exc:
            records.append(RawRecord(path, index, lineno, problem=f"invalid JSON: {exc}"))
            continue
        records.append(_record(path, index, value, lineno))
    return records


def _json_records(path: Path, raw: bytes) -> list[RawRecord]:
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise InstanceFormatError(f"{path}: not UTF-8: {exc}") from exc
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":  # a .json file that is really JSON Lines
            return _jsonl_records(path, raw)
        raise InstanceFormatError(f"{path}: invalid JSON: {exc}") from exc
    if isinstance(data, dict):
        return [_record(path, 0, data)]
    if not isinstance(data, list):
        raise InstanceFormatError(f"{path}: expected a JSON list of instances, got {type(data).__name__}")
    return [_record(path, index, value) for index, value in enumerate(data)]


def _parquet_records(path: Path) -> list[RawRecord]:
    try:
        table = pq.read_table(path)
        json_columns = json.loads((table.schema.metadata or {}).get(JSON_COLUMNS_METADATA_KEY, b"[]"))
        rows = table.to_pylist()
    except Exception as exc:  # pyarrow's errors (ArrowInvalid, OSError, ...): the file itself is unreadable
        raise InstanceFormatError(f"{path}: not a readable Parquet file: {exc}") from exc
    records: list[RawRecord] = []
    for index, row in enumerate(rows):
        try:
            for name in json_columns:
                value = row.pop(name, None)
                if value is not None:
                    row[name] = json.loads(value)
        except (TypeError, ValueError) as exc:
            records.append(RawRecord(path, index, problem=f"column {name!r} is not JSON: {exc}"))
            continue
        records.append(RawRecord(path, index, data=row))
    return records


TASK_REPO_CONFIG = "sweb.yaml"
TREE_FILE = "repo.tar"
"""A task directory's base tree (the build context of its Dockerfile): what our tools build from with no clone."""
TREE_KEY = "swe_forge_tree_archive"
"""The record key a task read from a task repository gets when its directory carries `TREE_FILE`: the file's path."""
_TASK_FILES = {"patch": "gold.patch", "test_patch": "test.patch", "problem_statement": "problem_statement.md"}
_OPTIONAL_FILES = {"hints_text": "hints.md", "eval_script": "eval.sh"}


def is_task_repo(path: str | Path) -> bool:
    """Whether `path` is a SWE-bench 5 task repository (`sweb.yaml` and `tasks/`, `swebench/task/repo.py`)."""
    return (Path(path) / TASK_REPO_CONFIG).is_file() and (Path(path) / "tasks").is_dir()


def _task_record(task_dir: Path, index: int) -> RawRecord:
    """One task directory as SWE-bench's `load_task` reads it: task.yaml, the patches and prose as files, tests.json."""
    try:
        data = yaml.safe_load((task_dir / "task.yaml").read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("task.yaml is not a mapping")
        for column, name in _TASK_FILES.items():
            with open(task_dir / name, encoding="utf-8", newline="") as handle:  # a patch keeps its CRLFs
                data[column] = handle.read()
        for column, name in _OPTIONAL_FILES.items():
            data[column] = (task_dir / name).read_text(encoding="utf-8") if (task_dir / name).is_file() else ""
        tests = json.loads((task_dir / "tests.json").read_text(encoding="utf-8"))
        data.update({key: tests[key] for key in ("FAIL_TO_PASS", "PASS_TO_PASS")})
        if (task_dir / TREE_FILE).is_file():
            data[TREE_KEY] = str((task_dir / TREE_FILE).resolve())
    except (OSError, ValueError, KeyError, TypeError, yaml.YAMLError) as exc:
        return RawRecord(task_dir, index, problem=f"{task_dir.name}: not a task SWE-bench can load: {exc}")
    return RawRecord(task_dir, index, data=data)


def _task_repo_records(root: Path) -> list[RawRecord]:
    tasks = sorted(d for d in (root / "tasks").iterdir() if (d / "task.yaml").is_file())
    if not tasks:
        raise InstanceFormatError(f"{root}: a task repository with no task (no tasks/<id>/task.yaml)")
    return [_task_record(task_dir, index) for index, task_dir in enumerate(tasks)]


def read_records(path: str | Path) -> list[RawRecord]:
    """Every record of a .json/.jsonl/.ndjson/.parquet file or of a SWE-bench 5 task repository (a directory);
    InstanceFormatError when the input is unusable."""
    path = Path(path)
    if path.is_dir() and is_task_repo(path):
        return _task_repo_records(path)
    suffix = path.suffix.lower()
    if suffix not in INSTANCE_SUFFIXES:
        raise InstanceFormatError(f"{path}: unknown instance file type {suffix!r} (want .json, .jsonl or .parquet)")
    if suffix == ".parquet":
        return _parquet_records(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InstanceFormatError(f"{path}: cannot read: {exc}") from exc
    return _json_records(path, raw) if suffix == ".json" else _jsonl_records(path, raw)
