"""`benchmarks/rebased_rows.py`: SWE-bench rows re-based on a small history of their exact upstream trees, in the
layout `benchmarks/env_corpus.py --fixtures` reads. Fast: a local git repository stands in for the fetched mirror."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.common import REPO_ROOT


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO_ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return sys.modules[name]


rebased_rows = _load("rebased_rows")
env_corpus = _load("env_corpus")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def upstream(tmp_path: Path) -> tuple[Path, list[dict]]:
    """A repository with two commits (the second adds a data file) and a row for each."""
    repo = tmp_path / "upstream"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    rows = []
    for number, files in enumerate(({"pkg.py": "x = 1\n"}, {"pkg.py": "x = 2\n", "data.bin": "big\n"}), 1):
        for name, text in files.items():
            (repo / name).write_text(text)
        git(repo, "add", "-A")
        git(repo, "-c", "user.name=u", "-c", "user.email=u@x", "commit", "-q", "-m", f"c{number}")
        if number == 1:
            git(repo, "tag", "v1.0.dev")  # a build reading its version from git (setuptools-scm) needs it
        row = {
            "repo": "acme/widget",
            "instance_id": f"acme__widget-{number}",
            "base_commit": git(repo, "rev-parse", "HEAD"),
        }
        row |= {"created_at": f"2020-0{number}-01T00:00:00Z", "version": "1.0", "patch": "", "test_patch": ""}
        rows.append(row | {"FAIL_TO_PASS": "[]", "PASS_TO_PASS": "[]", "environment_setup_commit": row["base_commit"]})
    return repo, rows


def test_each_row_gets_a_dated_commit_with_its_exact_upstream_tree(
    tmp_path: Path, upstream: tuple[Path, list[dict]]
) -> None:
    repo, rows = upstream
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in reversed(rows)))
    out = tmp_path / "fixtures"
    assert (
        rebased_rows.main(
            ["trees", "--rows", str(source), "--repo", "acme/widget", "--out", str(out), "--mirror", str(repo / ".git")]
        )
        == 0
    )
    made = [json.loads(line) for line in (out / "swebench" / "widget-trees" / "rows.jsonl").read_text().splitlines()]
    assert [r["instance_id"] for r in made] == ["acme__widget-1", "acme__widget-2"]  # oldest first
    clone = tmp_path / "clone.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(out / "repos" / "acme+widget-trees.bundle"), str(clone)], check=True
    )
    for row, given in zip(made, rows, strict=True):
        assert row["upstream_base_commit"] == given["base_commit"] != row["base_commit"]
        assert row["environment_setup_commit"] == row["base_commit"]
        assert git(clone, "rev-parse", f"{row['base_commit']}^{{tree}}") == git(
            repo, "rev-parse", f"{given['base_commit']}^{{tree}}"
        )
        assert git(clone, "log", "-1", "--format=%cI", row["base_commit"]).startswith(row["created_at"][:10])
    assert git(clone, "describe", "--tags", "--abbrev=0", made[1]["base_commit"]) == "v1.0.dev"
    items = [i for i in env_corpus.corpus((out,)) if i.repo == "acme/widget"]
    assert [(i.name, i.bundle.name) for i in items] == [
        ("acme__widget-1", "acme+widget-trees.bundle"),
        ("acme__widget-2", "acme+widget-trees.bundle"),
    ]


def test_a_blob_the_mirror_lacks_leaves_the_row_out_or_empty_and_named(
    tmp_path: Path, upstream: tuple[Path, list[dict]]
) -> None:
    repo, rows = upstream
    blob = git(repo, "rev-parse", "HEAD:data.bin")
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()  # as a snapshot that left its largest file out
    source = tmp_path / "rows.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["trees", "--rows", str(source), "--repo", "acme/widget", "--mirror", str(repo / ".git")]
    assert rebased_rows.main([*args, "--out", str(tmp_path / "strict")]) == 0
    strict = (tmp_path / "strict" / "swebench" / "widget-trees" / "rows.jsonl").read_text().splitlines()
    assert [json.loads(line)["instance_id"] for line in strict] == ["acme__widget-1"]
    assert rebased_rows.main([*args, "--out", str(tmp_path / "loose"), "--allow-missing"]) == 0
    loose = [json.loads(line) for line in (tmp_path / "loose" / "swebench" / "widget-trees" / "rows.jsonl").open()]
    assert "data.bin" in loose[1]["fixture_note"] and "fixture_note" not in loose[0]


def test_a_superset_on_a_rebased_row_names_the_rebasing_as_its_possible_cause() -> None:
    """A row re-based onto a later tree (a release sdist) runs the tests added after its upstream base: the reason
    says so, beside the general superset cause the corpus counts (`env_corpus`: `dataset`)."""
    from swe_forge_dagster.tasks.revalidate_instances import SUPERSET, superset_cause
    from tests.support.records import make_instance

    plain = make_instance()
    assert superset_cause(plain) == SUPERSET
    rebased = plain.model_copy(update={"upstream_base_commit": "f" * 40})
    cause = superset_cause(rebased)
    assert cause.startswith(SUPERSET) and "re-based from upstream ffffffffffff" in cause
    assert env_corpus.whose("changed", f"P2P 6 / 9; {cause}") == "dataset"
