"""The git world is real and its ground truth is right.

Later stages are judged against `expected_fail_to_pass`/`expected_pass_to_pass`, so a wrong list
here would make a wrong validator look right. The lists are therefore checked by really running
pytest on the world's own projects (code written by us for this purpose, which is why running it
on the host is acceptable here and nowhere else): at base with the PR's test files, and at the
merge commit, exactly as a SWE-bench validator would.
"""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pyarrow as pa
import pytest

from swe_forge_dagster.candidates.datasets import ENRICHED_PRS_SCHEMA
from swe_forge_dagster.demo.worlds.git_world import MANIFEST, GitWorld, build_git_world, enriched_pr_rows

PRS = [("acme-labs/tinycalc", 12), ("acme-labs/tinycalc", 15), ("northwind/datekit", 7), ("globex-oss/yaml-lite", 3)]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> GitWorld:
    return build_git_world(tmp_path_factory.mktemp("git-world"))


def git(world: GitWorld, repo: str, *args: str) -> bytes:
    """Read-only git on a world remote, with no machine config."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(HOME=str(world.root), GIT_CONFIG_NOSYSTEM="1", GIT_TERMINAL_PROMPT="0")
    cmd = ["git", "--git-dir", str(world.remote(repo)), *args]
    return subprocess.run(cmd, env=env, capture_output=True, check=True).stdout


def export(world: GitWorld, repo: str, sha: str, dest: Path, overlay: dict[str, bytes]) -> Path:
    """The tree of `sha` in `dest` (via `git archive`), with `overlay` files written over it."""
    with tarfile.open(fileobj=io.BytesIO(git(world, repo, "archive", "--format=tar", sha))) as tar:
        tar.extractall(dest, filter="data")
    for path, content in overlay.items():
        (dest / path).parent.mkdir(parents=True, exist_ok=True)
        (dest / path).write_bytes(content)
    return dest


def run_pytest(tree: Path) -> dict[str, str]:
    """Run the project's tests; {SWE-bench node id: "passed" | "failed" | "skipped"} from JUnit XML."""
    xml = tree.parent / f"{tree.name}-junit.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    env.update(PYTHONDONTWRITEBYTECODE="1", PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")  # hermetic and fast
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--junitxml={xml}"]
    cmd += ["-o", "junit_family=xunit1"]  # xunit1 records each case's file: ids need no guessing
    proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=False, timeout=120)
    assert xml.is_file(), proc.stdout + proc.stderr
    results = {}
    for case in ET.parse(xml).iter("testcase"):
        file, classname, name = case.get("file", ""), case.get("classname", ""), case.get("name", "")
        module = file.removesuffix(".py").replace("/", ".")
        inner = classname[len(module) + 1 :] if classname.startswith(module + ".") else ""
        node = "::".join(part for part in (file, inner, name) if part)
        if case.find("failure") is not None or case.find("error") is not None:
            results[node] = "failed"
        else:
            results[node] = "skipped" if case.find("skipped") is not None else "passed"
    return results


@pytest.mark.parametrize(("repo", "number"), PRS, ids=[f"{r}#{n}" for r, n in PRS])
def test_expected_lists_are_what_pytest_says(world: GitWorld, tmp_path: Path, repo: str, number: int) -> None:
    pr = world.pr(repo, number)
    agent = {path: content.encode() for path, content in pr.agent_tests.items()}
    tests = {path: pr.head_tree[path] for path in pr.test_files} | agent
    before = run_pytest(export(world, repo, pr.base_sha, tmp_path / "before", tests))
    after = run_pytest(export(world, repo, pr.merge_commit_sha, tmp_path / "after", agent))
    flaky = set(pr.expected_flaky)
    passed_before = {node for node, outcome in before.items() if outcome == "passed"} - flaky
    passed_after = {node for node, outcome in after.items() if outcome == "passed"} - flaky
    assert set(after) - flaky == passed_after, "every stable test passes at the merge commit"
    assert sorted(passed_after - passed_before) == pr.expected_fail_to_pass
    assert sorted(passed_after & passed_before) == pr.expected_pass_to_pass
    assert flaky <= set(after)
    assert (pr.expected_rejection == "no FAIL_TO_PASS") == (not pr.expected_fail_to_pass)


def test_the_pr_shapes_the_stages_need(world: GitWorld) -> None:
    tinycalc = world.pr("acme-labs/tinycalc", 12)
    assert "tests/test_arith.py::TestAdd::test_small" in tinycalc.expected_pass_to_pass
    assert "tests/test_rounding.py::test_round_half_up[-1.5--2]" in tinycalc.expected_fail_to_pass
    assert tinycalc.issue is not None and tinycalc.issue.number == 11 and "-2.5" in tinycalc.issue.title
    assert "#11" in tinycalc.body and tinycalc.expected_rejection is None
    datekit = world.pr("northwind/datekit", 7)
    assert datekit.test_files == [] and list(datekit.agent_tests) == ["tests/test_week_dates.py"]
    assert datekit.issue is None and datekit.expected_rejection is None
    assert world.pr("globex-oss/yaml-lite", 3).expected_fail_to_pass == []
    stochastic = world.pr("acme-labs/tinycalc", 15)
    assert stochastic.base_tree["tests/test_rounding.py"] == tinycalc.head_tree["tests/test_rounding.py"]  # after #12
    assert stochastic.expected_rejection == "flaky tests" and stochastic.expected_flaky


def test_flaky_test_really_flips(world: GitWorld, tmp_path: Path) -> None:
    pr = world.pr("acme-labs/tinycalc", 15)
    tree = export(world, pr.repo, pr.merge_commit_sha, tmp_path / "merge", {})
    (test,) = pr.expected_flaky
    file, name = test.split("::")
    code = (
        f"import runpy\nns = runpy.run_path({file!r})\nseen = set()\nfor _ in range(200):\n"
        f"    try:\n        ns[{name!r}]()\n        seen.add('passed')\n"
        f"    except AssertionError:\n        seen.add('failed')\nprint(sorted(seen))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=tree, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['failed', 'passed']"


def test_layout_is_like_github(world: GitWorld) -> None:
    for pr in world.prs:
        remote = world.remote(pr.repo)
        assert world.url_template.format(repo=pr.repo) == f"file://{remote}"
        assert git(world, pr.repo, "rev-parse", "--is-bare-repository").strip() == b"true"
        assert git(world, pr.repo, "rev-parse", f"refs/pull/{pr.number}/head").decode().strip() == pr.head_sha
        parents = git(world, pr.repo, "rev-list", "--parents", "-n1", pr.merge_commit_sha).decode().split()
        assert parents == [pr.merge_commit_sha, pr.base_sha, pr.head_sha]
        git(world, pr.repo, "merge-base", "--is-ancestor", pr.merge_commit_sha, "refs/heads/main")
        assert git(world, pr.repo, "merge-base", pr.base_sha, pr.head_sha).decode().strip() == pr.base_sha
        for sha, tree in (
            (pr.base_sha, pr.base_tree),
            (pr.head_sha, pr.head_tree),
            (pr.merge_commit_sha, pr.head_tree),
        ):
            names = git(world, pr.repo, "ls-tree", "-r", "--name-only", "-z", sha).decode().strip("\0").split("\0")
            assert sorted(names) == sorted(tree)
            assert all(git(world, pr.repo, "cat-file", "blob", f"{sha}:{path}") == tree[path] for path in tree)
        changed = git(world, pr.repo, "diff", "--name-only", pr.base_sha, pr.head_sha).decode().split()
        assert sorted(changed) == pr.file_paths
        assert {"pyproject.toml", "README.md"} <= set(pr.base_tree) and any(
            p.startswith("tests/") for p in pr.base_tree
        )


def test_binary_file_is_a_real_png(world: GitWorld) -> None:
    pr = world.pr("acme-labs/tinycalc", 12)
    png = pr.head_tree["docs/rounding.png"]
    assert "docs/rounding.png" in pr.src_files and "docs/rounding.png" not in pr.base_tree
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    (length,) = struct.unpack(">I", png[33:37])
    assert png[37:41] == b"IDAT" and len(zlib.decompress(png[41 : 41 + length])) == 8 * (1 + 8 * 3)
    numstat = git(world, pr.repo, "diff", "--numstat", pr.base_sha, pr.head_sha).decode()
    assert "-\t-\tdocs/rounding.png" in numstat  # git itself sees a binary file


def test_world_is_reproducible_and_reused(world: GitWorld, tmp_path: Path) -> None:
    again = build_git_world(tmp_path / "again")
    shas = [(p.base_sha, p.head_sha, p.merge_commit_sha) for p in world.prs]
    assert [(p.base_sha, p.head_sha, p.merge_commit_sha) for p in again.prs] == shas
    manifest = tmp_path / "again" / MANIFEST
    stamp = manifest.stat().st_mtime_ns
    assert build_git_world(tmp_path / "again") == again and manifest.stat().st_mtime_ns == stamp
    manifest.write_text(manifest.read_text().replace('"version"', '"old_version"'))  # a stale marker rebuilds
    assert [(p.base_sha, p.head_sha, p.merge_commit_sha) for p in build_git_world(tmp_path / "again").prs] == shas
    assert manifest.stat().st_mtime_ns != stamp


def test_enriched_rows_fit_the_dataset(world: GitWorld) -> None:
    rows = enriched_pr_rows(world)
    table = pa.Table.from_pylist(rows, schema=ENRICHED_PRS_SCHEMA)
    assert table.num_rows == len(world.prs) == 4
    row = next(r for r in table.to_pylist() if (r["repo_name"], r["number"]) == ("acme-labs/tinycalc", 12))
    pr = world.pr("acme-labs/tinycalc", 12)
    assert pr.issue is not None and len(pr.issue.comments) == 3
    comments = [
        {"body": c.body, "created_at": pr.comment_time(c), "updated_at": pr.comment_time(c)} for c in pr.issue.comments
    ]
    assert row["closing_issues"] == [
        {"number": 11, "title": pr.issue.title, "body": pr.issue.body, "repo": pr.repo, "comments": comments}
    ]
    assert row["first_commit_at"] == pr.created_at  # the hints' cut-off
    assert row["file_paths"] == ["docs/rounding.png", "tests/test_rounding.py", "tinycalc/rounding.py"]
    assert (row["merged"], row["changed_files"], row["language"], row["stars"]) == (True, 3, "Python", 100)
    assert (row["base_sha"], row["head_sha"], row["merge_commit_sha"]) == (
        pr.base_sha,
        pr.head_sha,
        pr.merge_commit_sha,
    )
    assert row["owner_type"] == "Organization" and row["additions"] > 0 and row["status"] == "accepted"
    assert next(r for r in rows if r["repo_name"] == "northwind/datekit")["closing_issues"] == []
