"""The Rust rows of SWE-bench Multilingual (`../shared/fixtures`) and the twins their FAIL_TO_PASS tests get
(`languages.rust.twins`): the tests written whole in a row's test patch (for the fast tests, no repository needed), and
the coverage over every row given the repositories (their files at the base commit, the test patch applied), with
every test of the files the patch touches beside the FAIL_TO_PASS ones.

    .venv/bin/python -m tests.support.rust_rows --repos DIR    # DIR/<owner>+<name>/repo or DIR/<owner>+<name>.git

prints, per row, its FAIL_TO_PASS tests, which got a twin and how, the same for every test of its patched files, and
the totals.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from swe_forge_dagster.languages.rust.source import Source, file_modules, test_functions
from swe_forge_dagster.languages.rust.twins import make_twins
from tests.support.common import SHARED_FIXTURES

MULTI = SHARED_FIXTURES / "swebench" / "lite-test-and-multilingual" / "swebench_multi.jsonl"
_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.M)


def rust_rows() -> list[dict]:
    """The rows whose test patch changes a `.rs` file, in the file's order."""
    rows = [json.loads(line) for line in MULTI.read_text().splitlines() if line.strip()]
    return [row for row in rows if any(b.endswith(".rs") for _, b in _FILE.findall(row["test_patch"]))]


def fail_to_pass(row: dict) -> list[str]:
    value = row["FAIL_TO_PASS"]
    return list(json.loads(value) if isinstance(value, str) else value)


def whole_tests(row: dict) -> dict[str, tuple[str, str]]:
    """FAIL_TO_PASS tests the row's test patch holds whole (added, or kept as context, from their attributes to the
    closing `}` at their indentation), by libtest id: (path, the function's text)."""
    found: dict[str, tuple[str, str]] = {}
    wanted = set(fail_to_pass(row))
    for section in re.split(r"^(?=diff --git )", row["test_patch"], flags=re.M):
        named = _FILE.match(section)
        if named is None or not named.group(2).endswith(".rs"):
            continue
        for hunk in re.split(r"^@@[^\n]*\n", section, flags=re.M)[1:]:
            lines = [line[1:] for line in hunk.splitlines() if line[:1] in (" ", "+")]
            for index, line in enumerate(lines):
                if line.strip() != "#[test]":
                    continue
                indent = line[: len(line) - len(line.lstrip())]
                end = next((i for i in range(index, len(lines)) if lines[i] == indent + "}"), None)
                text = "\n".join(lines[index : end + 1]) + "\n" if end is not None else ""
                src = Source.read(text)
                tests = test_functions(src) if src is not None else []
                test_id = "::".join((*file_modules(named.group(2)), tests[0].name)) if tests else ""
                if test_id in wanted:
                    found[test_id] = (named.group(2), text)
    return found


def forms(hows: list[str]) -> Counter[str]:
    """How the twins change their checks, by kind: a value, or the macro, method or condition negated."""
    kinds = Counter[str]()
    for how in hows:
        if how.startswith("expects "):
            kinds["a value changed"] += 1
        elif how.startswith("asserts assert_") or how.startswith("asserts ."):
            new, old = how.removeprefix("asserts ").split(" where the test asserts ", 1)
            kinds[f"{old} -> {new}"] += 1
        else:
            kinds["assert!'s condition negated"] += 1
    return kinds


def coverage(files: dict[str, str], test_ids: list[str], seed: int = 0) -> dict[str, str]:
    """Which of `test_ids` defined in `files` (path -> text) got a twin: id -> how."""
    twinned: dict[str, str] = {}
    for path, text in files.items():
        made = make_twins(path, text, test_ids, random.Random(seed))
        twinned |= {twin.name: twin.how for twin in made.twins} if made is not None else {}
    return twinned


def patched_files(row: dict, git_dir: Path) -> dict[str, str]:
    """The `.rs` files the row's test patch changes, as they read at its base commit with the patch applied."""
    paths = [b for _, b in _FILE.findall(row["test_patch"]) if b.endswith(".rs")]
    with tempfile.TemporaryDirectory(prefix="rust-row-") as work:
        root = Path(work)
        for path in paths:
            shown = subprocess.run(
                ["git", "--git-dir", str(git_dir), "show", f"{row['base_commit']}:{path}"], capture_output=True
            )
            if shown.returncode == 0:
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_bytes(shown.stdout)
        subprocess.run(["git", "apply", "--include=*.rs", "-"], cwd=root, input=row["test_patch"].encode(), check=True)
        return {path: (root / path).read_text() for path in paths if (root / path).is_file()}


def every_test(files: dict[str, str]) -> list[str]:
    """The libtest ids of every test of `files` that may have a twin (not `#[should_panic]` or `#[ignore]`)."""
    ids = []
    for path, text in files.items():
        src = Source.read(text)
        tests = test_functions(src) if src is not None else []
        ids += ["::".join((*file_modules(path), *t.modules, t.name)) for t in tests if not t.panics_or_ignored]
    return ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=Path, required=True, help="bare repositories: <owner>+<name>/repo or .git")
    args = parser.parse_args()
    totals: Counter[str] = Counter()
    hows: list[str] = []
    for row in rust_rows():
        name = row["repo"].replace("/", "+")
        git_dir = next((p for p in (args.repos / name / "repo", args.repos / f"{name}.git") if p.is_dir()), None)
        if git_dir is None:
            print(json.dumps({"instance_id": row["instance_id"], "skipped": "repository not given"}))
            continue
        files = patched_files(row, git_dir)
        twinned, everything = coverage(files, fail_to_pass(row)), every_test(files)
        all_twinned = coverage(files, everything)
        hows += list(all_twinned.values())
        totals.update(
            fail_to_pass=len(fail_to_pass(row)), twinned=len(twinned), tests=len(everything), all=len(all_twinned)
        )
        print(json.dumps({"instance_id": row["instance_id"], "fail_to_pass": fail_to_pass(row), "twinned": twinned}))
    print(json.dumps({**totals, "forms of every test's twin": forms(hows)}))


if __name__ == "__main__":
    main()
