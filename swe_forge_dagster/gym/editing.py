"""The file tools' text work, as plain functions: numbered views, replace-all, insert at a line, the diff shown.

Kept apart from the container I/O (`gym.toolbox`) so every rule is checked without Docker. Lines are split on
`\\n` only (as git, `cat -n` and editors count them; `str.splitlines` would also split on `\\r`, form feeds and
Unicode separators and so disagree with the line numbers an agent sees elsewhere). Files are edited as UTF-8
text; anything else is refused with a hint to use `bash`, so no edit silently mangles bytes.
"""

from __future__ import annotations

import difflib

from swe_forge_dagster.gym.tools import ToolError

MAX_VIEW_CHARS = 100_000
NO_NEWLINE = "\\ No newline at end of file\n"


def split_lines(text: str) -> list[str]:
    """`text` as lines that keep their `\\n` (the last may lack one); split on `\\n` only."""
    lines = text.split("\n")
    last = lines.pop()
    return [line + "\n" for line in lines] + ([last] if last else [])


def as_text(data: bytes, shown: str) -> str:
    """The file's text; ToolError when it is not UTF-8 (a binary file is edited with `bash`, not these tools)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{shown} is not a UTF-8 text file; use bash to work on it") from None


def numbered(text: str, shown: str, start: int | None = None, end: int | None = None) -> str:
    """Lines `start`..`end` (1-indexed, inclusive) as `cat -n` prints them; a range past the end is an error,
    an `end` past it is cut to the last line (and said)."""
    lines = split_lines(text)
    total = len(lines)
    first = start or 1
    last = end if end is not None else max(total, first)
    if last < first:
        raise ToolError(f"end ({last}) is before start ({first}): the range is 1-indexed and inclusive")
    if total == 0:
        return f"{shown} is empty (0 lines)"
    if first > total:
        raise ToolError(f"start ({first}) is past the end of {shown}, which has {total} lines")
    note = f"\n[{shown} has {total} lines; shown up to line {total}]" if last > total else ""
    last = min(last, total)
    body = "".join(f"{first + i:6}\t{line.rstrip(chr(10))}\n" for i, line in enumerate(lines[first - 1 : last]))
    if len(body) > MAX_VIEW_CHARS:
        cut = body.rfind("\n", 0, MAX_VIEW_CHARS) + 1
        shown_to = first + body[:cut].count("\n") - 1
        body = body[:cut] + f"[cut at line {shown_to} of {total}: view the rest with start={shown_to + 1}]\n"
    header = f"{shown} (lines {first}-{last} of {total}):\n" if (first, last) != (1, total) else f"{shown}:\n"
    return header + body.rstrip("\n") + note


def replace_all(text: str, old: str, new: str, shown: str) -> tuple[str, int]:
    """(`text` with every occurrence of `old` replaced by `new`, how many there were); ToolError when none."""
    if not old:
        raise ToolError("old_str is empty: give the exact text to replace")
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"old_str does not occur in {shown} (it must match exactly, whitespace included); nothing was changed"
        )
    return text.replace(old, new), count


def insert_at(text: str, start: int, content: str, shown: str) -> str:
    """`text` with `content` inserted as whole lines beginning at 1-indexed line `start` (lines + 1 appends)."""
    lines = split_lines(text)
    if not 1 <= start <= len(lines) + 1:
        raise ToolError(
            f"start ({start}) must be a line of {shown} from 1 to {len(lines) + 1} "
            f"(it has {len(lines)} lines; {len(lines) + 1} appends)"
        )
    if lines and not lines[-1].endswith("\n") and start == len(lines) + 1:
        lines[-1] += "\n"  # appending after a last line without its newline: end that line first
    block = content if content.endswith("\n") or not content else content + "\n"
    return "".join(lines[: start - 1]) + block + "".join(lines[start - 1 :])


def unified_diff(before: str, after: str, shown: str) -> str:
    """The change as a unified diff of `shown` (3 lines of context), or a note when nothing changed."""
    if before == after:
        return f"(no change to {shown})"
    lines = []
    for line in difflib.unified_diff(split_lines(before), split_lines(after), fromfile=shown, tofile=shown, n=3):
        lines.append(line if line.endswith("\n") else line + "\n" + NO_NEWLINE)
    return "".join(lines).rstrip("\n")
