"""Canaries for GoogleTest (`execution.canaries`): tests appended to the `.cc` file of a FAIL_TO_PASS test, and its
twins run apart.

The XML report is written by the test binary, into which the library under test is linked: a static object's
destructor, or an `atexit` handler, runs after `RUN_ALL_TESTS` has written it and can rewrite it (drop every
`<failure>`), and a listener registered from a static initializer can change results before they are written.
Appended to the task's own test file, in its suite (`TEST` or `TEST_F` with the same fixture), in an order drawn
per run: a test that must pass and one that must fail, each an `EXPECT_EQ` of a local and a number (so the failure
message has gtest's `Which is:` line, as a real test's has). Names are made from the words of the file's own test
names, in their style (`join_tuple`, `JoinTuple`). A report where the failing test passed, or that lacks the planted
tests while it has others, was forged.

The twins run apart (`harness.verify`, `languages.cpp.twins`): in a fourth container, the same files with the same
planted tests, but each FAIL_TO_PASS test that has a check to change is its twin, under its name, in its place, one
value of its last check changed (or the check negated). No process sees a test beside its twin, so library code that
reads the test file and compares bodies, or spares tests that open with a constant comparison, finds no copy: it
forges the twin as it forges its original, and a test that passed in the verify run while its twin run apart passed,
was skipped or is missing was forged (the `gtest` red team, `tests/support/real_red_team.py`). When no FAIL_TO_PASS
test has a check a twin can change, the twin is appended beside the original as before: its whole body under a new
name, after the failing comparison made fatal (`ASSERT_EQ`), so it fails before the copied body runs (a forger
comparing bodies tells it). The judgement is then `AppendedCanaries`'s. The planted tests' host is found as
clang-format writes tests (`TEST(suite, name) {` and a `}` alone at column 0), the twins' tests by their tokens;
parameterized and typed tests get neither.

Not closed: the planted failing test is a local compared with a number, which a forger reading the test file can
spare (both red-team forgers do): a task with a twin catches it there, a task without one does not.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from swe_forge_dagster.execution.canaries import NAME_WORD, AppendedCanaries, TwinsApart, made_name
from swe_forge_dagster.languages.cpp.twins import twins_by_file

_TEST = re.compile(r"^(?P<macro>TEST|TEST_F)\((?P<suite>\w+),\s*(?P<name>\w+)\)\s*\{\n(?P<body>.*?)^\}$", re.M | re.S)
_ANY_TEST = re.compile(r"^\s*(?:TEST|TEST_F|TEST_P|TYPED_TEST)\(\s*\w+\s*,\s*(\w+)\s*\)", re.M)
VALUE_NAMES = ("value", "actual", "result", "count", "got", "expected_value", "canary_value")
"""A local the planted comparisons use (a failure message then reads `value / Which is: 259`, like a real test's,
not two bare literals), the first one the copied body does not use."""


GtestCanaries = TwinsApart
"""GoogleTest's canaries with twins run apart (`execution.canaries.TwinsApart`)."""


def plant_gtest(
    run_files: Sequence[str],
    fail_to_pass: Sequence[str],
    read: Callable[[str], bytes],
    rng: random.Random | None = None,
) -> GtestCanaries | AppendedCanaries | None:
    """Canaries in the test file of one FAIL_TO_PASS test (`suite.name`) and the twins of every FAIL_TO_PASS test
    that can have one (`GtestCanaries`); when none can, the canaries with a twin appended beside its original
    (`AppendedCanaries`). None when no FAIL_TO_PASS test is a plain `TEST` or `TEST_F` of a readable test file."""
    rng = rng or random.SystemRandom()
    wanted = set(fail_to_pass)
    texts: dict[str, str] = {}
    hosts: list[tuple[str, str, re.Match[str]]] = []
    for path in run_files:
        try:
            text = read(path).decode("utf-8")
        except (OSError, ValueError):
            continue
        texts[path] = text
        hosts += [(path, text, m) for m in _TEST.finditer(text) if f"{m['suite']}.{m['name']}" in wanted]
    if not hosts:
        return None
    twins = twins_by_file(texts, wanted, rng)
    path, text, original = rng.choice(sorted(hosts, key=lambda host: (host[0], host[2]["suite"], host[2]["name"])))
    taken = _ANY_TEST.findall(text)
    words = [w.lower() for name in taken for w in NAME_WORD.findall(name)] or ["value", "case"]
    snake = sum("_" in name for name in taken) * 2 >= len(taken)
    size = max(2, min(4, len(NAME_WORD.findall(original["name"]))))

    def build(chosen: list[str]) -> str:
        return "_".join(chosen) if snake else "".join(word.capitalize() for word in chosen)

    def name() -> str:
        made = made_name(words, taken, size, rng, build)
        taken.append(made)
        return made

    passing, failing = name(), name()
    suite, macro = original["suite"], original["macro"]
    a, b = rng.randrange(2, 900), rng.randrange(900, 2000)
    value = next(n for n in VALUE_NAMES if not re.search(rf"\b{n}\b", original["body"]))
    blocks = [
        f"{macro}({suite}, {passing}) {{\n  const int {value} = {a};\n  EXPECT_EQ({value}, {a});\n}}\n",
        f"{macro}({suite}, {failing}) {{\n  const int {value} = {a};\n  EXPECT_EQ({value}, {b});\n}}\n",
    ]
    if twins:
        rng.shuffle(blocks)
        apart = {twins_path: made.content for twins_path, made in twins.items()}
        apart[path] = _appended(apart[path].decode() if path in apart else text, blocks)
        every_twin = tuple(twin for _, made in sorted(twins.items()) for twin in made.twins)
        return GtestCanaries(
            path,
            _appended(text, blocks),
            f"{suite}.{passing}",
            f"{suite}.{failing}",
            every_twin,
            tuple(sorted(apart.items())),
        )
    twin = name()
    # fatal: the copied body never runs, so it has none of its side effects
    twin_block = (
        f"{macro}({suite}, {twin}) {{\n  const int {value} = {a};\n  ASSERT_EQ({value}, {b});\n{original['body']}}}\n"
    )
    return AppendedCanaries.appended_to(
        path,
        text,
        blocks,
        twin_block,
        rng,
        (f"{suite}.{passing}", f"{suite}.{failing}", f"{suite}.{original['name']}", f"{suite}.{twin}"),
    )


def _appended(text: str, blocks: Sequence[str]) -> bytes:
    """`text` with `blocks` after it, each after an empty line (as `AppendedCanaries.appended_to` writes them)."""
    head = text if text.endswith("\n") else text + "\n"
    return (head + "".join("\n" + block for block in blocks)).encode()
