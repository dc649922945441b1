"""The corpus benchmark (`benchmarks/env_corpus.py`, issue 22 item 4): which instances it holds, and how it
classes a failure (the instance's: needs the internet; else ours) and counts the rate. Fast: nothing is run."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter

import pytest

from swe_forge_dagster.tasks.revalidate_instances import SUPERSET
from tests.support.common import REPO_ROOT, SHARED_FIXTURES

spec = importlib.util.spec_from_file_location("env_corpus", REPO_ROOT / "benchmarks" / "env_corpus.py")
assert spec is not None and spec.loader is not None
env_corpus = importlib.util.module_from_spec(spec)
sys.modules.setdefault("env_corpus", env_corpus)  # its dataclasses look their module up
spec.loader.exec_module(env_corpus)


def test_the_corpus_is_every_instance_feasible_offline_in_the_fixtures() -> None:
    if not (SHARED_FIXTURES / "swebench").is_dir():
        pytest.skip(f"fixtures absent: {SHARED_FIXTURES}")
    items = env_corpus.corpus()
    swebench = SHARED_FIXTURES / "swebench"
    rebased = {"django/django": ("django-sdists", 14), "sympy/sympy": ("sympy-trees", 13)}
    present = {
        repo: count for repo, (folder, count) in rebased.items() if (swebench / folder / "rows.jsonl").is_file()
    }  # each counted where its fixture is there
    assert Counter(i.repo for i in items) == present | {
        "pytest-dev/pytest": 17,
        "psf/requests": 6,
        "pylint-dev/pylint": 6,
        "pallets/flask": 3,
        "marshmallow-code/marshmallow": 2,
        "fmtlib/fmt": 2,
        "axios/axios": 1,
        "tox-dev/filelock": 1,
        "noi-techpark/opendatahub-gtfs-api": 1,
    }
    shared = SHARED_FIXTURES / "repos"
    assert all((i.bundle or shared / f"{i.repo.replace('/', '+')}.bundle").is_file() for i in items)


def test_failures_are_classed_and_the_rate_leaves_out_the_instances_own() -> None:
    net = {"status": "not_judgeable", "reason": "every FAIL_TO_PASS test is set aside: needs a network host"}
    fine = {"status": "valid"}
    assert env_corpus.failures(fine, {"status": "resolved"}, {"status": "unresolved"}) == []
    (offline,) = env_corpus.failures(net, {"status": "resolved"}, {"status": "unresolved"})
    assert offline["whose"] == "instance"
    (broken,) = env_corpus.failures({"status": "invalid", "reason": "x"}, {"status": "resolved"}, {"status": "x"})
    assert broken["whose"] == "ours"
    superset = {"status": "changed", "reason": f"P2P 1 / 2; {SUPERSET}; not judged here: 1 needs a network host"}
    (lists,) = env_corpus.failures(superset, {"status": "resolved"}, {"status": "unresolved"})
    assert lists["whose"] == "dataset"  # counted as a miss, not left out
    rows = [
        {"ok": True, "failures": [], "llm_calls": 0},
        {"ok": False, "failures": [offline], "llm_calls": 0},
        {"ok": False, "failures": [broken], "llm_calls": 0},
        {"ok": False, "failures": [lists], "llm_calls": 0},
    ]
    assert env_corpus.rate(rows).startswith("1/3 feasible offline") and "1 not judgeable offline" in env_corpus.rate(
        rows
    )
