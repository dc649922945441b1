"""How many FAIL_TO_PASS tests of a corpus get a twin run apart, and of which form: the reach of the defence against
code that reads its caller's assertion (`languages.python.twins`), measured on the datasets' own test files.

Why: a twin that expects another value (or another exception) catches an implementation oracle; a negated one
catches forgers but not an oracle that returns the value it reads in its caller's frame; a test with no assertion a
twin can change (`languages.python.assertion_sites`) has none. Per repository of the
corpus (`benchmarks/env_corpus.py`'s SWE-bench rows; `--fixtures` adds re-based rows), each row's test files at its
base commit with its test patch applied (git, no Docker), planted by the runner the repository's files choose
(pytest; Django's `tests/runtests.py`; SymPy's `bin/test`), as the harness plants them:

    .venv/bin/python benchmarks/twin_coverage.py [--fixtures /tmp/fx4] [--each]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from env_corpus import FIXTURES, corpus

from swe_forge_dagster.execution.runners import Runner
from swe_forge_dagster.languages.python.django import DJANGO_RUNNER, RUNTESTS
from swe_forge_dagster.languages.python.runner import PYTEST_RUNNER
from swe_forge_dagster.languages.python.sympy import BIN_TEST, SYMPY_RUNNER
from swe_forge_dagster.languages.python.twins import split_params

DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/", re.M)


def runner_of(tree: Path) -> Runner:
    """The runner the repository's own files choose, as `languages.python` finds it (never by its name)."""
    if (tree / RUNTESTS).is_file():
        return DJANGO_RUNNER
    return SYMPY_RUNNER if (tree / BIN_TEST).is_file() else PYTEST_RUNNER


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fixtures", type=Path, action="append", default=[], help="another fixture root")
    parser.add_argument("--each", action="store_true", help="print each twinned test and how its twin reads")
    args = parser.parse_args()
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    with tempfile.TemporaryDirectory(prefix="twin-coverage-") as tmp:
        trees: dict[str, Path] = {}
        for item in corpus(tuple(args.fixtures)):
            record = item.record
            if record is None:
                continue  # a seed task
            tree = trees.get(item.repo)
            if tree is None:
                tree = trees[item.repo] = Path(tmp) / item.repo.replace("/", "+")
                bundle = item.bundle or FIXTURES / "repos" / f"{item.repo.replace('/', '+')}.bundle"
                subprocess.run(["git", "clone", "-q", str(bundle), str(tree)], check=True, capture_output=True)
            git = ["git", "-C", str(tree)]
            subprocess.run([*git, "checkout", "-q", "-f", record.base_commit], check=True, capture_output=True)
            subprocess.run([*git, "clean", "-qfdx"], check=True, capture_output=True)
            subprocess.run([*git, "apply", "-"], input=record.test_patch.encode(), capture_output=True, check=False)
            runner = runner_of(tree)
            if runner is PYTEST_RUNNER and not any("::" in test for test in record.FAIL_TO_PASS):
                continue  # another language's row (axios, fmt): their packs plant their own
            tally = counts[f"{item.repo} ({runner.name})"]
            tally["rows"] += 1
            tally["tests"] += len({split_params(test)[0] for test in record.FAIL_TO_PASS})  # parameters: one test
            files = [path for path in DIFF_FILE.findall(record.test_patch or "") if (tree / path).is_file()]
            assert runner.plant is not None
            planted = runner.plant(files, record.FAIL_TO_PASS, lambda path, root=tree: (root / path).read_bytes())
            twins = getattr(planted, "twins", ()) if planted is not None else ()
            twinned_row = any(t.tests for t in twins)
            tally["tests with a twin"] += sum(len(t.tests) for t in twins)
            for t in twins:
                for (scope, name), how in zip(t.tests, t.changed, strict=True):
                    # "expects another value (...)", "expects TypeError where ...": a value (or exception) changed
                    tally["changed value" if how.startswith("expects ") else "negated"] += 1
                    if args.each:
                        print(f"  {item.name} {t.path}::{scope}::{name}: {how}")
            tally["rows with a twin"] += twinned_row
    total: Counter[str] = Counter()
    for repo, tally in sorted(counts.items()):
        total.update(tally)
        print(f"{repo:30} {json.dumps(dict(tally))}")
    print(f"{'all':30} {json.dumps(dict(total))}")


if __name__ == "__main__":
    main()
