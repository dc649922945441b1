"""SWE-bench's inputs and outputs for the harness: predictions files in, its report form out.

A predictions file is what SWE-bench users have after running a model: records of `instance_id`,
`model_name_or_path` and `model_patch`, as a JSON list, a JSON object keyed by instance id, or JSON lines. Each
record is checked on its own: one that is not JSON, not UTF-8, lacks a key or repeats an instance id is reported
with its line (or index) and reason, and every other record is still evaluated. `swe-forge harness --predictions`
applies each patch as an agent's diff (protected paths dropped, canaries planted), never as a trusted gold patch.

The report is the one `swebench report` writes (`swebench.harness.reporting.make_run_report`, schema version 2):
resolved, unresolved, error, empty-patch, completed, incomplete and submitted ids and their counts, named
`<model_name_or_path with / as __>.<run_id>.json`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swe_forge_dagster.harness.models import Status, TaskResult

REPORT_SCHEMA_VERSION = 2
KEYS = ("instance_id", "model_name_or_path", "model_patch")


@dataclass(frozen=True)
class Prediction:
    instance_id: str
    model: str
    patch: str  # "" for an empty (or null) model_patch


@dataclass(frozen=True)
class BadPrediction:
    """A record that cannot be evaluated: where it is (`file:line` or `file[index]`), its id if it has one, why."""

    where: str
    instance_id: str | None
    problem: str


class PredictionsError(ValueError):
    """The file itself is unusable (missing, not JSON at all, not a list/object of records)."""


def load_predictions(path: str | Path) -> tuple[list[Prediction], list[BadPrediction]]:
    """The good records of a predictions file, in order, and a `BadPrediction` per bad one."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PredictionsError(f"--predictions {path}: {exc.strerror or exc}") from exc
    stripped = data.lstrip()
    suffix = path.suffix.lower()
    sniffed_lines = suffix != ".json" and not stripped.startswith((b"[", b"{"))
    if suffix == ".jsonl" or sniffed_lines or _many_objects(stripped):
        records = list(_json_lines(path, data))
    else:
        records = _json_document(path, data)
    good: list[Prediction] = []
    bad: list[BadPrediction] = []
    seen: set[str] = set()
    for where, record in records:
        if isinstance(record, BadPrediction):
            bad.append(record)
            continue
        checked = _check(where, record)
        if isinstance(checked, BadPrediction):
            bad.append(checked)
        elif checked.instance_id in seen:
            bad.append(BadPrediction(where, checked.instance_id, "a second prediction for this instance (first kept)"))
        else:
            seen.add(checked.instance_id)
            good.append(checked)
    return good, bad


def _many_objects(data: bytes) -> bool:
    """JSON lines that start with `{`: more than one non-empty line, each a whole object."""
    lines = [line for line in data.splitlines() if line.strip()]
    return len(lines) > 1 and all(line.strip().startswith(b"{") and line.strip().endswith(b"}") for line in lines)


def _json_lines(path: Path, data: bytes) -> Iterable[tuple[str, Any]]:
    for number, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        where = f"{path.name}:{number}"
        try:
            yield where, json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            yield where, BadPrediction(where, None, f"not UTF-8 (byte {exc.start})")
        except ValueError as exc:
            yield where, BadPrediction(where, None, f"not JSON: {exc}")


def _json_document(path: Path, data: bytes) -> list[tuple[str, Any]]:
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise PredictionsError(
            f"--predictions {path}: not UTF-8 (byte {exc.start}); JSON lines are read per line"
        ) from exc
    except ValueError as exc:
        raise PredictionsError(f"--predictions {path}: not JSON: {exc}") from exc
    if isinstance(document, list):
        return [(f"{path.name}[{index}]", record) for index, record in enumerate(document)]
    if isinstance(document, dict) and all(isinstance(value, dict) for value in document.values()):
        if "instance_id" in document and not isinstance(document["instance_id"], dict):
            return [(path.name, document)]  # a single record
        return [(f"{path.name}[{key!r}]", {"instance_id": key, **value}) for key, value in document.items()]
    if isinstance(document, dict):
        return [(path.name, document)]
    raise PredictionsError(
        f"--predictions {path}: want a list of records, an object keyed by instance id, or JSON lines"
    )


def _check(where: str, record: Any) -> Prediction | BadPrediction:
    if not isinstance(record, dict):
        return BadPrediction(where, None, f"not an object but {type(record).__name__}")
    instance_id = record.get("instance_id")
    if not isinstance(instance_id, str) or not instance_id.strip():
        return BadPrediction(where, None, "no instance_id (a non-empty string)")
    missing = [key for key in KEYS if key not in record]
    if missing:
        return BadPrediction(where, instance_id, f"missing {', '.join(missing)}")
    model, patch = record["model_name_or_path"], record["model_patch"]
    if not isinstance(model, str) or not model.strip():
        return BadPrediction(where, instance_id, "model_name_or_path is not a non-empty string")
    if patch is not None and not isinstance(patch, str):
        return BadPrediction(where, instance_id, f"model_patch is {type(patch).__name__}, not a string")
    return Prediction(instance_id, model, patch or "")


def swebench_report(
    predictions: Sequence[Prediction], task_ids: Sequence[str], results: Sequence[TaskResult]
) -> dict[str, Any]:
    """`swebench report`'s JSON for a run: every task of the input (`task_ids`) is in the dataset, the predictions
    are what was submitted, and each result sorts its task as SWE-bench sorts a run's instance logs."""
    submitted = {p.instance_id: p for p in predictions}
    by_id: Mapping[str, TaskResult] = {r.task_id: r for r in results}
    ids: dict[str, set[str]] = {key: set() for key in ("completed", "incomplete", "empty_patch", "resolved")}
    ids |= {"unresolved": set(), "error": set()}
    for task_id in task_ids:
        prediction = submitted.get(task_id)
        if prediction is None:
            ids["incomplete"].add(task_id)
        elif not prediction.patch.strip():
            ids["empty_patch"].add(task_id)
        elif (result := by_id.get(task_id)) is None or result.status not in (Status.RESOLVED, Status.UNRESOLVED):
            ids["error"].add(task_id)  # no verdict: SWE-bench has no report file for it
        else:
            ids["completed"].add(task_id)
            ids["resolved" if result.status is Status.RESOLVED else "unresolved"].add(task_id)
    return {
        "total_instances": len(task_ids),
        "submitted_instances": len(submitted),
        "completed_instances": len(ids["completed"]),
        "resolved_instances": len(ids["resolved"]),
        "unresolved_instances": len(ids["unresolved"]),
        "infra_failure_instances": 0,
        "ambiguous_failure_instances": 0,
        "empty_patch_instances": len(ids["empty_patch"]),
        "error_instances": len(ids["error"]),
        "completed_ids": sorted(ids["completed"]),
        "incomplete_ids": sorted(ids["incomplete"]),
        "empty_patch_ids": sorted(ids["empty_patch"]),
        "submitted_ids": sorted(submitted),
        "resolved_ids": sorted(ids["resolved"]),
        "unresolved_ids": sorted(ids["unresolved"]),
        "infra_failure_ids": [],
        "ambiguous_failure_ids": [],
        "failure_reasons": {},
        "error_ids": sorted(ids["error"]),
        "schema_version": REPORT_SCHEMA_VERSION,
    }


def report_name(model: str, run_id: str) -> str:
    """SWE-bench's file name for a run's report."""
    return f"{model.replace('/', '__')}.{run_id}.json"
