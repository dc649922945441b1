"""Canaries for `cargo test` (`execution.canaries`): two tests planted right after a FAIL_TO_PASS `#[test]` fn, and
the twins of the FAIL_TO_PASS tests, run apart.

libtest's report is the test binary's standard output (JSON events, or `test x ... ok` lines), and package code
runs in that binary: it can print events of its own from a test, a static constructor or a child process, or
re-run the binary and rewrite what it says. No report of a cargo run is out of the forger's reach, so the defence is
to make forging visible. Inserted after the task's own FAIL_TO_PASS test (same module, so same `use`s and
helpers, at its indentation), in an order drawn per run:
- a test that must pass, an `assert_eq!` of two equal numbers;
- a test that must fail: a copy of another `#[test]` fn of the file (never one that has a twin: its copy would show the
  twin's original beside it) opened by a failing `assert_eq!`, so it fails before the copied body runs and reads like
  that test (a plain comparison when the file has no other test).
`assert_eq!` expands to a conditional panic, not a diverging expression, so a copied body after it is not
`unreachable_code` (a crate with `#![deny(warnings)]` still builds). Names are the file's own test names with a word
or two swapped. A report where the failing test passed, or that lacks the planted tests while it has the task's, was
forged: a forger that passes every failure is caught.

The twins run apart (`harness.verify`, `languages.rust.twins`): in a fourth container, the same files with the same
planted tests, but each FAIL_TO_PASS test that has a check to change is its twin, under its name, in its place, one
value of its last check changed (or the check negated). No process sees a test beside its twin, so package code that
reads the test files and compares bodies, or spares tests that open with a comparison of two constants, finds no copy:
it forges the twin as it forges its original, and a test that passed in the verify run while its twin run apart
passed, was ignored or is missing was forged (`tests/test_rust_twins_red_team.py`). No test runs twice in one binary
either, so a test that cannot run beside itself (a one-time global logger, a fixed file) is judged as it is.
When no FAIL_TO_PASS test has a check a twin can change (tokio's trait bounds checked at compile time), the twin is
planted beside the original as before, at a random place: a copy opened by a failing `assert_eq!` (or, in a file whose
tokens could not be read, the original with its last one-line assertion negated); a forger that compares bodies tells
it, and the sanity run shows a test that cannot run beside its copy (it is redone without canaries). Tests marked
`#[should_panic]` or `#[ignore]` host no canaries and get no twin: a panic is their pass.

The planted tests are placed where rustfmt writes functions: `#[test]` and `fn name() {` at one indentation, `}` alone
at it; the twins are found by reading the file's tokens (`languages.rust.source`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from swe_forge_dagster.execution.canaries import (
    NAME_WORD,
    AppendedCanaries,
    TwinsApart,
    another_string,
    made_name,
    split_top_level,
)
from swe_forge_dagster.languages.rust.twins import apply, twins_by_file

_TEST_FN = re.compile(
    r"^(?P<indent>[ \t]*)(?P<pre>(?:(?:#\[(?!test\])[^\n]*|//[^\n]*)\n(?P=indent))*)#\[test\]\n"
    r"(?P<attrs>(?:(?P=indent)(?:#\[[^\n]*|//[^\n]*)\n)*)"
    r"(?P=indent)fn (?P<name>\w+)\(\)(?P<ret>[^{\n]*)\{\n(?P<body>.*?)^(?P=indent)\}$",
    re.M | re.S,
)
"""A `#[test]` fn as rustfmt writes it, with the attributes and comments written before and after `#[test]`."""
_DECLARED = re.compile(r"\bfn (\w+)")
_NO_TWIN = re.compile(r"#\[(?:should_panic|ignore)\b")


CargoCanaries = TwinsApart
"""This runner's canaries with twins run apart (`execution.canaries.TwinsApart`)."""


def plant_cargo(
    run_files: Sequence[str],
    fail_to_pass: Sequence[str],
    read: Callable[[str], bytes],
    rng: random.Random | None = None,
) -> CargoCanaries | AppendedCanaries | None:
    """Canaries beside one FAIL_TO_PASS test of a `.rs` file the run builds, and the twins of every FAIL_TO_PASS test
    that can have one, run apart (`CargoCanaries`); when none can, the canaries with a twin beside its original
    (`AppendedCanaries`). None when no FAIL_TO_PASS test is a plain `#[test] fn name()` of a readable file."""
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
            if _NO_TWIN.search(match.group("pre") + match.group("attrs")):
                continue
            nested = bool(match.group("indent"))  # a test in a module has a module path in its id
            ids = [test_id for test_id in by_name.get(match.group("name"), []) if ("::" in test_id) == nested]
            hosts += [(path, text, match, test_id) for test_id in ids]
    if not hosts:
        return None
    twins = twins_by_file(texts, fail_to_pass, rng)
    path, text, original, test_id = rng.choice(sorted(hosts, key=lambda host: (host[0], host[3])))
    taken = _DECLARED.findall(text)
    names = [m.group("name") for m in _TEST_FN.finditer(text)]
    words = sorted({w.lower() for name in names for w in NAME_WORD.findall(name)}) or ["case", "value"]

    def name() -> str:
        made = _swapped(names, words, taken, rng)
        taken.append(made)
        return made

    passing, failing = name(), name()
    a, b = rng.randrange(2, 900), rng.randrange(900, 2000)
    indent = original.group("indent")
    twinned = {twin.name.rsplit("::", 1)[-1] for twin in twins[path].twins} if path in twins else set()
    others = [  # in the original's module (its indentation), not a should_panic test (a panic is its pass), and
        m  # never a test with a twin: its copy would show the twin's original beside it in the run apart
        for m in _TEST_FN.finditer(text)
        if m.group("name") != original.group("name")
        and m.group("name") not in twinned
        and m.group("indent") == indent
        and not _NO_TWIN.search(m.group("pre") + m.group("attrs"))
    ]
    failing_block = _copy(rng.choice(others), failing, a, b) if others else _compare(indent, failing, a, b)
    blocks = [_compare(indent, passing, a, a), failing_block]
    bare = list(blocks)
    rng.shuffle(bare)
    at = original.end()
    prefix = test_id[: len(test_id) - len(original.group("name"))]  # `tests::` for a module's test
    if twins:
        apart = {twin_path: made.content for twin_path, made in twins.items()}
        edits = twins[path].edits if path in twins else ()
        apart[path] = apply(text, [*edits, (at, at, _insert("", 0, bare))]).encode()
        every_twin = tuple(twin for _, made in sorted(twins.items()) for twin in made.twins)
        content, ids = _insert(text, at, bare).encode(), (prefix + passing, prefix + failing)
        return CargoCanaries(path, content, *ids, every_twin, tuple(sorted(apart.items())))
    twin = name()
    changed = _changed(original, twin, rng)
    twin_block = changed or _copy(original, twin, a, b)
    if rng.random() < 0.5:  # the twin before the task's test or after it: no order tells which is which
        planted = _insert(text, at, bare)
        planted = planted[: original.start()] + twin_block + "\n\n" + planted[original.start() :]
    else:
        every = list(bare)
        every.insert(rng.randrange(len(every) + 1), twin_block)
        planted = _insert(text, at, every)
    return AppendedCanaries(
        path,
        planted.encode(),
        _insert(text, at, bare).encode(),
        prefix + passing,
        prefix + failing,
        test_id,
        prefix + twin,
        twin_always_fails=changed is None,
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
    head = f"{indent}{test.group('pre')}#[test]\n{test.group('attrs')}{indent}fn {name}(){test.group('ret')}{{\n"
    return head + f"{indent}    assert_eq!({got}, {want});\n{test.group('body')}{indent}}}"


_ASSERTION = re.compile(r"(?P<macro>assert_eq|assert_ne|assert)!\(")
_NEGATED = {"assert_eq": "assert_ne", "assert_ne": "assert_eq"}


def _changed(test: re.Match[str], name: str, rng: random.Random) -> str | None:
    """`test` under `name` with the last assertion of its own block changed, so it fails whenever the test passes
    and reads like it otherwise: an `assert_eq!` with one integer or plain string literal expects another, any other
    is negated (`assert_eq!` <-> `assert_ne!`, `assert!(x)` -> `assert!(!(x))`). None when that assertion is not a
    whole line of the block (so might not run) or a `return` or `?` comes before it."""
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
        if index > 0 and lines[index - 1].strip().startswith("#["):
            return None  # `#[cfg(...)]` on the assertion: it may run in neither
        arguments = line[match.end() : end - 1]
        if match.group("macro") == "assert_eq" and (changed := _changed_literal(arguments, rng)) is not None:
            lines[index] = f"{inner}assert_eq!({changed});"
        elif match.group("macro") == "assert":
            if (parts := split_top_level(arguments, quotes='"')) is None or len(parts) != 1:
                return None  # assert!(x, "message {}", y): keep it simple
            lines[index] = f"{inner}assert!(!({arguments}));"
        else:
            lines[index] = f"{inner}{_NEGATED[match.group('macro')]}!({arguments});"
        head = f"{indent}{test.group('pre')}#[test]\n{test.group('attrs')}{indent}fn {name}(){test.group('ret')}{{\n"
        return head + "\n".join(lines) + f"{indent}}}"
    return None


_LITERAL = re.compile(
    r"""\s*(?:(?P<number>-?\d{1,9})(?P<suffix>[iu](?:8|16|32|64|128|size))?|"(?P<text>[^"\\\n{}]*)")\s*"""
)


def _changed_literal(arguments: str, rng: random.Random) -> str | None:
    """`left, right` with the one that is an integer or plain string literal changed to another, or None when
    neither or both are."""
    parts = split_top_level(arguments, quotes='"')
    if parts is None or len(parts) != 2:
        return None
    literals = [_LITERAL.fullmatch(part) for part in parts]
    if sum(m is not None for m in literals) != 1:
        return None
    index = 0 if literals[0] is not None else 1
    literal = literals[index]
    assert literal is not None
    if literal.group("number") is not None:
        value = int(literal.group("number"))  # towards zero, so `255u8` never overflows its type
        step = rng.randrange(1, min(value, 9) + 1) if value > 0 else -rng.randrange(1, 10)
        new = str(value - step) + (literal.group("suffix") or "")
        start, stop = (
            literal.start("number"),
            literal.end("suffix") if literal.group("suffix") else literal.end("number"),
        )
    else:
        text = literal.group("text")
        new = '"' + another_string(text, rng) + '"'
        start, stop = literal.start("text") - 1, literal.end("text") + 1
    parts[index] = parts[index][:start] + new + parts[index][stop:]
    return ",".join(parts)


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


def _compare(indent: str, name: str, got: int, want: int) -> str:
    return f"{indent}#[test]\n{indent}fn {name}() {{\n{indent}    assert_eq!({got}, {want});\n{indent}}}"
