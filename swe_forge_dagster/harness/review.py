"""The review flag: lines of an applied diff that reach into how the tests run or are reported, for a person to read.

Canaries and the runners' own loaders decide whether results were forged; this decides nothing. An honest fix can
import a runner's internals or register an exit handler (a test utility library does), so a match is recorded in
the result (`TaskResult.review`, the `eval_results` column of the same name) and the verdict stands. What counts
is each language pack's `review_signs` (pytest's internals and hooks, mocha/jest modules, exit writers, a Go test
binary re-running itself), applied to every added line whatever its file's language: a payload can sit anywhere.

Two readings, both recorded: the diff's own text, and what it did to the tree (`applied_diff`: git in the
verification container, after the diff applied and the protected paths were reset, shows every changed file as text).
The second is what counts when the text hides the lines: a `GIT binary patch` (a predictions file may hold one, and
an agent's `.gitattributes` that marks a file `binary` makes the harness's own capture write one), a rename, a mode
change or a symlink.
"""

from __future__ import annotations

import re
from functools import cache

from swe_forge_dagster.execution.repo_box import REPO_DIR, exec_demux
from swe_forge_dagster.execution.sandbox import Sandbox
from swe_forge_dagster.languages.registry import review_signs

MAX_NOTES = 20
MAX_REVIEWED_BYTES = 8 << 20
APPLIED_DIFF = (
    f"cd {REPO_DIR} && timeout 300 git -c core.quotepath=false diff --cached "
    f"--text --no-renames --no-ext-diff --no-textconv --no-color HEAD -- | head -c {MAX_REVIEWED_BYTES + 1}"
)
"""The tree's change since the verification container's snapshot, as `harness.protection` left it staged (its
`LIST_CHANGES` ends every apply and reset: the tree is not hashed again here), every file as text (`--text`: binary
ones too; no renames, no external diff or text conversion an attribute could name)."""


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


def applied_diff(box: Sandbox) -> bytes:
    """What the agent's diff did to the verification container's tree (after its resets), as a text diff of every
    changed file, read by git in that container before any test runs (see `APPLIED_DIFF`); one byte past
    `MAX_REVIEWED_BYTES` when it is longer."""
    _exit_code, stdout, _stderr = exec_demux(box, ["bash", "-c", APPLIED_DIFF])
    return stdout


def applied_notes(box: Sandbox) -> list[str]:
    """`review_notes` of `applied_diff`, with a note when it was cut (a diff padded to push its payload past the
    reading is itself worth a person's look)."""
    diff = applied_diff(box)
    notes = review_notes(diff[:MAX_REVIEWED_BYTES].decode("utf-8", "replace"))
    if len(diff) > MAX_REVIEWED_BYTES:
        notes.append(f"(the applied diff is over {MAX_REVIEWED_BYTES} bytes: only its start was read)")
    return notes


def merged(*notes: list[str]) -> list[str]:
    """The notes of several readings, each once, at most `MAX_NOTES`."""
    return list(dict.fromkeys(note for found in notes for note in found))[:MAX_NOTES]
