"""Canaries, whatever the runner: tests planted beside the task's own, whose outcomes a forged report gets wrong.

The code under test runs in the test process (or writes to the stream its runner reads: `go test -json` turns
the test binary's standard output into results), so it can forge what the report says. The harness cannot read
the truth from elsewhere; it can make forging detectable. Right before the sanity and verify runs, a runner that
has canaries (`Runner.plant`) writes tests with known outcomes where the task's tests are: one that must pass, one
that must fail, and (where the language pack can copy a test) a twin of one of the task's own FAIL_TO_PASS tests
that fails whenever that test passes. Their names are made from the words of the file's own test names and they
assert the way the file does, so a forger cannot tell them from the task's by name, place or failure type; the
twin has the body of a task test. A forger that reads the test source (or, in a JavaScript process, a test's
function text) can still tell them apart: that stays open, and the threat model (docs/harness.md) says so.
The sanity run (no agent code) shows they give their outcomes with this task's command; a verify run that
reports otherwise was forged.

Each language keeps its canaries in its pack (`languages.python.canaries` for pytest, `languages.go.canaries`);
this module is the contract the harness (`harness.checks`) calls them through.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from swe_forge_dagster.execution.junit import Outcome


class Planted(Protocol):
    """The canaries of one run: the files to write, and how to judge a report with them."""

    @property
    def path(self) -> str:
        """The test file (repo-relative) the run must be given so that the canaries run."""
        ...

    def files(self) -> dict[str, bytes]:
        """What to write before a run (repo-relative path -> bytes)."""
        ...

    def expected(self, outcomes: Mapping[str, Outcome]) -> bool:
        """The canaries gave their own outcomes (checked at sanity, where no agent code runs)."""
        ...

    def twin_ran(self, outcomes: Mapping[str, Outcome]) -> bool | None:
        """The twin is reported wherever its original is (None: no twin). Not its outcome: at sanity the original
        fails, and a twin with a negated assertion may then pass."""
        ...

    def without_twin(self) -> Planted:
        """The same canaries without the twin (one the task's command does not select)."""
        ...

    def tampering(self, outcomes: Mapping[str, Outcome], exit_code: int, exit_code_meaningful: bool) -> str | None:
        """Why a run's results cannot be trusted, or None."""
        ...

    def apart(self) -> Planted | None:
        """The canaries of the run apart: the same planted tests, and each twin written over its original, under its
        name, in its place (no process sees both); None when this runner's twins run beside their originals."""
        ...

    def apart_tampering(self, verify: Mapping[str, Outcome], apart: Mapping[str, Outcome] | None) -> str | None:
        """Why the verify run's results cannot be trusted, given the run apart's; None when the run apart gave no report
        (`apart` None): that is no verdict, which the harness reports as such, never tampering."""
        ...


Plant = Callable[[Sequence[str], Sequence[str], Callable[[str], bytes]], "Planted | None"]
"""(the task's test files, its FAIL_TO_PASS ids, a reader of a file of the tree at base + the task's tests) ->
the canaries of a run, or None when none can sit there."""


NAME_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+")
"""A word of a CamelCase or snake_case test name (`UUIDParseVersion7` -> UUID, Parse, Version7)."""


def made_name(
    words: Sequence[str], taken: Sequence[str], size: int, rng: random.Random, build: Callable[[list[str]], str]
) -> str:
    """A new test name built (`build`) from `size` or more of `words` (the file's own test names' words), not in
    `taken`: like the task's names, so no rule on names tells it from them."""
    for attempt in range(1000):
        name = build([rng.choice(words) for _ in range(size + attempt // 100)])
        if name not in taken:
            return name
    raise ValueError("no free test name")  # 1,000 draws of ever more words: only with a single, taken word


def split_top_level(text: str, quotes: str = "'\"`") -> list[str] | None:
    """A call's or macro's arguments split at their top-level commas (strings in `quotes` and brackets kept whole),
    or None when a string is unterminated or a bracket unbalanced: the twins' parsers of JavaScript and Rust."""
    parts, depth, start, index = [], 0, 0, 0
    while index < len(text):
        char = text[index]
        if char in quotes:
            index += 1
            while index < len(text) and text[index] != char:
                index += 2 if text[index] == "\\" else 1
            if index >= len(text):
                return None
        elif char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
        index += 1
    return None if depth else [*parts, text[start:]]


ESCAPE = re.compile(
    r"\\(?:x[0-9a-fA-F]+|u\{[0-9a-fA-F]*\}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|[0-7]{1,3}|.)", re.S
)
"""An escape in a string literal's source, in the forms of the languages whose twins change strings."""


def another_string(text: str, rng: random.Random) -> str:
    """`text` with one of its letters or digits, at a drawn place, replaced by another of the same kind (a digit by
    a digit, a capital by a capital, a small letter by a small one; one the string holds when it can): the expected
    string of a twin's changed assertion, never equal to `text`, even ignoring case.

    Why the same kind and length: a forger that takes the expected value from its caller only when it has the form of
    a real one (all capitals, digits only, `1,234`) told the twins apart when a twin added a small letter to
    `"HELLO"` or an `e` to `"1,234"` (a red-team helper, 2026-11-30). A letter or digit of an escape in the source
    (`\\n`, `\\x41`, `\\u{1F600}`), or right after one (it could run on), is never the one replaced; a string with
    none else gains an `e`."""
    escaped = {i for match in ESCAPE.finditer(text) for i in range(match.start(), match.end() + 1)}
    places = [i for i, c in enumerate(text) if c.isascii() and c.isalnum() and i not in escaped]
    if not places:  # anywhere but inside an escape or right after one (it could run on)
        inside = {i for match in ESCAPE.finditer(text) for i in range(match.start() + 1, match.end() + 1)}
        at = rng.choice([i for i in range(len(text) + 1) if i not in inside])
        return text[:at] + "e" + text[at:]
    at = rng.choice(places)
    own = "".join(c for i, c in enumerate(text) if i not in escaped)
    return text[:at] + of_its_kind(text[at], own, rng) + text[at + 1 :]


def of_its_kind(char: str, own: str, rng: random.Random) -> str:
    """Another ASCII letter or digit of the kind of `char` (a digit, a capital, a small letter), never the same
    letter in another case; one that `own` (the string it is in) holds when it can (`another_string`)."""
    pool = string.digits if char.isdigit() else string.ascii_uppercase if char.isupper() else string.ascii_lowercase
    others = [c for c in pool if c.lower() != char.lower()]
    return rng.choice(sorted({c for c in own if c in others}) or others)


@dataclass(frozen=True)
class AppendedCanaries:
    """Canaries appended to a task's test file, for runners whose ids are test names (`go test`'s `TestX`,
    GoogleTest's `suite.test`): `path` with `passing`, `failing` and (unless None) `twin`, a copy of `original` that
    fails whatever its body does, appended (`content`; `bare` has no twin)."""

    path: str
    content: bytes
    bare: bytes
    passing: str
    failing: str
    original: str | None = None
    twin: str | None = None
    twin_always_fails: bool = True
    """The twin is a copy opened by a failing comparison (so it fails at sanity too); False: its last assertion is
    changed, and at sanity, where the original fails, it may pass."""

    @classmethod
    def appended_to(
        cls,
        path: str,
        text: str,
        blocks: list[str],
        twin_block: str,
        rng: random.Random,
        ids: tuple[str, str, str, str],
    ) -> AppendedCanaries:
        """`blocks` (the passing and failing tests) and `twin_block` appended to the file's `text` in an order of
        `rng`'s (planted tests sit among each other in no fixed place); `ids`: passing, failing, original, twin."""
        head = text if text.endswith("\n") else text + "\n"
        bare_blocks, all_blocks = list(blocks), [*blocks, twin_block]
        rng.shuffle(bare_blocks)
        rng.shuffle(all_blocks)
        content = (head + "".join("\n" + block for block in all_blocks)).encode()
        bare = (head + "".join("\n" + block for block in bare_blocks)).encode()
        return cls(path, content, bare, *ids)

    def files(self) -> dict[str, bytes]:
        return {self.path: self.content}

    def expected(self, outcomes: Mapping[str, Outcome]) -> bool:
        return outcomes.get(self.passing) == "passed" and outcomes.get(self.failing) == "failed"

    def twin_ran(self, outcomes: Mapping[str, Outcome]) -> bool | None:
        if self.twin is None or self.original is None:
            return None
        twin = outcomes.get(self.twin)
        return self.original in outcomes and twin is not None and (twin == "failed" or not self.twin_always_fails)

    def without_twin(self) -> AppendedCanaries:
        return replace(self, content=self.bare, original=None, twin=None)

    def apart(self) -> None:
        return None  # the twin runs beside its original

    def apart_tampering(self, verify: Mapping[str, Outcome], apart: Mapping[str, Outcome] | None) -> None:
        return None

    def tampering(self, outcomes: Mapping[str, Outcome], exit_code: int, exit_code_meaningful: bool) -> str | None:
        if self.twin is not None and self.original is not None and outcomes.get(self.original) == "passed":
            twin = outcomes.get(self.twin)
            if twin is None:
                return f"the twin of {self.original} is missing from a report that has it"
            if twin != "failed":
                return f"{self.original} passed and so did its twin, which fails whenever it passes"
        passing, failing = outcomes.get(self.passing), outcomes.get(self.failing)
        if failing == "passed":
            return f"a test planted to fail ({self.path}: {self.failing}) was reported passed"
        if (passing is None or failing is None) and outcomes:  # one planted test left out is enough
            return f"the tests planted in {self.path} are missing from a report that has the task's tests"
        if exit_code_meaningful and exit_code == 0 and failing == "failed":
            return "the test command exited 0 although its report holds a failing test"
        return None


@dataclass(frozen=True)
class NamedTwin:
    """The twin of the test its runner names `name` (a function, a libtest path): its check changed as `how` says,
    for the verdict's reason ("expects 7 where the test expects 10")."""

    name: str
    how: str


@dataclass(frozen=True)
class TwinsApart:
    """Canaries of a compiled runner whose twins run apart (`go test`, cargo): the passing and failing tests planted
    in `path` (`content`), and the twins of the FAIL_TO_PASS tests, for the run apart, where `apart_files` are
    written instead (the twins in place of their originals under their names, and `path` with the same planted tests
    at the same place). `in_place`: these are the run apart's canaries. A report is judged by the planted tests in
    each run (`AppendedCanaries`), and the verify run by the run apart: a test that passed there whose twin did not
    fail here was forged."""

    path: str
    content: bytes
    passing: str
    failing: str
    twins: tuple[NamedTwin, ...] = ()
    apart_files: tuple[tuple[str, bytes], ...] = ()
    in_place: bool = False

    @property
    def planted(self) -> AppendedCanaries:
        """The passing and failing tests alone, which judge a run by its own report."""
        return AppendedCanaries(self.path, self.content, self.content, self.passing, self.failing)

    def files(self) -> dict[str, bytes]:
        return dict(self.apart_files) if self.in_place else {self.path: self.content}

    def expected(self, outcomes: Mapping[str, Outcome]) -> bool:
        return self.planted.expected(outcomes)

    def twin_ran(self, outcomes: Mapping[str, Outcome]) -> bool | None:
        return None  # no twin runs beside its original

    def without_twin(self) -> TwinsApart:
        return replace(self, twins=(), apart_files=(), in_place=False)

    def apart(self) -> TwinsApart | None:
        return replace(self, in_place=True) if self.twins else None

    def apart_tampering(self, verify: Mapping[str, Outcome], apart: Mapping[str, Outcome] | None) -> str | None:
        if apart is None:  # no report: no verdict (`harness.verify`), no claim
            return None
        for twin in self.twins:
            if verify.get(twin.name) != "passed":
                continue
            outcome = apart.get(twin.name)
            if outcome is None:
                return f"{twin.name} passed, and its twin is missing from the report of the run apart"
            if outcome != "failed":  # an honest twin runs as its original up to its check, then fails
                return f"{twin.name} passed, and its twin run apart {outcome} too, although it {twin.how}"
        return None

    def tampering(self, outcomes: Mapping[str, Outcome], exit_code: int, exit_code_meaningful: bool) -> str | None:
        return self.planted.tampering(outcomes, exit_code, exit_code_meaningful)
