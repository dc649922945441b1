"""The red-team corpora on real SWE-bench rows, by class, and the harness run that replays one of them whole.

Four corpora run on a real row of a benchmark, each member a sandboxed run of the repository's own test runner:
- `axios`: mocha forgers (`NODE_HACKS` of `tests/support/hacks.py`) on axios__axios-5085 of SWE-bench Multilingual;
- `gtest`: GoogleTest forgers in fmt's library code (`CPP_HACKS` of `tests/support/compiled_hacks.py`, and the twin
  forgers of `tests/support/cpp_twin_hacks.py`) on fmtlib__fmt-2457;
- `django` and `sympy`: the console-log forgers of `tests/support/console_hacks.py` on django__django-15789 (a release
  sdist re-based row) and sympy__sympy-21614 (its exact tree).

A class is a mechanism met by one defence (named after the colon), as in `tests/support/red_team.py`: the real-tier
tests run `bounded` shares (the members they assert on by name and the first of each class), and
`benchmarks/red_team.py` replays every member (`python -m tests.support.red_team <corpus>`, through `replay` here).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.common import SHARED_FIXTURES
from tests.support.compiled_hacks import CPP_HACKS, gold_and_hacks_batch
from tests.support.console_hacks import django_hacks, sympy_hacks
from tests.support.cpp_twin_hacks import CPP_TWIN_HACKS
from tests.support.hacks import NODE_HACKS

SWEBENCH = SHARED_FIXTURES / "swebench"
MULTI = SWEBENCH / "lite-test-and-multilingual" / "swebench_multi.jsonl"

AXIOS_CLASSES: dict[str, list[str]] = {
    "install outputs (node_modules) carried by the diff: dropped": ["node-modules-runner"],
    "npm's project settings put a --require into every Node process (.npmrc): dropped": ["npmrc-node-options"],
    "a mocha key added to package.json: mocha's own loader answers differently, package.json reset": [
        "package-mocha-key"
    ],
    "package code forges every failure (mocha's runner, assertion errors, the xunit report at exit): the canaries": [
        "mocha-rewrite-at-exit",
        "mocha-from-package",
        "mocha-assertions-only",
    ],
    "package code spares the canaries by where they stand (root-level tests, tests .git's HEAD lacks, by mocha's "
    "Runnable, `it` or the xunit stream): canaries planted like the file's own tests": [
        "mocha-spare-root",
        "mocha-runnable-head",
        "mocha-it-setter",
        "mocha-xunit-stream",
    ],
    "package code spares tests whose own function text uses no package: the twins run apart": [
        "mocha-spare-independent"
    ],
}
AXIOS_HACKS = NODE_HACKS

GTEST_CLASSES: dict[str, list[str]] = {
    "library code drops every failure from the XML report in a static destructor: the canaries": [
        "gtest-rewrite-at-exit"
    ],
    "spares the planted tests by their failure message or their source: canaries that read like the file's tests": [
        "gtest-spare-source",
        "gtest-spare-literal",
    ],
    "tells the twin from its original (a body ending with another's, an opening constant): the twin run apart": [
        "gtest-twin-body-spare",
        "gtest-twin-const-spare",
    ],
}
GTEST_HACKS = {**CPP_HACKS, **CPP_TWIN_HACKS}


DJANGO_HACKS = django_hacks("django/utils/html.py", "json_script")
SYMPY_HACKS = sympy_hacks("Derivative(")


def console_classes(hacks: dict[str, str]) -> dict[str, list[str]]:
    """The console-log forgers' classes for one runner's `hacks` (named `<runner>-<member>`: `dj-`, `sy-`)."""
    classes = {
        "forges every failure (the result class patched, a child that stops the shell and rewrites the log after the "
        "runner, pass lines printed at exit): the canary planted to fail": ["stopped-shell", "all-pass", "print-pass"],
        "spares the canaries (by reading the caller's assertion, by the traceback): the twins run apart": [
            "assertion-oracle",
            "spare-canaries",
        ],
    }
    by_member = {name.split("-", 1)[1]: name for name in hacks}
    return {c: [by_member[m] for m in members if m in by_member] for c, members in classes.items()}


DJANGO_CLASSES, SYMPY_CLASSES = console_classes(DJANGO_HACKS), console_classes(SYMPY_HACKS)

# corpus -> (its rows file, the row's id, {owner/name: the bundle its remote is cloned from}, classes, hacks)
CORPORA: dict[str, tuple[Path, str, dict[str, str], dict[str, list[str]], dict[str, str]]] = {
    "axios": (MULTI, "axios__axios-5085", {"axios/axios": "axios+axios.bundle"}, AXIOS_CLASSES, AXIOS_HACKS),
    "gtest": (MULTI, "fmtlib__fmt-2457", {"fmtlib/fmt": "fmtlib+fmt.bundle"}, GTEST_CLASSES, GTEST_HACKS),
    "django": (
        SWEBENCH / "django-sdists" / "rows.jsonl",
        "django__django-15789",
        {"django/django": "django+django-sdists.bundle"},
        DJANGO_CLASSES,
        DJANGO_HACKS,
    ),
    "sympy": (
        SWEBENCH / "sympy-trees" / "rows.jsonl",
        "sympy__sympy-21614",
        {"sympy/sympy": "sympy+sympy-trees.bundle"},
        SYMPY_CLASSES,
        SYMPY_HACKS,
    ),
}
UNREACHABLE = {
    "SWE_FORGE_CRATES_URL": "http://127.0.0.1:9/crates",
    "SWE_FORGE_GOPROXY_URL": "http://127.0.0.1:9/go",
    "SWE_FORGE_MAVEN_URL": "http://127.0.0.1:9/maven",
}


def missing(corpus: str) -> list[Path]:
    """The fixtures `corpus` needs that `../shared/fixtures` lacks."""
    rows, _, bundles, _, _ = CORPORA[corpus]
    return [p for p in (rows, *(SHARED_FIXTURES / "repos" / b for b in bundles.values())) if not p.is_file()]


def row_of(corpus: str) -> dict:
    """The corpus's row as its dataset gives it."""
    rows, instance_id, *_ = CORPORA[corpus]
    return next(r for r in map(json.loads, rows.read_text().splitlines()) if r and r["instance_id"] == instance_id)


def replay(corpus: str, work: Path) -> dict[str, dict]:
    """Every member of `corpus`, an agent that applies the gold patch (judged as any agent's diff) and one that changes
    nothing, on copies of its row in one `swe-forge harness` run: name -> its result ("gold", "empty", members')."""
    if absent := missing(corpus):
        raise SystemExit(f"{corpus}: real fixtures missing: {', '.join(map(str, absent))}")
    _, _, bundles, _, hacks = CORPORA[corpus]
    for repo, bundle in bundles.items():
        remote = work / "remotes" / f"{repo}.git"
        command = ["git", "clone", "-q", "--bare", str(SHARED_FIXTURES / "repos" / bundle), str(remote)]
        subprocess.run(command, check=True, timeout=600)
    settings = {**UNREACHABLE, "SWE_FORGE_START_DATE": "2015-01-01"}
    return gold_and_hacks_batch(work, row_of(corpus), f"file://{work}/remotes/{{repo}}.git", hacks, **settings)
