"""The Go rows of SWE-bench Multilingual (`../shared/fixtures`) and the twins their FAIL_TO_PASS tests get
(`languages.go.twins`): the tests written whole in a row's test patch (for the fast tests, no repository needed), and
the coverage over every row given the repositories (their test files at the base commit, the test patch applied).

    .venv/bin/python -m tests.support.go_rows --repos DIR    # DIR/<owner>+<name>/repo or DIR/<owner>+<name>.git

prints, per row, its FAIL_TO_PASS test functions, which got a twin and how, and the totals.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import tempfile
from pathlib import Path

from swe_forge_dagster.languages.go.twins import make_twins
from tests.support.common import SHARED_FIXTURES

MULTI = SHARED_FIXTURES / "swebench" / "lite-test-and-multilingual" / "swebench_multi.jsonl"
_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.M)
_TEST = re.compile(r"^func (Test\w*)\(\w+ \*testing\.T\) \{$")


def go_rows() -> list[dict]:
    """The rows whose test patch changes a `_test.go` file, in the file's order."""
    rows = [json.loads(line) for line in MULTI.read_text().splitlines() if line.strip()]
    return [row for row in rows if any(b.endswith("_test.go") for _, b in _FILE.findall(row["test_patch"]))]


def fail_to_pass(row: dict) -> list[str]:
    value = row["FAIL_TO_PASS"]
    return list(json.loads(value) if isinstance(value, str) else value)


def whole_tests(row: dict) -> dict[str, str]:
    """FAIL_TO_PASS test functions the row's test patch holds whole (added, or kept as context, from `func` to its
    closing `}`), by name: the tests a fast test can twin without the repository."""
    wanted = {test_id.split("/", 1)[0] for test_id in fail_to_pass(row)}
    found: dict[str, str] = {}
    for hunk in re.split(r"^@@[^\n]*\n", row["test_patch"], flags=re.M)[1:]:
        lines = [line[1:] for line in hunk.splitlines() if line[:1] in (" ", "+")]
        for index, line in enumerate(lines):
            match = _TEST.match(line)
            if match is None or match.group(1) not in wanted:
                continue
            end = next((i for i in range(index + 1, len(lines)) if lines[i] == "}"), None)
            if end is not None:
                found[match.group(1)] = "\n".join(lines[index : end + 1]) + "\n"
    return found


def patched_test_files(row: dict, git_dir: Path) -> dict[str, str]:
    """The `_test.go` files the row's test patch changes, as they read at its base commit with the patch applied, and
    those that define a FAIL_TO_PASS test it leaves be (as they read at the base commit)."""
    paths = [b for _, b in _FILE.findall(row["test_patch"]) if b.endswith("_test.go")]
    with tempfile.TemporaryDirectory(prefix="go-row-") as work:
        root = Path(work)
        for path in paths:
            shown = subprocess.run(
                ["git", "--git-dir", str(git_dir), "show", f"{row['base_commit']}:{path}"], capture_output=True
            )
            if shown.returncode == 0:
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_bytes(shown.stdout)
        subprocess.run(
            ["git", "apply", "--include=*_test.go", "-"], cwd=root, input=row["test_patch"].encode(), check=True
        )
        files = {path: (root / path).read_text() for path in paths if (root / path).is_file()}
    defined = {name for text in files.values() for name in re.findall(r"^func (Test\w*)\(", text, re.M)}
    for name in {test_id.split("/", 1)[0] for test_id in fail_to_pass(row)} - defined:  # in a file it leaves be
        found = subprocess.run(
            ["git", "--git-dir", str(git_dir), "grep", "-l", f"^func {name}(", row["base_commit"], "--", "*_test.go"],
            capture_output=True,
            text=True,
        )
        for line in found.stdout.splitlines():
            path = line.split(":", 1)[1]
            shown = ["git", "--git-dir", str(git_dir), "show", f"{row['base_commit']}:{path}"]
            files[path] = subprocess.run(shown, capture_output=True, text=True, check=True).stdout
    return files


def coverage(row: dict, files: dict[str, str], seed: int = 0) -> dict:
    """Which of the row's FAIL_TO_PASS test functions defined in `files` got a twin, and how."""
    wanted = {test_id.split("/", 1)[0] for test_id in fail_to_pass(row)}
    defined = {name for text in files.values() for name in re.findall(r"^func (Test\w*)\(", text, re.M)}
    twinned: dict[str, str] = {}
    for path, text in files.items():
        made = make_twins(path, text, wanted, random.Random(seed))
        twinned |= {twin.name: twin.how for twin in made.twins} if made is not None else {}
    return {"instance_id": row["instance_id"], "tests": sorted(wanted & defined), "twinned": twinned}


def _git_dir(repos: Path, repo: str) -> Path | None:
    name = repo.replace("/", "+")
    return next((p for p in (repos / name / "repo", repos / f"{name}.git") if p.is_dir()), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=Path, required=True, help="bare repositories: <owner>+<name>/repo or .git")
    args = parser.parse_args()
    tests = twinned = 0
    for row in go_rows():
        git_dir = _git_dir(args.repos, row["repo"])
        if git_dir is None:
            print(json.dumps({"instance_id": row["instance_id"], "skipped": "repository not given"}))
            continue
        found = coverage(row, patched_test_files(row, git_dir))
        tests, twinned = tests + len(found["tests"]), twinned + len(found["twinned"])
        print(json.dumps(found))
    print(json.dumps({"fail_to_pass_test_functions": tests, "twinned": twinned}))


if __name__ == "__main__":
    main()
