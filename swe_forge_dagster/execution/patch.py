"""Split a PR's diff into the SWE-bench `patch` (the fix) and `test_patch` (the tests), and apply them.

A task instance is only usable if both halves apply with `git apply` on the base commit and, together,
reproduce the PR's head tree. So the split works on the raw text of
`git diff --binary --full-index <base> <head>` and moves each file's section (its `diff --git` header,
extended headers and hunks, or its `GIT binary patch` block) verbatim into one half; nothing is parsed
into a model and re-serialized. `unidiff` is deliberately not used for the output: it drops binary
patches and normalizes some headers, and the byte-exact section text is all the split needs.

Text must stay byte-exact too: decode the diff bytes with `decode("utf-8", "surrogateescape")` and
never with universal newlines (`text=True`), which would turn CRLF content into LF and make the patch
no longer apply. `check_applies`/`apply` encode back with the same error handler, so any byte survives.

A file is test code when the caller's `is_test` (the product's one set of rules, `registry.is_test_path`) says so
for its new path (its old path for a deletion). Test code that lives inside a source file, such as Rust's in-file
`#[cfg(test)] mod tests`, cannot be separated by path: such a file is source and its test changes
ship in `patch`; the tests still run, they just are not hidden from the solver.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

_SECTION_START = re.compile(r"^diff --git ", re.MULTILINE)
# The first line after the extended headers: hunks, a binary patch, or a binary placeholder.
_BODY_START = ("@@ ", "GIT binary patch", "Binary files ")
_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_ENCODING = ("utf-8", "surrogateescape")


@dataclass(frozen=True)
class FileSection:
    """One file's part of a git diff, exactly as git printed it."""

    path: str  # the new path; the old path when the file is deleted
    old_path: str | None  # set for renames and copies
    text: str
    is_binary: bool


@dataclass(frozen=True)
class SplitPatch:
    """The two halves of a PR's diff and which files went where (in diff order)."""

    patch: str
    test_patch: str
    src_files: list[str]
    test_files: list[str]
    binary_files: list[str]


class PatchApplyError(RuntimeError):
    """`git apply` refused a patch; the message is git's own error text."""


def split_sections(diff_text: str) -> list[FileSection]:
    """Cut a git diff on its `diff --git ` boundaries.

    Every hunk line starts with ' ', '+', '-' or '\\' and base85 binary data never contains a space,
    so a line starting with `diff --git ` is always a new file. Text before the first section (a
    format-patch mail header, say) is dropped; a diff without any section is an error rather than an
    empty result, because silently dropping a plain unified diff would lose the whole fix.
    """
    starts = [match.start() for match in _SECTION_START.finditer(diff_text)]
    if not starts:
        if diff_text.strip():
            raise ValueError("not a git diff: no 'diff --git' header found")
        return []
    sections = []
    for start, end in zip(starts, [*starts[1:], len(diff_text)], strict=True):
        text = diff_text[start:end]
        if not text.endswith("\n"):  # only the last section can lack it (a stripped diff); git needs it
            text += "\n"
        sections.append(_parse_section(text))
    return sections


def split_diff(diff_text: str, is_test: Callable[[str], bool]) -> SplitPatch:
    """Route each file's section to `test_patch` (test code: `is_test` of its path) or `patch` (everything else)."""
    patch: list[str] = []
    test_patch: list[str] = []
    src_files: list[str] = []
    test_files: list[str] = []
    binary_files: list[str] = []
    for section in split_sections(diff_text):
        if is_test(section.path):
            test_patch.append(section.text)
            _append_once(test_files, section.path)
        else:
            patch.append(section.text)
            _append_once(src_files, section.path)
        if section.is_binary:
            _append_once(binary_files, section.path)
    return SplitPatch("".join(patch), "".join(test_patch), src_files, test_files, binary_files)


def check_applies(worktree: Path, patch: str, *, timeout: float = 120) -> str | None:
    """None when `patch` applies cleanly to `worktree`, else git's error text.

    An empty patch (a PR without test changes has an empty `test_patch`) trivially applies, while
    `git apply` itself would reject it with "No valid patches in input".
    """
    if not patch.strip():
        return None
    result = _git_apply(worktree, patch, ["--check"], timeout)
    if result.returncode == 0:
        return None
    return _error_text(result)


def apply(worktree: Path, patch: str, *, timeout: float = 120) -> None:
    """Apply `patch` to `worktree` (all files or none: `git apply` is atomic without `--reject`)."""
    if not patch.strip():
        return
    result = _git_apply(worktree, patch, [], timeout)
    if result.returncode != 0:
        raise PatchApplyError(_error_text(result))


def _git_apply(worktree: Path, patch: str, extra: list[str], timeout: float) -> subprocess.CompletedProcess[bytes]:
    # Run at the repository root: from a subdirectory git silently skips paths outside it.
    # --whitespace=nowarn overrides a repo's apply.whitespace=error: the PR's bytes are the truth.
    # LC_ALL=C keeps the error text stable for logs and tests.
    command = ["git", "apply", *extra, "--binary", "--whitespace=nowarn"]
    return subprocess.run(
        command,
        cwd=worktree,
        input=patch.encode(*_ENCODING),
        capture_output=True,
        timeout=timeout,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )


def _error_text(result: subprocess.CompletedProcess[bytes]) -> str:
    text = result.stderr.decode(*_ENCODING).strip()
    return text or f"git apply exited with status {result.returncode}"


def _append_once(items: list[str], item: str) -> None:
    # A type change (file -> symlink) shows up as a deletion plus an addition of the same path.
    if item not in items:
        items.append(item)


def _parse_section(text: str) -> FileSection:
    """Find the file's paths in the header lines (never in hunks, where '+++ ' can be content)."""
    lines = text.split("\n")
    first, header = lines[0], []
    for line in lines[1:]:
        if line.startswith(_BODY_START):
            break
        header.append(line)
    is_binary = any(line.startswith(("GIT binary patch", "Binary files ")) for line in lines)

    values: dict[str, str] = {}
    for line in header:
        for key in ("rename from ", "rename to ", "copy from ", "copy to ", "--- ", "+++ "):
            if line.startswith(key):
                values[key.strip()] = line[len(key) :]
    old_path = values.get("rename from", values.get("copy from"))
    new_path = values.get("rename to", values.get("copy to"))
    if old_path is not None and new_path is not None:
        return FileSection(_unquote(new_path), _unquote(old_path), text, is_binary)
    for key, prefix in (("+++", "b/"), ("---", "a/")):
        name = values.get(key)
        if name is not None and name != "/dev/null":
            # git appends a tab to ---/+++ names containing a space (for GNU patch); a real tab is quoted.
            return FileSection(_strip_prefix(_unquote(name.removesuffix("\t")), prefix), None, text, is_binary)
    # Mode-only changes, empty new files and binary files have no ---/+++ lines.
    return FileSection(_path_from_git_line(first[len("diff --git ") :]), None, text, is_binary)


def _path_from_git_line(rest: str) -> str:
    """The path in `a/<path> b/<path>` when there is no rename, so both names are the same.

    Unquoted names may contain spaces, so split where both halves are equal, as git itself does.
    """
    if rest.startswith('"'):
        name, _ = _read_quoted(rest)
        return _strip_prefix(name, "a/")
    if rest.endswith('"'):
        return _strip_prefix(_read_quoted(rest[rest.rindex(' "') + 1 :])[0], "b/")
    half = (len(rest) - 1) // 2
    if len(rest) % 2 == 1 and rest[half] == " ":
        old, new = rest[:half], rest[half + 1 :]
        if old.removeprefix("a/") == new.removeprefix("b/"):
            return old.removeprefix("a/")
    old, _, new = rest.partition(" b/")
    return new or _strip_prefix(old, "a/")


def _strip_prefix(name: str, prefix: str) -> str:
    return name[len(prefix) :] if name.startswith(prefix) else name


def _unquote(name: str) -> str:
    return _read_quoted(name)[0] if name.startswith('"') else name


def _read_quoted(text: str) -> tuple[str, str]:
    """Decode git's C-style quoted name (`"caf\\303\\251.py"`); returns the name and the text after it."""
    out = bytearray()
    i = 1
    while i < len(text):
        char = text[i]
        if char == '"':
            return out.decode(*_ENCODING), text[i + 1 :]
        if char == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt in "01234567":
                out.append(int(text[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.extend(bytes([_C_ESCAPES[nxt]]) if nxt in _C_ESCAPES else nxt.encode(*_ENCODING))
            i += 2
            continue
        out.extend(char.encode(*_ENCODING))
        i += 1
    raise ValueError(f"unterminated quoted path in diff header: {text!r}")


def patch_adding_files(files: dict[str, str]) -> str:
    """A git diff that creates `files` (path -> text): how agent-written tests become a `test_patch`."""
    sections = []
    for path, text in sorted(files.items()):
        lines = text.splitlines(keepends=True)
        body = "".join(f"+{line}" for line in lines)
        if lines and not lines[-1].endswith("\n"):
            body += "\n\\ No newline at end of file\n"
        sections.append(
            f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
            f"@@ -0,0 +1,{len(lines)} @@\n{body}"
        )
    return "".join(sections)
