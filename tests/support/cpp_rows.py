"""The fmt rows of SWE-bench Multilingual (`../shared/fixtures`) and the twins GoogleTest's FAIL_TO_PASS tests get
(`languages.cpp.twins`): each row's test files as the run reads them (base commit, test patch applied), read from the
fmt bundle, and the coverage, over the rows' FAIL_TO_PASS tests and over every `TEST`/`TEST_F` of fmt's test files at
the rows' base commits (a wider census of the forms a check takes).

    .venv/bin/python -m tests.support.cpp_rows [--git-dir DIR] [--compile]    # DIR: a bare clone of fmt

prints, per row, its FAIL_TO_PASS tests and how each twin changes its check, then the census; `--compile` also
checks, in `swe-forge-cpp:bookworm`, that each test file with every test twinned compiles where the file does
(`g++ -std=c++17 -fsyntax-only` against fmt's headers and bundled GoogleTest at the first row's base commit): a twin
that does not compile is missing from the run apart, which the harness calls tampering.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from swe_forge_dagster.languages.cpp.source import Source
from swe_forge_dagster.languages.cpp.twins import FileTwins, gtest_tests, make_twins
from tests.support.common import SHARED_FIXTURES

MULTI = SHARED_FIXTURES / "swebench" / "lite-test-and-multilingual" / "swebench_multi.jsonl"
BUNDLE = SHARED_FIXTURES / "repos" / "fmtlib+fmt.bundle"


def fmt_rows() -> list[dict]:
    """SWE-bench Multilingual's fmt rows (GoogleTest), in the file's order."""
    rows = [json.loads(line) for line in MULTI.read_text().splitlines() if line.strip()]
    return [row for row in rows if row["repo"] == "fmtlib/fmt"]


def fail_to_pass(row: dict) -> list[str]:
    value = row["FAIL_TO_PASS"]
    return list(json.loads(value) if isinstance(value, str) else value)


def clone(git_dir: Path) -> Path:
    """A bare clone of the fmt bundle at `git_dir`."""
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(git_dir)], check=True, timeout=300)
    return git_dir


def show(git_dir: Path, commit: str, path: str) -> str:
    shown = ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"]
    return subprocess.run(shown, capture_output=True, text=True, check=True).stdout


def patched_test_files(row: dict, git_dir: Path) -> dict[str, str]:
    """The `.cc` files the row's test patch changes, as they read at its base commit with the patch applied."""
    with tempfile.TemporaryDirectory(prefix="cpp-row-") as work:
        root = Path(work)
        listed = subprocess.run(
            ["git", "apply", "--numstat", "-"], input=row["test_patch"], capture_output=True, text=True, check=True
        )
        paths = [line.split("\t")[2] for line in listed.stdout.splitlines() if line.endswith(".cc")]
        for path in paths:
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(show(git_dir, row["base_commit"], path))
        subprocess.run(["git", "apply", "--include=*.cc", "-"], cwd=root, input=row["test_patch"].encode(), check=True)
        return {path: (root / path).read_text() for path in paths}


def form(how: str) -> str:
    """What a twin did to its check, from its `how`: a string or a number changed, or the check negated."""
    if how.startswith("asserts "):
        return "negated"
    return "string" if how.split()[1][:1] in "\"'LuUR" else "number"


def row_twins(row: dict, files: dict[str, str], seed: int = 0) -> dict[str, str]:
    """The row's FAIL_TO_PASS tests that got a twin -> how it changes the test's check."""
    wanted = set(fail_to_pass(row))
    made = [make_twins(path, text, wanted, random.Random(seed)) for path, text in files.items()]
    return {twin.name: twin.how for found in made if found is not None for twin in found.twins}


def census(git_dir: Path, commit: str) -> Counter[str]:
    """Every `TEST`/`TEST_F` of fmt's `test/*.cc` at `commit` (its bundled GoogleTest left out), counted by the form
    of its twin (`string`, `number`, `negated`) or `none`."""
    listed = ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", commit, "test/"]
    paths = [p for p in subprocess.run(listed, capture_output=True, text=True, check=True).stdout.split() if p]
    counts: Counter[str] = Counter()
    for path in paths:
        if not path.endswith(".cc") or path.startswith("test/gtest/"):
            continue
        text = show(git_dir, commit, path)
        src = Source.read(text)
        names = set(gtest_tests(src)) if src is not None else set()
        made: FileTwins | None = make_twins(path, text, names, random.Random(0)) if names else None
        twinned = {twin.name: form(twin.how) for twin in made.twins} if made is not None else {}
        counts.update(twinned.get(name, "none") for name in names)
    return counts


def compile_census(git_dir: Path, commit: str, image: str = "swe-forge-cpp:bookworm") -> dict[str, dict]:
    """Each test file of fmt at `commit` with a twin: whether it compiles, and with every test twinned, and how many
    twins by form (a negated `EXPECT_EQ` needs the operands' `!=`, which a type may lack before C++20)."""
    with tempfile.TemporaryDirectory(prefix="cpp-compile-") as work:
        tree = Path(work)
        archive = f"git --git-dir {git_dir} archive --format=tar {commit} include src test | tar -x -C {tree}"
        subprocess.run(archive, shell=True, check=True)
        forms: dict[str, Counter[str]] = {}
        for path in sorted((tree / "test").glob("*.cc")):
            text = path.read_text(errors="replace")
            src = Source.read(text)
            made = make_twins(path.name, text, set(gtest_tests(src)), random.Random(0)) if src is not None else None
            if made is not None:
                path.with_suffix(".twin.cc").write_bytes(made.content)
                forms[path.name] = Counter(form(twin.how) for twin in made.twins)
        flags = "-std=c++17 -fsyntax-only -w -I include -I test/gtest -I test"
        script = "; ".join(
            f"g++ {flags} test/{name} 2>/dev/null; a=$?; g++ {flags} test/{name[:-3]}.twin.cc 2>/dev/null; "
            f"echo {name} $a $?"
            for name in forms
        )
        run = ["docker", "run", "--rm", "--network", "none", "-v", f"{tree}:/t:ro", "-w", "/t", image, "sh", "-c"]
        done = subprocess.run([*run, script], capture_output=True, text=True, check=True, timeout=3600)
    found = {}
    for line in done.stdout.splitlines():
        name, original, twinned = line.split()
        found[name] = {"compiles": original == "0", "twinned_compiles": twinned == "0", **forms[name]}
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--git-dir", type=Path, default=None, help="a bare clone of fmt (default: the bundle's)")
    parser.add_argument("--compile", action="store_true", help="also compile every twinned test file (Docker)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cpp-rows-") as scratch:
        git_dir = args.git_dir or clone(Path(scratch) / "fmt.git")
        for row in fmt_rows():
            found = row_twins(row, patched_test_files(row, git_dir))
            print(json.dumps({"instance_id": row["instance_id"], "fail_to_pass": fail_to_pass(row), "twins": found}))
        for commit in dict.fromkeys(row["base_commit"] for row in fmt_rows()):
            print(json.dumps({"census_at": commit, **census(git_dir, commit)}))
        if args.compile:
            for name, found in compile_census(git_dir, fmt_rows()[0]["base_commit"]).items():
                print(json.dumps({"file": name, **found}))


if __name__ == "__main__":
    main()
