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

from swe_forge_dagster.languages.registry import review_signs

MAX_NOTES = 20


@cache
def _signs() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern), what) for pattern, what in review_signs())


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def review_notes(diff: str) -> list[str]:
    """`path: what it is: the line` for each added line of `diff` that matches a sign (at most `MAX_NOTES`).

    Lines are split on newlines only, and hunks are counted, so an added line that starts with `++ ` (shown as
    `+++ `) is read as an added line, not as the next file's header."""
    notes: list[str] = []
    path = ""
    old_left = new_left = 0
    for line in diff.split("\n"):
        if old_left <= 0 and new_left <= 0:
            if line.startswith("+++ "):
                path = line[4:].strip().removeprefix("b/")
            elif hunk := _HUNK.match(line):
                old_left, new_left = int(hunk.group(1) or 1), int(hunk.group(2) or 1)
            continue
        kind, text = line[:1], line[1:]
        if kind == "-":
            old_left -= 1
            continue
        if kind == " ":
            old_left, new_left = old_left - 1, new_left - 1
            continue
        if kind != "+":
            continue  # `\ No newline at end of file`
        new_left -= 1
        for regex, what in _signs():
            if regex.search(text):
                note = f"{path}: {what}: {text.strip()[:160]}"
                if note not in notes:
                    notes.append(note)
                break
        if len(notes) >= MAX_NOTES:
            break
    return notes
