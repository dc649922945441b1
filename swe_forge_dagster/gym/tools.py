"""The six tools of an environment, as SWE-Gym's card states them, in OpenAI's function-calling format.

| tool | parameters | what it does |
|---|---|---|
| `bash` | command | run in the sandbox's persistent shell (cwd and exports carry over), 600 s timeout by default |
| `view` | path, start?, end? | a file's lines, numbered, 1-indexed and inclusive; a directory's entries |
| `str_replace` | path, old_str, new_str | replace ALL occurrences of `old_str`; shows the resulting diff |
| `insert` | path, start, content | insert `content` at 1-indexed line `start` (it begins there); shows the diff |
| `create` | path, content | create a new file (refused when the path exists: edit it with `str_replace`) |
| `answer` | (none) | take the diff, grade it as `swe-forge harness` does, reward 1.0 or 0.0; ends the episode |

The repository is at `/testbed` (the harness's `/repo`, the same directory); a relative path is relative to it.
Arguments are checked against the schemas here (required, types, no unknown names) before anything runs: a
bad call is an error observation the agent can act on, never a crash of the episode.
"""

from __future__ import annotations

import json
from typing import Any

TESTBED = "/testbed"
ANSWER = "answer"
TOOL_NAMES = ("bash", "view", "str_replace", "insert", "create", ANSWER)
DEFAULT_BASH_TIMEOUT_S = 600.0


class ToolError(ValueError):
    """A call the tool refuses (bad arguments, a missing file, no match): its message is the observation."""


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    return {"type": "function", "function": {"name": name, "description": description, "parameters": parameters}}


def _text(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


def _line(description: str) -> dict[str, Any]:
    return {"type": "integer", "minimum": 1, "description": description}


PATH = _text(f"a file or directory; absolute (under {TESTBED}) or relative to {TESTBED}")
TOOLS: list[dict[str, Any]] = [
    _tool(
        "bash",
        f"Run a bash command in the sandbox (working directory {TESTBED} at first; `cd` and `export` "
        "carry over to the next call). Returns the output and the exit code. Commands are killed after the "
        "timeout (600 s unless the environment says otherwise). There is no network.",
        {"command": _text("the command line, run by bash")},
        ["command"],
    ),
    _tool(
        "view",
        "View a file's lines with their numbers, or a directory's entries (two levels). `start` and "
        "`end` select lines, 1-indexed and inclusive; either may be omitted.",
        {
            "path": PATH,
            "start": _line("first line to show (default 1)"),
            "end": _line("last line to show, inclusive (default: the last line)"),
        },
        ["path"],
    ),
    _tool(
        "str_replace",
        "Replace ALL occurrences of `old_str` in a file with `new_str` (exact text, whitespace "
        "included). Fails when `old_str` does not occur. Shows the resulting diff.",
        {
            "path": PATH,
            "old_str": _text("the exact text to replace"),
            "new_str": _text("the replacement (may be empty)"),
        },
        ["path", "old_str", "new_str"],
    ),
    _tool(
        "insert",
        "Insert `content` into a file at 1-indexed line `start`: the content begins at that line, "
        "and the line that was there and the ones after it move down (the number of lines + 1 appends). "
        "Shows the resulting diff.",
        {
            "path": PATH,
            "start": _line("the 1-indexed line the content begins at"),
            "content": _text("the lines to insert"),
        },
        ["path", "start", "content"],
    ),
    _tool(
        "create",
        "Create a new file with the given content (parent directories are created). Fails when the "
        "path exists: change existing files with str_replace or insert.",
        {"path": PATH, "content": _text("the whole file")},
        ["path", "content"],
    ),
    _tool(
        ANSWER,
        "Submit: the changes made to the repository are taken as a diff and graded by the task's tests. "
        "Returns reward 1.0 (resolved) or 0.0. Ends the episode.",
        {},
        [],
    ),
]
"""The six tools' schemas (what `swe-forge gym tools` prints and the server's `/tools` returns)."""

_SCHEMAS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}
_JSON_TYPES: dict[str, tuple[type, ...]] = {"string": (str,), "integer": (int,)}


def tool_schemas(bash_timeout: float = DEFAULT_BASH_TIMEOUT_S) -> list[dict[str, Any]]:
    """A copy of `TOOLS` (callers may change theirs), `bash`'s description giving the environment's timeout."""
    tools = json.loads(json.dumps(TOOLS))
    if bash_timeout != DEFAULT_BASH_TIMEOUT_S:
        bash = tools[0]["function"]
        bash["description"] = bash["description"].replace(
            "600 s unless the environment says otherwise", f"{bash_timeout:g} s in this environment"
        )
    return tools


def parse_arguments(name: str, arguments: dict[str, Any] | str | None) -> dict[str, Any]:
    """`arguments` (a dict, or the JSON text a model's tool call carries) checked against the tool's schema.

    ToolError names what is wrong: an unknown tool, text that is not a JSON object, a missing or unknown
    argument, a wrong type (a bool is not an integer), a line number below 1, a string UTF-8 cannot hold (a
    lone surrogate such as `\\ud800`: nothing could send it to the sandbox)."""
    schema = _SCHEMAS.get(name)
    if schema is None:
        raise ToolError(f"unknown tool {name!r}: use one of {', '.join(TOOL_NAMES)}")
    if arguments is None or arguments == "":
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError as exc:
            raise ToolError(f"the arguments of {name} are not valid JSON ({exc}); send them again") from None
    if not isinstance(arguments, dict):
        raise ToolError(f"the arguments of {name} must be a JSON object, not {type(arguments).__name__}")
    properties = schema["properties"]
    unknown = sorted(set(arguments) - set(properties))
    if unknown:
        raise ToolError(f"{name} takes no argument {', '.join(unknown)} (it takes: {', '.join(properties) or 'none'})")
    missing = [key for key in schema["required"] if arguments.get(key) is None]
    if missing:
        raise ToolError(f"{name} needs {', '.join(missing)}")
    parsed: dict[str, Any] = {}
    for key, value in arguments.items():
        if value is None:
            continue
        kind = properties[key]["type"]
        if isinstance(value, bool) or not isinstance(value, _JSON_TYPES[kind]):
            raise ToolError(f"{name}: `{key}` must be a{'n' if kind == 'integer' else ''} {kind}, got {value!r:.80}")
        if kind == "integer" and value < properties[key].get("minimum", value):
            raise ToolError(f"{name}: `{key}` is a 1-indexed line number, got {value}")
        if kind == "string" and not _utf8(value):
            raise ToolError(
                f"{name}: `{key}` is not valid Unicode text (a lone surrogate such as \\ud800); "
                "send it again as UTF-8 text"
            )
        parsed[key] = value
    return parsed


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
