"""Canaries for GoogleTest (`execution.canaries`): three tests appended to the `.cc` file of a FAIL_TO_PASS test.

The XML report is written by the test binary, into which the library under test is linked: a static object's
destructor, or an `atexit` handler, runs after `RUN_ALL_TESTS` has written it and can rewrite it (drop every
`<failure>`), and a listener registered from a static initializer can change results before they are written.
Appended to the task's own test file, in its suite (`TEST` or `TEST_F` with the same fixture), in an order drawn
per run:
- a test that must pass and one that must fail, each an `EXPECT_EQ` of a local and a number (so the failure message
  has gtest's `Which is:` line, as a real test's has);
- a twin of one of the task's FAIL_TO_PASS tests: its whole body under a new name, after the same comparison made
  fatal (`ASSERT_EQ`), so it fails before the copied body runs and has none of its side effects.
Names are made from the words of the file's own test names, in their style (`join_tuple`, `JoinTuple`). The
judgement is `AppendedCanaries`'s. Tests are found as clang-format writes them: `TEST(suite, name) {` and a `}`
alone at column 0; parameterized and typed tests are not copied.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence

from swe_forge_dagster.execution.canaries import NAME_WORD, AppendedCanaries, made_name

_TEST = re.compile(r"^(?P<macro>TEST|TEST_F)\((?P<suite>\w+),\s*(?P<name>\w+)\)\s*\{\n(?P<body>.*?)^\}$", re.M | re.S)
_ANY_TEST = re.compile(r"^\s*(?:TEST|TEST_F|TEST_P|TYPED_TEST)\(\s*\w+\s*,\s*(\w+)\s*\)", re.M)
VALUE_NAMES = ("value", "actual", "result", "count", "got", "expected_value", "canary_value")
"""A local the planted comparisons use (a failure message then reads `value / Which is: 259`, like a real test's,
not two bare literals), the first one the copied body does not use."""


def plant_gtest(
    run_files: Sequence[str],
    fail_to_pass: Sequence[str],
    read: Callable[[str], bytes],
    rng: random.Random | None = None,
) -> AppendedCanaries | None:
    """Canaries in the test file of one FAIL_TO_PASS test (`suite.name`), or None when none is a plain `TEST` or
    `TEST_F` of a readable test file."""
    rng = rng or random.SystemRandom()
    wanted = set(fail_to_pass)
    hosts: list[tuple[str, str, re.Match[str]]] = []
    for path in run_files:
        try:
            text = read(path).decode("utf-8")
        except (OSError, ValueError):
            continue
        hosts += [(path, text, m) for m in _TEST.finditer(text) if f"{m['suite']}.{m['name']}" in wanted]
    if not hosts:
        return None
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

    passing, failing, twin = name(), name(), name()
    suite, macro = original["suite"], original["macro"]
    a, b = rng.randrange(2, 900), rng.randrange(900, 2000)
    value = next(n for n in VALUE_NAMES if not re.search(rf"\b{n}\b", original["body"]))
    blocks = [
        f"{macro}({suite}, {passing}) {{\n  const int {value} = {a};\n  EXPECT_EQ({value}, {a});\n}}\n",
        f"{macro}({suite}, {failing}) {{\n  const int {value} = {a};\n  EXPECT_EQ({value}, {b});\n}}\n",
    ]
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
