"""Canaries for `cargo test` (`execution.canaries`): three tests planted right after a FAIL_TO_PASS `#[test]` fn.

libtest's report is the test binary's standard output (JSON events, or `test x ... ok` lines), and package code
runs in that binary: it can print events of its own from a test, a static constructor or a child process, or
re-run the binary and rewrite what it says. No report of a cargo run is out of the forger's reach, so the defence is
to make forging visible. Inserted after the task's own FAIL_TO_PASS test (same module, so same `use`s and
helpers, at its indentation), in an order drawn per run:
- a test that must pass, an `assert_eq!` of two equal numbers;
- a test that must fail: a copy of another `#[test]` fn of the file opened by a failing `assert_eq!`, so it fails
  before the copied body runs and reads like that test (a plain comparison when the file has no other test);
- a twin of the FAIL_TO_PASS test with the last assertion of its block negated (`assert_eq!` <-> `assert_ne!`,
  `assert!(x)` -> `assert!(!(x))`): it reads like the original, the same calls and values, and fails whenever the
  original passes. A forger that flips failures (or failures of tests that do not open with a comparison of two
  literals) flips the twin too. When the last statement is not a whole-line assertion, the twin is a copy opened by
  a failing `assert_eq!` instead.
`assert_eq!` expands to a conditional panic, not a diverging expression, so a copied body after it is not
`unreachable_code` (a crate with `#![deny(warnings)]` still builds). Names are the file's own test names with a word
or two swapped. A report where the failing test passed, where the original passed and its twin did not fail, or
that lacks the planted tests while it has the task's, was forged. Tests marked `#[should_panic]` or `#[ignore]` host
no twin: a panic is their pass. libtest runs tests on parallel threads, so the negated twin runs the original's body
beside it: a test that races a fixed file with itself can then fail, which the sanity run shows (it is redone
without canaries). A forger that compares bodies up to renaming and one negated assertion is not caught (README,
threat model).

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
    bare, every = list(blocks), [*blocks, _negated(original, twin) or _copy(original, twin, a, b)]
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


_ASSERTION = re.compile(r"(?P<macro>assert_eq|assert_ne|assert)!\(")
_NEGATED = {"assert_eq": "assert_ne", "assert_ne": "assert_eq"}


def _negated(test: re.Match[str], name: str) -> str | None:
    """`test` under `name` with the last assertion of its own block negated (`assert_eq!` <-> `assert_ne!`,
    `assert!(x)` -> `assert!(!(x))`), so it fails whenever the test passes and reads like it otherwise; None when
    that assertion is not a whole line of the block (so might not run) or a `return` comes before it."""
    indent, body = test.group("indent"), test.group("body")
    lines = body.split("\n")
    inner = indent + "    "
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        if not line.startswith(inner) or line[len(inner) : len(inner) + 1].isspace():
            continue
        match = _ASSERTION.match(line, len(inner))
        end = _macro_end(line, match.end() - 1) if match else None
        if match is None or end is None or line[end:].strip() != ";":
            return None  # the block's last statement is not a whole-line assertion: no safe negation
        if re.search(r"\breturn\b|\?", "\n".join(lines[:index])):
            return None
        arguments = line[match.end() : end - 1]
        if match.group("macro") == "assert":
            if _top_level_commas(arguments):
                return None  # assert!(x, "message {}", y): keep it simple
            negated = f"{inner}assert!(!({arguments}));"
        else:
            negated = f"{inner}{_NEGATED[match.group('macro')]}!({arguments});"
        lines[index] = negated
        head = f"{indent}#[test]\n{test.group('attrs')}{indent}fn {name}(){test.group('ret')}{{\n"
        return head + "\n".join(lines) + f"{indent}}}"
    return None


def _macro_end(line: str, open_paren: int) -> int | None:
    """The index after the `)` closing the `(` at `open_paren` in a one-line macro call (strings skipped)."""
    depth, index, quoted = 0, open_paren, False
    while index < len(line):
        char = line[index]
        if quoted:
            if char == "\\":
                index += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                return index + 1
        index += 1
    return None


def _top_level_commas(arguments: str) -> bool:
    depth, quoted, previous = 0, False, ""
    for char in arguments:
        if quoted:
            quoted = not (char == '"' and previous != "\\")
        elif char == '"':
            quoted = True
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            return True
        previous = char
    return False


def _compare(indent: str, name: str, got: int, want: int) -> str:
    return f"{indent}#[test]\n{indent}fn {name}() {{\n{indent}    assert_eq!({got}, {want});\n{indent}}}"
