"""The review flag: lines of an applied diff that reach into how the tests run or are reported, for a person to read.

Canaries and the runners' own loaders decide whether results were forged; this decides nothing. An honest fix can
import a runner's internals or register an exit handler (a test utility library does), so a match is recorded in
the result (`TaskResult.review`, the `eval_results` column of the same name) and the verdict stands. What counts
is each language pack's `review_signs` (pytest's internals and hooks, mocha/jest modules, exit writers, a Go test
binary re-running itself), applied to every added line whatever its file's language: a payload can sit anywhere.
"""

from __future__ import annotations

import re
from functools import cache

from swe_forge_dagster.execution.languages.registry import review_signs

MAX_NOTES = 20


@cache
def _signs() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern), what) for pattern, what in review_signs())


def review_notes(diff: str) -> list[str]:
    """`path: what it is: the line` for each added line of `diff` that matches a sign (at most `MAX_NOTES`)."""
    notes: list[str] = []
    path = ""
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[4:].strip().removeprefix("b/")
            continue
        if not line.startswith("+"):
            continue
        added = line[1:]
        for regex, what in _signs():
            if regex.search(added):
                note = f"{path}: {what}: {added.strip()[:160]}"
                if note not in notes:
                    notes.append(note)
                break
        if len(notes) >= MAX_NOTES:
            break
    return notes
