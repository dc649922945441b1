"""The agent's tools: a shell, and file reading, writing and exact-string editing.

Editing by exact replacement (`edit_file` with `old_str` -> `new_str`, which must occur once)
rather than by line numbers or whole-file rewrites is what makes small models reliable: a stale
line number silently edits the wrong place, while a string that no longer matches fails loudly
and the model can look again.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

MAX_RESULT = 12_000
SHELL_TIMEOUT = 300


def _schema(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


TOOLS = [
    _schema(
        "shell",
        "Run a bash command in the repository; returns its exit code and output.",
        {"command": {"type": "string"}},
        ["command"],
    ),
    _schema(
        "read_file",
        "Read a text file (optionally only lines start..end, 1-based).",
        {"path": {"type": "string"}, "start": {"type": "integer"}, "end": {"type": "integer"}},
        ["path"],
    ),
    _schema(
        "write_file",
        "Create or overwrite a file with the given content.",
        {"path": {"type": "string"}, "content": {"type": "string"}},
        ["path", "content"],
    ),
    _schema(
        "edit_file",
        "Replace the one occurrence of old_str in a file with new_str.",
        {"path": {"type": "string"}, "old_str": {"type": "string"}, "new_str": {"type": "string"}},
        ["path", "old_str", "new_str"],
    ),
    _schema(
        "finish",
        "Stop: the issue is solved (or cannot be). Give a one-paragraph summary.",
        {"summary": {"type": "string"}},
        ["summary"],
    ),
]


class Finished(Exception):
    """The model called `finish`."""


def clip(text: str, limit: int = MAX_RESULT) -> str:
    """Head and tail of a long output: the start says what ran, the end how it failed."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit} characters elided ...]\n{text[-half:]}"


class Toolbox:
    """The tools bound to one working directory."""

    def __init__(self, workdir: str) -> None:
        self.workdir = Path(workdir).resolve()
        self.handlers: dict[str, Callable[..., str]] = {
            "shell": self.shell,
            "read_file": self.read_file,
            "write_file": self.write_file,
            "edit_file": self.edit_file,
            "finish": self.finish,
        }

    def call(self, name: str, arguments: str) -> str:
        """Run one tool call; every problem comes back as text the model can act on, never as a crash."""
        handler = self.handlers.get(name)
        if handler is None:
            return f"error: unknown tool {name!r}; use one of {', '.join(self.handlers)}"
        try:
            args = json.loads(arguments or "{}")
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
        except ValueError as exc:
            return f"error: the arguments are not valid JSON ({exc}); send them again"
        try:
            return clip(handler(**args))
        except Finished:
            raise
        except TypeError as exc:
            return f"error: wrong arguments for {name}: {exc}"
        except OSError as exc:
            return f"error: {exc}"

    def _path(self, path: str) -> Path:
        return (self.workdir / path).resolve()

    def shell(self, command: str) -> str:
        try:
            proc = subprocess.run(
                ["bash", "-c", command],
                cwd=self.workdir,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=SHELL_TIMEOUT,
                env={**os.environ, "PAGER": "cat"},
            )
        except subprocess.TimeoutExpired:
            return f"exit code 124 (timed out after {SHELL_TIMEOUT}s)"
        return f"exit code {proc.returncode}\n{proc.stdout}{proc.stderr}"

    def read_file(self, path: str, start: int | None = None, end: int | None = None) -> str:
        lines = self._path(path).read_text(errors="replace").splitlines(keepends=True)
        first = max(1, start or 1)
        chosen = lines[first - 1 : end or len(lines)]
        return "".join(f"{first + i:6}\t{line}" for i, line in enumerate(chosen)) or "(empty)"

    def write_file(self, path: str, content: str) -> str:
        target = self._path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        return f"wrote {len(content)} characters to {path}"

    def edit_file(self, path: str, old_str: str, new_str: str) -> str:
        target = self._path(path)
        text = target.read_text()
        found = text.count(old_str) if old_str else 0
        if found != 1:
            return f"error: old_str occurs {found} times in {path}; it must occur exactly once (read the file again)"
        target.write_text(text.replace(old_str, new_str, 1))
        return f"edited {path}"

    def finish(self, summary: str = "") -> str:
        raise Finished(summary)
