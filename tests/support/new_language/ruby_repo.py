"""A small Ruby repository written here (a real git history: a bug, its fix and its tests), as a bare remote and a
SWE-bench row, built the way the other toolchains' small tasks are (`toolchain_tasks.build_task`).

`Stats.mean` divides integers, so the mean of `[1, 2]` is 1; the fix divides as floats. The test patch adds
`TestStats#test_mean_of_two` (fails before the fix, passes after); `TestStats#test_total` passes throughout.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.toolchain_tasks import ToolchainTask, build_task

TEST_FILE = (
    'require "minitest/autorun"\nrequire "stats"\n\n'
    "class TestStats < Minitest::Test\n"
    "  def test_total\n    assert_equal 6, Stats.total([1, 2, 3])\n  end\nend\n"
)
STATS = (
    "module Stats\n  def self.total(xs)\n    xs.sum\n  end\n\n  def self.mean(xs)\n    xs.sum / xs.size\n  end\nend\n"
)
RUBY_STATS = ToolchainTask(
    repo="acme-labs/rubystats",
    base={
        "Gemfile": 'source "https://rubygems.org"\n',
        "README.md": "# rubystats\n\nSmall statistics helpers.\n",
        "lib/stats.rb": STATS,
        "test/test_stats.rb": TEST_FILE,
    },
    fix={"lib/stats.rb": STATS.replace("xs.sum / xs.size", "xs.sum.to_f / xs.size")},
    tests={
        "test/test_stats.rb": TEST_FILE.replace(
            "  end\nend\n", "  end\n\n  def test_mean_of_two\n    assert_equal 1.5, Stats.mean([1, 2])\n  end\nend\n"
        )
    },
    fail_to_pass=("TestStats#test_mean_of_two",),
    pass_to_pass=("TestStats#test_total",),
    problem_statement="Stats.mean([1, 2]) returns 1 instead of 1.5: the mean divides integers.",
)


def write_ruby_world(root: Path) -> tuple[Path, str]:
    """(the SWE-bench JSONL of the one row, the clone URL template of its bare remote under `root`)."""
    row, git_url = build_task(root, RUBY_STATS, "Ruby")
    instances = root / "ruby.jsonl"
    instances.write_text(json.dumps(row) + "\n")
    return instances, git_url
