"""Canaries for `cargo test` (`execution.canaries`): three tests planted right after a FAIL_TO_PASS `#[test]` fn.

libtest's report is the test binary's standard output (JSON events, or `test x ... ok` lines), and package code
runs in that binary: it can print events of its own from a test, a static constructor or a child process, or
re-run the binary and rewrite what it says. No report of a cargo run is out of the forger's reach, so the defence is
to make forging visible. Inserted after the task's own FAIL_TO_PASS test (same module, so same `use`s and
helpers, at its indentation), in an order drawn per run:
- a test that must pass, an `assert_eq!` of two equal numbers;
- a test that must fail: a copy of another `#[test]` fn of the file opened by a failing `assert_eq!`, so it fails
  before the copied body runs and reads like that test (a plain comparison when the file has no other test);
- a twin of the FAIL_TO_PASS test made the same way: it looks like the original and has none of its side effects.
`assert_eq!` expands to a conditional panic, not a diverging expression, so the copied body after it is not
`unreachable_code` (a crate with `#![deny(warnings)]` still builds). Names are the file's own test names with a word
or two swapped. A report where the failing test passed, where the original passed and its twin did not fail, or that
lacks the planted tests while it has the task's, was forged. Tests marked `#[should_panic]` or `#[ignore]` host no
twin: a panic is their pass. A forger that compares bodies up to renaming is not caught (README, threat model).

Functions are found as rustfmt writes them: `#[test]` and `fn name() {` at one indentation, `}` alone at it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from swe_forge_dagster.execution.canaries import NAME_WORD, AppendedCanaries, made_name

_TEST_FN = re.compile(
    r"^(?P<indent>[ \t]*)#\[test\]\n(?P<attrs>(?:(?P=indent)#\[[^\n]*\]\n)*)"
    r"(?P=indent)fn (?P<name>\w+)\(\)(?P<ret>[^{\n]*)\{\n(?P<body>.*?)^(?P=indent)\}$",
    re.M | re.S,
)
_DECLARED = re.compile(r"\bfn (\w+)")
_NO_TWIN = re.compile(r"#\[(?:should_panic|ignore)\b")


def plant_cargo(
    run_files: Sequence[str],
    fail_to_pass: Sequence[str],
    read: Callable[[str], bytes],
    rng: random.Random | None = None,
) -> AppendedCanaries | None:
    """Canaries beside one FAIL_TO_PASS test of a `.rs` file the run builds, or None when no such test is a plain
    `#[test] fn name()` of a readable file."""
    rng = rng or random.SystemRandom()
    by_name: dict[str, list[str]] = {}
    for test_id in fail_to_pass:
        by_name.setdefault(test_id.rsplit("::", 1)[-1], []).append(test_id)
    hosts: list[tuple[str, str, re.Match[str], str]] = []
    texts: dict[str, str] = {}
    for path in run_files:
        if not path.endswith(".rs"):
            continue
        try:
            texts[path] = text = read(path).decode("utf-8")
        except (OSError, ValueError):
            continue
        for match in _TEST_FN.finditer(text):
            if _NO_TWIN.search(match.group("attrs")):
                continue
            hosts += [(path, text, match, test_id) for test_id in by_name.get(match.group("name"), [])]
    if not hosts:
        return None
    path, text, original, test_id = rng.choice(sorted(hosts, key=lambda host: (host[0], host[3])))
    taken = _DECLARED.findall(text)
    names = [m.group("name") for m in _TEST_FN.finditer(text)]
    words = sorted({w.lower() for name in names for w in NAME_WORD.findall(name)}) or ["case", "value"]

    def name() -> str:
        made = _swapped(names, words, taken, rng)
        taken.append(made)
        return made

    passing, failing, twin = name(), name(), name()
    a, b = rng.randrange(2, 900), rng.randrange(900, 2000)
    indent = original.group("indent")
    others = [  # in the original's module (its indentation), not a should_panic test (a panic is its pass)
        m
        for m in _TEST_FN.finditer(text)
        if m.group("name") != original.group("name")
        and m.group("indent") == indent
        and not _NO_TWIN.search(m.group("attrs"))
    ]
    failing_block = _copy(rng.choice(others), failing, a, b) if others else _compare(indent, failing, a, b)
    blocks = [_compare(indent, passing, a, a), failing_block]
    bare, every = list(blocks), [*blocks, _copy(original, twin, a, b)]
    rng.shuffle(bare)
    rng.shuffle(every)
    prefix = test_id[: len(test_id) - len(original.group("name"))]  # `tests::` for a module's test
    at = original.end()
    return AppendedCanaries(
        path,
        _insert(text, at, every).encode(),
        _insert(text, at, bare).encode(),
        prefix + passing,
        prefix + failing,
        test_id,
        prefix + twin,
    )


def _swapped(names: Sequence[str], words: Sequence[str], taken: Sequence[str], rng: random.Random) -> str:
    """One of the file's test names with one or two of its words replaced by other words of its names, not taken."""
    for _attempt in range(1000):
        parts = rng.choice(names).split("_")
        for _ in range(min(len(parts), rng.choice((1, 2)))):
            parts[rng.randrange(len(parts))] = rng.choice(words)
        if (made := "_".join(parts)) not in taken:
            return made
    return made_name(words, taken, 4, rng, "_".join)


def _insert(text: str, at: int, blocks: Sequence[str]) -> str:
    return text[:at] + "".join("\n\n" + block.rstrip("\n") for block in blocks) + text[at:]


def _copy(test: re.Match[str], name: str, got: int, want: int) -> str:
    """`test` under `name` (its attributes kept, its indentation moved to where it lands), opened by a failing
    `assert_eq!`: the copied body never runs."""
    indent = test.group("indent")  # the host's: copies come from the original's module
    head = f"{indent}#[test]\n{test.group('attrs')}{indent}fn {name}(){test.group('ret')}{{\n"
    return head + f"{indent}    assert_eq!({got}, {want});\n{test.group('body')}{indent}}}"


def _compare(indent: str, name: str, got: int, want: int) -> str:
    return f"{indent}#[test]\n{indent}fn {name}() {{\n{indent}    assert_eq!({got}, {want});\n{indent}}}"
