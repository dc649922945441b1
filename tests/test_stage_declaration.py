"""The task stages are declared once (`tasks.stage_declaration`), and everything else derives from it.

Two halves. The scan (on the source with `ast`, names taken from the declaration) fails when product
code outside the declaration writes a stage as a string: a stage's asset name or transcript file
anywhere, or a stage name where it is used *as a stage* (given to the work folder or the builder,
passed as `stage=`, compared with a stage, listed with other stages, or assigned to a `*stage*`
name). The stage names are ordinary words too ("patch" is also a diff, "tests" a harness mode), so a
dict key or a subscript (a field of a stage's saved file or of a record) is not a stage. The derived
lists (the work folder's order, the stage assets, the `tasks` view, `TaskBuilder.run`) are then
checked against the declaration's order.
"""

from __future__ import annotations

import ast
import inspect
import itertools
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from swe_forge_dagster.assets.graph import build_asset_graph
from swe_forge_dagster.settings import Settings
from swe_forge_dagster.tasks import work as work_module
from swe_forge_dagster.tasks.stage_declaration import FINAL, STAGE_NAMES, STAGES, LLMUse, stage_named
from swe_forge_dagster.tasks.stages import StageOutcome, TaskBuilder
from swe_forge_dagster.tasks.status import TASKS_SCHEMA, status_row
from swe_forge_dagster.tasks.work import TaskWork
from tests.support.common import REPO_ROOT

DECLARATION = Path("swe_forge_dagster/tasks/stage_declaration.py")
SCANNED = ("swe_forge_dagster", "benchmarks")
STAGE_CALLS = {"begin", "save", "load", "load_optional", "has", "reject", "fail", "_reject", "run", "run_stage"}
"""Callables that take a stage: the work folder's (`TaskWork`), the builder's and the assets'."""

NAMES = set(STAGE_NAMES)
UNIQUE = {stage.asset for stage in STAGES} | {stage.transcript_file for stage in STAGES if stage.transcript_file}
"""Words that mean nothing but the stage (its asset, its transcript): never written outside the declaration."""


def _is_stage_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value in NAMES


def _mentions_stage(node: ast.AST) -> bool:
    return "stage" in ast.unparse(node).lower()


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def stage_strings(source: str) -> list[tuple[int, str]]:
    """(line, word) of every stage written as a string in `source` (see the module docstring)."""
    found: set[tuple[int, str]] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and node.value in UNIQUE:
            found.add((node.lineno, node.value))
        elif isinstance(node, ast.Call):
            given = [*node.args, *(kw.value for kw in node.keywords)]
            if _callee(node) in STAGE_CALLS:
                found.update((arg.lineno, arg.value) for arg in given if _is_stage_name(arg))
            found.update(
                (kw.value.lineno, kw.value.value)
                for kw in node.keywords
                if kw.arg and "stage" in kw.arg and _is_stage_name(kw.value)
            )
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            named = [op for op in operands if _is_stage_name(op)]
            listed = [
                elt
                for op in operands
                if isinstance(op, (ast.Tuple, ast.List, ast.Set))
                for elt in op.elts
                if _is_stage_name(elt)
            ]
            if (named or listed) and any(_mentions_stage(op) for op in operands):
                found.update((n.lineno, n.value) for n in [*named, *listed])
        elif isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            listed = [elt for elt in node.elts if _is_stage_name(elt)]
            if len(listed) >= 2:
                found.update((elt.lineno, elt.value) for elt in listed)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and _is_stage_name(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_mentions_stage(target) for target in targets):
                found.add((node.value.lineno, node.value.value))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if key is not None and _is_stage_name(value) and _mentions_stage(key):
                    found.add((value.lineno, value.value))
    return sorted(found)


def scan(root: Path) -> dict[str, list[tuple[int, str]]]:
    """Every product module under `root` (but the declaration) that writes a stage as a string."""
    hits = {}
    for folder in SCANNED:
        for path in sorted((root / folder).rglob("*.py")):
            relative = path.relative_to(root)
            if relative != DECLARATION and (found := stage_strings(path.read_text(encoding="utf-8"))):
                hits[str(relative)] = found
    return hits


def test_no_stage_is_written_as_a_string_outside_the_declaration() -> None:
    hits = scan(REPO_ROOT)
    assert not hits, (
        "stage names written outside tasks/stage_declaration.py (use the declared Stage, e.g. "
        f"`PATCH.name`, or walk `STAGES`): {hits}"
    )


def test_the_scan_sees_each_way_of_naming_a_stage_and_not_the_ordinary_words() -> None:
    first, last = STAGES[0], FINAL
    written = f"""
ORDER = ({first.name!r}, {last.name!r})
work.load({first.name!r})
builder.run({last.name!r}, task_id, None)
row.update(status="accepted", stage={last.name!r})
if stage in ({first.name!r}, {last.name!r}): pass
if row["stage"] == {last.name!r}: pass
KILL_STAGE = {first.name!r}
job = {{"stage": {first.name!r}}}
asset = {first.asset!r}
"""
    assert {line for line, _ in stage_strings(written)} == set(range(2, 11))
    ordinary = f"""
data = {{{first.name!r}: diff}}
text = data[{first.name!r}]
for name, diff in (({first.name!r}, a), ("test_patch", b)): pass
mode = {first.name!r}
prompt = data({first.name!r}, diff)
"""
    assert stage_strings(ordinary) == []


def test_the_work_folder_walks_the_declared_order() -> None:
    assert work_module.STAGES == STAGE_NAMES == tuple(stage.name for stage in STAGES)
    assert len(set(STAGE_NAMES)) == len(STAGES)
    assert stage_named(FINAL.name) is FINAL
    with pytest.raises(ValueError, match="no task stage"):
        stage_named("deploy")


def test_the_stage_assets_are_the_declared_stages_in_order() -> None:
    assets_made = build_asset_graph(Settings()).assets  # in the order the graph builds them
    TASK_STAGE_ASSETS = [a for a in assets_made if a.node_def.name in {stage.asset for stage in STAGES}]
    assert [assets.node_def.name for assets in TASK_STAGE_ASSETS] == [stage.asset for stage in STAGES]
    for stage, assets in zip(STAGES, TASK_STAGE_ASSETS, strict=True):
        assert assets.node_def.pool == stage.pool
        assert assets.node_def.description == stage.description
        assert ("llm" in assets.required_resource_keys) == (stage.llm is not LLMUse.NONE)
    for before, after in itertools.pairwise(TASK_STAGE_ASSETS):
        upstream = {dep.asset_key for spec in after.specs for dep in spec.deps}
        assert set(before.keys) <= upstream, f"{after.node_def.name} does not follow {before.node_def.name}"
    first_deps = {dep.asset_key for spec in TASK_STAGE_ASSETS[0].specs for dep in spec.deps}
    assert first_deps == {dg.AssetKey("classified_prs")}


def test_the_tasks_view_fills_its_columns_from_each_stage_in_order(tmp_path: Path) -> None:
    work = TaskWork(tmp_path, "o__r-1")
    for stage in STAGES:
        assert set(stage.status_columns) <= set(TASKS_SCHEMA.names), stage.name
        work.save(stage.name, {key: f"{stage.name}:{key}" for key in stage.status_columns.values()})
        row = status_row(work)
        assert row["stage"] == stage.name
        assert row["status"] == ("accepted" if stage is FINAL else "building")
        for column, key in stage.status_columns.items():
            assert row[column] == f"{stage.name}:{key}"


def test_run_gives_each_stage_the_llm_its_declaration_asks_for() -> None:
    calls: list[tuple[str, Any]] = []

    def method(name: str, llm: LLMUse) -> Any:
        if llm is LLMUse.NONE:
            return lambda self, task_id: calls.append((name, None)) or StageOutcome("done")
        return lambda self, task_id, factory: calls.append((name, factory)) or StageOutcome("done")

    recording = type("RecordingBuilder", (TaskBuilder,), {s.name: method(s.name, s.llm) for s in STAGES})
    builder = object.__new__(recording)
    factory = object()
    expected: list[tuple[str, Any]] = []
    for stage in STAGES:
        signature = inspect.signature(getattr(TaskBuilder, stage.name))
        assert ("llm" in signature.parameters) == (stage.llm is not LLMUse.NONE), stage.name
        builder.run(stage.name, "o__r-1", factory)  # type: ignore[arg-type]
        expected.append((stage.name, None if stage.llm is LLMUse.NONE else factory))
        if stage.llm is LLMUse.REQUIRED:
            with pytest.raises(ValueError, match="needs an LLM client factory"):
                builder.run(stage, "o__r-1", None)
        elif stage.llm is LLMUse.OPTIONAL:
            builder.run(stage, "o__r-1", None)
            expected.append((stage.name, None))
    assert calls == expected
