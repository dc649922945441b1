"""`swe-forge validate` and `swe-forge harness` say which runtime an environment used (issue 22 item 5): the
environment image's record (`execution.runtime_record`), whatever fields it carries, in the JSON and the table."""

from __future__ import annotations

from swe_forge_dagster.execution.runtime_record import describe, runtime_labels
from swe_forge_dagster.harness.models import Status, TaskResult
from swe_forge_dagster.harness.summary import summarize

NODE_ENV = {  # the labels of a real environment image built on swe-forge-node:20
    "swe-forge": "",
    "swe-forge.built-at": "c68a47a9024eb00e2282f5b86d90886b4bc013c6",
    "swe-forge.deps": "612007f763ea3bfc",
    "swe-forge.from": "swe-forge-node:20",
    "swe-forge.harness.role": "build",
    "swe-forge.node-version": "20.20.2",
    "swe-forge.npm-version": "10.9.9",
    "swe-forge.owner-pid": "",
    "swe-forge.recipe": "33e015e16c208f5f",
    "swe-forge.toolchain": "Node 20 + npm 10 from npm",
    "maintainer": "someone",
}


def test_the_runtime_part_of_an_environments_labels() -> None:
    record = runtime_labels(NODE_ENV)
    assert record == {
        "from": "swe-forge-node:20",
        "node-version": "20.20.2",
        "npm-version": "10.9.9",
        "toolchain": "Node 20 + npm 10 from npm",
    }
    assert describe(record) == "from swe-forge-node:20, node 20.20.2, npm 10.9.9"
    era = runtime_labels({"swe-forge.resolution-date": "2021-05-13", "swe-forge.python-version": "3.9.2"})
    assert describe(era) == "python 3.9.2, resolved as of 2021-05-13"
    skipped = runtime_labels({"swe-forge.resolution-date": "none", "swe-forge.resolution-note": "no time.created"})
    assert skipped["resolution-note"] == "no time.created" and describe(skipped) == "today's releases"
    assert runtime_labels(None) == {} and describe({}) == ""
    built = runtime_labels({"swe-forge.install-seconds": "412", "swe-forge.python-version": "3.9.2"})
    assert describe(built) == "installed in 412 s, python 3.9.2"  # a compiled repository's build, paid once


def test_the_harness_json_carries_each_results_runtime() -> None:
    ran = TaskResult(task_id="a", repo="o/r", status=Status.RESOLVED, image="env:1")
    never = TaskResult(task_id="b", repo="o/r", status=Status.SETUP_ERROR)
    summary = summarize([ran, never], {"env:1": runtime_labels(NODE_ENV)})
    assert summary["results"][0]["runtime"]["node-version"] == "20.20.2"
    assert summary["results"][1]["runtime"] == {}
    assert "runtime" not in summarize([ran])["results"][0]  # no engine asked: the seed's keys only
