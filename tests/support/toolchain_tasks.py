"""Small real tasks for the runners no offline fixture covers with a whole task: jest and cargo.

Each is a git repository made here (one base commit), a gold patch and a test patch, and its SWE-bench instance row,
as a merged pull request would give them: `clamp` returns the lower bound when the value is above the upper one;
the fix and the tests that prove it (FAIL_TO_PASS) beside older tests that pass both times (PASS_TO_PASS). The
environment is found from the manifests on the toolchain image, like any task's: jest 29.7.0 from the npm
registry on `swe-forge-node:bookworm`, with a set-up file its `package.json` names (`jest.setup.js`, which no rule on
names calls configuration); a crate with no dependencies on Debian's cargo (`swe-forge-rust:bookworm`).
The red team (`tests/support/toolchain_hacks.py`) replays its cheating agents on them.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ToolchainTask:
    repo: str
    base: dict[str, str]
    fix: dict[str, str]
    tests: dict[str, str]
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    problem_statement: str = "clamp returns the lower bound for a value above the range; it must return the upper."


JEST_CLAMP_BUGGY = """'use strict';

/** `value` kept within [low, high]. */
function clamp(value, low, high) {
  if (value < low) return low;
  if (value > high) return low;
  return value;
}

/** The midpoint of two numbers. */
function midpoint(a, b) {
  return (a + b) / 2;
}

module.exports = { clamp, midpoint };
"""
JEST_TESTS_BASE = """'use strict';

const { clamp, midpoint } = require('../src/range');

describe('clamp', () => {
  test('keeps a value inside the range', () => {
    expect(clamp(5, 0, 10)).toBe(5);
  });

  test('raises a value below the range', () => {
    expect(clamp(-3, 0, 10)).toBe(0);
  });
});

describe('midpoint', () => {
  test('halves the sum', () => {
    expect(midpoint(2, 8)).toBe(5);
  });

  test('works on negative numbers', () => {
    expect(midpoint(-4, -2)).toBe(-3);
  });
});
"""
JEST_TASK = ToolchainTask(
    repo="acme-labs/rangekit",
    base={
        ".gitignore": "node_modules/\n",
        "package.json": json.dumps(
            {
                "name": "rangekit",
                "version": "1.0.0",
                "main": "src/range.js",
                "scripts": {"test": "jest"},
                "license": "MIT",
                "devDependencies": {"jest": "29.7.0"},
                "jest": {"setupFilesAfterEnv": ["<rootDir>/jest.setup.js"]},
            },
            indent=2,
        )
        + "\n",
        "jest.setup.js": "// Every test file: no test runs longer than ten seconds.\njest.setTimeout(10000);\n",
        "src/range.js": JEST_CLAMP_BUGGY,
        "__tests__/range.test.js": JEST_TESTS_BASE,
    },
    fix={"src/range.js": JEST_CLAMP_BUGGY.replace("if (value > high) return low;", "if (value > high) return high;")},
    tests={
        "__tests__/range.test.js": JEST_TESTS_BASE.replace(
            "    expect(clamp(-3, 0, 10)).toBe(0);\n  });\n",
            "    expect(clamp(-3, 0, 10)).toBe(0);\n  });\n\n"
            "  test('lowers a value above the range', () => {\n    expect(clamp(42, 0, 10)).toBe(10);\n  });\n\n"
            "  test('keeps the upper bound of a one-point range', () => {\n    expect(clamp(7, 3, 3)).toBe(3);\n"
            "    expect(clamp(9, 1, 4)).toBe(4);\n  });\n",
        )
    },
    fail_to_pass=("lowers a value above the range", "keeps the upper bound of a one-point range"),
    pass_to_pass=(
        "keeps a value inside the range",
        "raises a value below the range",
        "halves the sum",
        "works on negative numbers",
    ),
)

RUST_LIB_BUGGY = """//! Numbers kept within a range.

/// `value` kept within `[low, high]`.
pub fn clamp(value: i64, low: i64, high: i64) -> i64 {
    if value < low {
        return low;
    }
    if value > high {
        return low;
    }
    value
}

/// The midpoint of two numbers, rounded towards zero.
pub fn midpoint(a: i64, b: i64) -> i64 {
    (a + b) / 2
}
"""
RUST_TESTS_BASE = """use rangekit::{clamp, midpoint};

#[test]
fn keeps_a_value_inside_the_range() {
    assert_eq!(clamp(5, 0, 10), 5);
}

#[test]
fn raises_a_value_below_the_range() {
    assert_eq!(clamp(-3, 0, 10), 0);
}

#[test]
fn halves_the_sum() {
    assert_eq!(midpoint(2, 8), 5);
}
"""
RUST_TASK = ToolchainTask(
    repo="acme-labs/rangekit-rs",
    base={
        ".gitignore": "/target\n",
        "Cargo.toml": '[package]\nname = "rangekit"\nversion = "0.1.0"\nedition = "2018"\nlicense = "MIT"\n',
        "src/lib.rs": RUST_LIB_BUGGY,
        "tests/range.rs": RUST_TESTS_BASE,
    },
    fix={
        "src/lib.rs": RUST_LIB_BUGGY.replace(
            "    if value > high {\n        return low;", "    if value > high {\n        return high;"
        )
    },
    tests={
        "tests/range.rs": RUST_TESTS_BASE
        + "\n#[test]\nfn lowers_a_value_above_the_range() {\n    assert_eq!(clamp(42, 0, 10), 10);\n}\n"
        + "\n#[test]\nfn keeps_the_upper_bound_of_a_point_range() {\n    assert_eq!(clamp(7, 3, 3), 3);\n"
        + "    assert_eq!(clamp(9, 1, 4), 4);\n}\n"
    },
    fail_to_pass=("lowers_a_value_above_the_range", "keeps_the_upper_bound_of_a_point_range"),
    pass_to_pass=("halves_the_sum", "keeps_a_value_inside_the_range", "raises_a_value_below_the_range"),
)


def _git(work: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work), *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def _diff(work: Path, files: dict[str, str]) -> str:
    """The patch that writes `files` over the base tree (git's unified diff), the tree left at base."""
    for path, text in files.items():
        (work / path).write_text(text)
    patch = _git(work, "diff")
    _git(work, "checkout", "--", ".")
    return patch


def build_task(root: Path, task: ToolchainTask, language: str) -> tuple[dict, str]:
    """`root/remotes/<repo>.git` holding the base commit, and the task's SWE-bench instance row: (row, git URL
    template for `--git-url`)."""
    work = root / "work" / task.repo
    work.mkdir(parents=True)
    _git(work, "init", "-q", "-b", "main")
    for path, text in task.base.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(text)
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "base")
    base = _git(work, "rev-parse", "HEAD").strip()
    row = {
        "instance_id": task.repo.replace("/", "__") + "-7",
        "repo": task.repo,
        "base_commit": base,
        "patch": _diff(work, task.fix),
        "test_patch": _diff(work, task.tests),
        "problem_statement": task.problem_statement,
        "hints_text": "",
        "created_at": "2026-11-01T12:00:00Z",
        "version": "1.0",
        "environment_setup_commit": base,
        "FAIL_TO_PASS": list(task.fail_to_pass),
        "PASS_TO_PASS": list(task.pass_to_pass),
        "language": language,
    }
    remote = root / "remotes" / f"{task.repo}.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(remote)], check=True)
    return row, f"file://{root}/remotes/{{repo}}.git"
