"""A small Ruby repository written here (a real git history: a bug, its fix and its tests), as a bare remote and a
SWE-bench row, as the project writes its twins' repositories.

`Stats.mean` divides integers, so the mean of `[1, 2]` is 1; the fix divides as floats. The test patch adds
`TestStats#test_mean_of_two` (fails before the fix, passes after); `TestStats#test_total` passes throughout.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

REPO = "acme-labs/rubystats"
BASE = {
    "Gemfile": 'source "https://rubygems.org"\n',
    "README.md": "# rubystats\n\nSmall statistics helpers.\n",
    "lib/stats.rb": (
        "module Stats\n"
        "  def self.total(xs)\n    xs.sum\n  end\n\n"
        "  def self.mean(xs)\n    xs.sum / xs.size\n  end\nend\n"
    ),
    "test/test_stats.rb": (
        'require "minitest/autorun"\nrequire "stats"\n\n'
        "class TestStats < Minitest::Test\n"
        "  def test_total\n    assert_equal 6, Stats.total([1, 2, 3])\n  end\nend\n"
    ),
}
FIX = {"lib/stats.rb": BASE["lib/stats.rb"].replace("xs.sum / xs.size", "xs.sum.to_f / xs.size")}
TESTS = {
    "test/test_stats.rb": BASE["test/test_stats.rb"].replace(
        "  end\nend\n", "  end\n\n  def test_mean_of_two\n    assert_equal 1.5, Stats.mean([1, 2])\n  end\nend\n"
    )
}


def _git(work: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work), *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def _write(work: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)


def write_ruby_world(root: Path) -> tuple[Path, str]:
    """(the SWE-bench JSONL of the one row, the clone URL template of its bare remote under `root`)."""
    work = root / "work"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    _write(work, BASE)
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "stats: total and mean")
    base = _git(work, "rev-parse", "HEAD").strip()
    _write(work, FIX)
    patch = _git(work, "diff")
    _git(work, "checkout", "-q", "--", ".")
    _write(work, TESTS)
    test_patch = _git(work, "diff")
    _git(work, "checkout", "-q", "--", ".")
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(root / "remotes" / f"{REPO}.git")], check=True)
    row = {
        "instance_id": "acme-labs__rubystats-1",
        "repo": REPO,
        "base_commit": base,
        "patch": patch,
        "test_patch": test_patch,
        "problem_statement": "Stats.mean([1, 2]) returns 1 instead of 1.5: the mean divides integers.",
        "hints_text": "",
        "created_at": "2026-11-01T00:00:00Z",
        "version": "1.0",
        "environment_setup_commit": base,
        "FAIL_TO_PASS": ["TestStats#test_mean_of_two"],
        "PASS_TO_PASS": ["TestStats#test_total"],
    }
    instances = root / "ruby.jsonl"
    instances.write_text(json.dumps(row) + "\n")
    return instances, f"file://{root}/remotes/{{repo}}.git"
