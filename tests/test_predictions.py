"""SWE-bench predictions files in and SWE-bench's report out (`harness.predictions`).

Bad records are reported one by one with their line and reason while the others load; the report is compared with
the one SWE-bench's own `make_run_report` writes for the same outcomes (instance logs laid out as `swebench eval`
leaves them). The harness run on real instances is in `tests/test_real_swebench.py`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swe_forge_dagster.harness.models import Status, TaskResult
from swe_forge_dagster.harness.predictions import (
    Prediction,
    PredictionsError,
    load_predictions,
    report_name,
    swebench_report,
)


def record(instance_id: str, patch: str | None = "diff --git a/x b/x\n", model: str = "org/model-1") -> dict:
    return {"instance_id": instance_id, "model_name_or_path": model, "model_patch": patch}


def test_every_bad_record_is_named_with_its_line_and_the_others_load(tmp_path: Path) -> None:
    lines = [
        json.dumps(record("a")).encode(),
        b'{"instance_id": "b", "model_name_or_path": "org/model-1"}',  # no model_patch
        b"not json at all",
        '{"instance_id": "c", "model_name_or_path": "m", "model_patch": "caf\u00e9"}'.encode("latin-1"),  # not UTF-8
        json.dumps(record("a", "second")).encode(),  # the same instance again
        json.dumps(record("d", None)).encode(),  # null patch: an empty one
        b"[1, 2]",
        json.dumps({"model_name_or_path": "m", "model_patch": ""}).encode(),
    ]
    path = tmp_path / "preds.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    good, bad = load_predictions(path)
    assert good == [Prediction("a", "org/model-1", "diff --git a/x b/x\n"), Prediction("d", "org/model-1", "")]
    problems = {b.where: b.problem for b in bad}
    assert problems["preds.jsonl:2"] == "missing model_patch" and "not JSON" in problems["preds.jsonl:3"]
    assert problems["preds.jsonl:4"].startswith("not UTF-8") and "second prediction" in problems["preds.jsonl:5"]
    assert "not an object" in problems["preds.jsonl:7"] and "no instance_id" in problems["preds.jsonl:8"]
    assert [b.instance_id for b in bad if b.where == "preds.jsonl:2"] == ["b"]


def test_json_lists_and_objects_keyed_by_instance_id_are_read_as_swebench_reads_them(tmp_path: Path) -> None:
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([record("a"), record("b", "")], indent=2))
    keyed = tmp_path / "keyed.json"
    keyed.write_text(json.dumps({"a": {"model_name_or_path": "m", "model_patch": "p"}}))
    assert [p.instance_id for p in load_predictions(listed)[0]] == ["a", "b"]
    assert load_predictions(keyed)[0] == [Prediction("a", "m", "p")]
    for text, problem in (("{", "not JSON"), ('"a string"', "want a list")):
        broken = tmp_path / "broken.json"
        broken.write_text(text)
        with pytest.raises(PredictionsError, match=problem):
            load_predictions(broken)
    with pytest.raises(PredictionsError, match="No such file"):
        load_predictions(tmp_path / "missing.json")


def test_the_report_is_the_one_swebench_writes_for_the_same_outcomes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reporting = pytest.importorskip("swebench.harness.reporting", reason="`swebench` not installed")
    from swebench.harness.constants import LOG_REPORT, RUN_EVALUATION_LOG_DIR

    model, run_id = "org/model-1", "run1"
    predictions = [
        Prediction("ok", model, "diff"),
        Prediction("wrong", model, "diff"),
        Prediction("empty", model, ""),
        Prediction("broken", model, "diff"),  # no verdict: the patch did not apply
        Prediction("stranger", model, "diff"),  # not in the dataset
    ]
    dataset = ["ok", "wrong", "empty", "broken", "unpredicted"]
    statuses = {"ok": Status.RESOLVED, "wrong": Status.UNRESOLVED, "broken": Status.AGENT_ERROR}
    results = [TaskResult(task_id=i, repo="o/r", status=s) for i, s in statuses.items()]
    ours = swebench_report(predictions, dataset, results)
    # SWE-bench's reporter reads `logs/run_evaluation/<run>/<model>/<id>/report.json` for each evaluated instance
    monkeypatch.chdir(tmp_path)
    for task_id, status in statuses.items():
        if status is Status.AGENT_ERROR:
            continue  # SWE-bench writes no report for an instance whose patch does not apply
        folder = RUN_EVALUATION_LOG_DIR / run_id / model.replace("/", "__") / task_id
        folder.mkdir(parents=True)
        (folder / LOG_REPORT).write_text(json.dumps({task_id: {"resolved": status is Status.RESOLVED}}))
    preds = {
        p.instance_id: {"instance_id": p.instance_id, "model_name_or_path": model, "model_patch": p.patch}
        for p in predictions
    }
    path = reporting.make_run_report(preds, [{"instance_id": i} for i in dataset], run_id, None, str(tmp_path))
    theirs = json.loads(Path(path).read_text())
    assert Path(path).name == report_name(model, run_id)
    assert ours == theirs
