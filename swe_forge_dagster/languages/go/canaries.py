"""Canaries for `go test -json` (`execution.canaries`): tests appended to the file of a FAIL_TO_PASS test, and its
twins run apart.

`go test -json` reads the test binary's standard output, and package code runs in that binary before any test
(an `init`): it can print results of its own, or run the real tests in a child copy of the binary and rewrite
what the child says (Go 1.20's framing marks which lines the testing package wrote, and a rewrite keeps the
mark). No report of a Go test run is out of the forger's reach, so the defence is to make forging visible. Appended
to the task's own test file (same package, imports and helpers), in an order drawn per run:
- a test that must pass, an ordinary `got, want` comparison;
- a test that must fail: a copy of another test of the file (never one that has a twin: its copy would show the
  twin's original beside it), opened by the same comparison made fatal (`t.Fatalf`), so it fails before the copied
  body runs and uses the package as that test does (a plain comparison when the file has no other test); its
  `*testing.T` parameter is renamed, so no statement reads like the original's.
Names are made from the words of the file's own test names (`TestParseEmptyInput` style). A report where the
failing test passed, or that lacks the planted tests while it has others, was forged: a forger that passes every
failure, or every failure of the files the task changed, is caught.

The twins run apart (`harness.verify`, `languages.go.twins`): in a fourth container, the same files with the same
planted tests, but each FAIL_TO_PASS test that has a check to change is its twin, under its name, in its place, one
value of its last check changed (or the check negated). No process sees a test beside its twin, so code under test
that parses the test files and compares bodies (up to renaming the `*testing.T`), or spares tests that open with a
constant comparison, finds no copy: it forges the twin as it forges its original, and a test that passed in the
verify run while its twin run apart passed, was skipped or is missing was forged (`tests/test_go_twins_red_team.py`).
When no FAIL_TO_PASS test has a check a twin can change, the twin is appended beside the original as before: a copy
opened by the failing comparison, with the `*testing.T` renamed (a forger comparing bodies up to renaming tells it).

Top-level functions are found as `gofmt` writes them: `func Name(t *testing.T) {` and a `}` alone on a line at
column 0. A file the sanity run cannot compile with them runs without canaries (`harness.run`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from swe_forge_dagster.execution.canaries import NAME_WORD, AppendedCanaries, TwinsApart, made_name
from swe_forge_dagster.execution.runners import anchored
from swe_forge_dagster.languages.go.twins import twins_by_file

_FUNCTION = re.compile(r"^func (?P<name>Test\w*)\((?P<t>\w+) \*testing\.T\) \{\n(?P<body>.*?)^\}$", re.M | re.S)
_DECLARED = re.compile(r"^func (?:\([^)]*\) )?(\w+)", re.M)


GoCanaries = TwinsApart
"""This runner's canaries with twins run apart (`execution.canaries.TwinsApart`)."""


def plant_go(
    run_files: Sequence[str],
    fail_to_pass: Sequence[str],
    read: Callable[[str], bytes],
    rng: random.Random | None = None,
) -> GoCanaries | AppendedCanaries | None:
    """Canaries in the `_test.go` file of one FAIL_TO_PASS test and the twins of every FAIL_TO_PASS test that can
    have one (`GoCanaries`); when none can, the canaries with a twin appended beside its original
    (`AppendedCanaries`). None when no FAIL_TO_PASS test is a plain top-level `func TestX(t *testing.T)` of a
    readable test file."""
    rng = rng or random.SystemRandom()
    wanted = {test_id.split("/", 1)[0] for test_id in fail_to_pass}
    taken: list[str] = []
    texts: dict[str, str] = {}
    hosts: list[tuple[str, str, re.Match[str]]] = []
    for path in run_files:
        if not path.endswith("_test.go"):
            continue
        try:
            text = read(path).decode("utf-8")
        except (OSError, ValueError):
            continue
        taken += _DECLARED.findall(text)
        found = [(path, text, m) for m in _FUNCTION.finditer(text) if m.group("name") in wanted]
        texts |= {path: text} if found else {}
        hosts += found
    if not hosts:
        return None
    twins = twins_by_file(texts, wanted, rng)
    twinned = {twin.name for made in twins.values() for twin in made.twins}
    path, text, original = rng.choice(sorted(hosts, key=lambda host: (host[0], host[2].group("name"))))
    words = [w for name in taken if name.startswith("Test") for w in NAME_WORD.findall(name[4:])] or ["Case", "Value"]
    size = max(2, min(4, len(NAME_WORD.findall(original.group("name")[4:]))))

    def name() -> str:
        made = made_name(words, taken, size, rng, _camel)
        taken.append(made)
        return made

    passing, failing = name(), name()
    a, b = rng.randrange(2, 900), rng.randrange(900, 2000)
    copied = {original.group("name"), *twinned}
    others = [m for m in _FUNCTION.finditer(text) if m.group("name") not in copied]
    failing_block = _copy(rng.choice(others), failing, a, b) if others else _compare(failing, a, b)
    blocks = [_compare(passing, a, a), failing_block]
    if not twins:
        twin = name()
        ids = (passing, failing, original.group("name"), twin)
        return AppendedCanaries.appended_to(path, text, blocks, _copy(original, twin, a, b), rng, ids)
    rng.shuffle(blocks)
    apart = {twins_path: made.content for twins_path, made in twins.items()}
    apart[path] = _appended(apart[path].decode() if path in apart else text, blocks)
    every_twin = tuple(twin for _, made in sorted(twins.items()) for twin in made.twins)
    return GoCanaries(path, _appended(text, blocks), passing, failing, every_twin, tuple(sorted(apart.items())))


def _appended(text: str, blocks: Sequence[str]) -> bytes:
    head = text if text.endswith("\n") else text + "\n"
    return (head + "".join("\n" + block for block in blocks)).encode()


def _camel(words: list[str]) -> str:
    return "Test" + "".join(word[:1].upper() + word[1:] for word in words)


PARAM_NAMES = ("tt", "tb", "tc", "st", "ct", "test")


def _copy(test: re.Match[str], name: str, got: int, want: int) -> str:
    """`test` under `name`, opened by a failing `got, want` comparison made fatal, so the copied body never runs (no
    handler registered twice, no port or file raced by a parallel copy); its `*testing.T` has another name, so no
    statement of the copy reads the same as the original's."""
    t, body = test.group("t"), test.group("body")
    new = next((n for n in PARAM_NAMES if n != t and not re.search(rf"(?<![\w.]){n}(?!\w)", body)), t)
    body = re.sub(rf"(?<![\w.]){re.escape(t)}(?!\w)", new, body)
    return f"func {name}({new} *testing.T) {{\n{_compare_lines(new, got, want, 'Fatalf')}{body}}}\n"


def _compare(name: str, got: int, want: int) -> str:
    return f"func {name}(t *testing.T) {{\n{_compare_lines('t', got, want, 'Errorf')}}}\n"


def _compare_lines(t: str, got: int, want: int, report: str) -> str:
    return f'\tif got, want := {got}, {want}; got != want {{\n\t\t{t}.{report}("got %d, want %d", got, want)\n\t}}\n'


def go_single_id(test_id: str) -> str:
    """`-run`'s pattern for exactly `test_id`: each level (`TestX/sub`) anchored, as `go test` splits it by `/`."""
    return "/".join(anchored(level) for level in test_id.split("/"))
