"""How many FAIL_TO_PASS tests of a corpus get a twin run apart, and of which form: the reach of the defence against
code that reads its caller's assertion (`languages.python.twins`), measured on the datasets' own test files.

Why: a twin that expects another value catches an implementation oracle; a negated one catches forgers but not an
oracle that recognises negation; a test whose last statement is not an assertion has none. Per repository of the
corpus (`benchmarks/env_corpus.py`'s SWE-bench rows with pytest ids; `--fixtures` adds re-based rows), each row's
test files at its base commit with its test patch applied (git, no Docker):

    .venv/bin/python benchmarks/twin_coverage.py [--fixtures /tmp/fx4]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

from env_corpus import FIXTURES, corpus

from swe_forge_dagster.languages.python.twins import make_twins


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fixtures", type=Path, action="append", default=[], help="another fixture root")
    args = parser.parse_args()
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    with tempfile.TemporaryDirectory(prefix="twin-coverage-") as tmp:
        trees: dict[str, Path] = {}
        for item in corpus(tuple(args.fixtures)):
            record = item.record
            if record is None or not any("::" in test for test in record.FAIL_TO_PASS):
                continue  # a seed task, or another runner's ids (Django's, SymPy's)
            tree = trees.get(item.repo)
            if tree is None:
                tree = trees[item.repo] = Path(tmp) / item.repo.replace("/", "+")
                bundle = item.bundle or FIXTURES / "repos" / f"{item.repo.replace('/', '+')}.bundle"
                subprocess.run(["git", "clone", "-q", str(bundle), str(tree)], check=True, capture_output=True)
            git = ["git", "-C", str(tree)]
            subprocess.run([*git, "checkout", "-q", "-f", record.base_commit], check=True, capture_output=True)
            subprocess.run([*git, "clean", "-qfdx"], check=True, capture_output=True)
            subprocess.run([*git, "apply", "-"], input=record.test_patch.encode(), capture_output=True, check=False)
            tally = counts[item.repo]
            tally["rows"] += 1
            twinned_row = False
            for path in sorted({test.split("::", 1)[0] for test in record.FAIL_TO_PASS if "::" in test}):
                ids = [test for test in record.FAIL_TO_PASS if test.startswith(f"{path}::")]
                names = {
                    (test.split("::")[1] if test.count("::") == 2 else "", test.rsplit("::", 1)[1].split("[")[0])
                    for test in ids
                }
                tally["tests"] += len(names)
                file = tree / path
                twins = make_twins(path, file.read_bytes(), ids, random.Random(0)) if file.is_file() else None
                if twins is None:
                    continue
                twinned_row = True
                for how in twins.changed:
                    tally["changed value" if how == "expects another value" else "negated"] += 1
            tally["rows with a twin"] += twinned_row
    total: Counter[str] = Counter()
    for repo, tally in sorted(counts.items()):
        total.update(tally)
        print(f"{repo:30} {json.dumps(dict(tally))}")
    print(f"{'all':30} {json.dumps(dict(total))}")


if __name__ == "__main__":
    main()
