"""The five working tools (`bash`, `view`, `str_replace`, `insert`, `create`) on the harness's agent container.

The container is the one `swe-forge harness` gives an agent (`harness.run`): the task's environment image,
the repository as one fresh commit at `/repo` without the task's tests, its limits and network. SWE-Gym's
agents expect the repository at `/testbed`: paths under it are mapped to `/repo` here, and `/testbed` is a
symbolic link to `/repo` inside the container (made at open; an image's own `/testbed` is removed first, as
the graded tree is `/repo`; when the link cannot be made the open fails and says so), so `cd /testbed` in
`bash` is the same directory and the diff taken at `answer` holds every change either way.

`bash` runs in the sandbox's persistent shell session (`Sandbox.run`: `cd` and `export` carry over, a
timeout kills the command's whole process group and leaves the session usable). The file tools read and
write through the engine's archive API, never through the agent's shell, and rewrite an existing file in
place (`cat staged > file`), so its mode, owner and any symbolic link to it stay as they were. Those
helper commands run under `timeout` (a stuck file system cannot hold a call forever), and a directory
listing is cut in the container (`find -H ... | head`), so a huge tree costs no more than its first entries.
"""

from __future__ import annotations

import base64
import json
import posixpath
import uuid
from dataclasses import dataclass, field
from typing import Any

from swe_forge_dagster.execution.repo_box import REPO_DIR, put_files
from swe_forge_dagster.execution.sandbox import Sandbox, SandboxError
from swe_forge_dagster.gym.editing import as_text, insert_at, numbered, replace_all, unified_diff
from swe_forge_dagster.gym.tools import TESTBED, ToolError

MAX_FILE_BYTES = 8 << 20
MAX_OUTPUT = 30_000
MAX_ENTRIES = 1_000
MAX_LINKS = 8
STAGING = "/tmp/.swe-forge-gym"
HELPER_TIMEOUT_S = 60
# `/testbed` -> `/repo`, whatever the image had there (its own /testbed would be a tree nobody grades); exit 3 and
# say why when that cannot be done
TESTBED_SCRIPT = f"""if [ "$(readlink -f {TESTBED})" != {REPO_DIR} ]; then
  rm -rf {TESTBED} 2>&1 && ln -s {REPO_DIR} {TESTBED} 2>&1
fi
if [ "$(readlink -f {TESTBED})" != {REPO_DIR} ]; then
  echo "{TESTBED} cannot be made a link to {REPO_DIR} (it is $(ls -ld {TESTBED} 2>&1))"; exit 3
fi
cd {TESTBED}"""


@dataclass
class Observation:
    """What a tool call returns to the agent: text, whether the call failed, and facts for programs."""

    text: str
    error: bool = False
    data: dict[str, Any] = field(default_factory=dict)


def container_path(path: str) -> str:
    """The container path of an agent's path: absolute, or relative to /testbed; /testbed/... is /repo/..."""
    if not path.strip():
        raise ToolError("path is empty")
    full = posixpath.normpath(path if path.startswith("/") else posixpath.join(TESTBED, path))
    if full == TESTBED or full.startswith(TESTBED + "/"):
        return REPO_DIR + full[len(TESTBED) :]
    return full


def shown_path(path: str) -> str:
    """How a container path is shown to the agent (the repository as /testbed)."""
    if path == REPO_DIR or path.startswith(REPO_DIR + "/"):
        return TESTBED + path[len(REPO_DIR) :]
    return path


def prepare_testbed(box: Sandbox) -> None:
    """Make /testbed a link to the repository (replacing an image's own /testbed) and start the shell session
    there; SandboxError saying why when it cannot be (the open fails with that reason)."""
    result = box.run(TESTBED_SCRIPT, timeout=120)
    if not result.ok:
        why = "timed out" if result.timed_out else f"exit code {result.exit_code}"
        raise SandboxError(f"{TESTBED} could not be linked to the repository ({why}): {result.output[-500:]}")


class Toolbox:
    """The working tools on one sandbox. Not thread-safe on its own: the environment serializes calls."""

    def __init__(self, box: Sandbox, *, bash_timeout: float, max_output: int = MAX_OUTPUT) -> None:
        self.box = box
        self.bash_timeout = bash_timeout
        self.max_output = max_output

    def run(self, name: str, arguments: dict[str, Any]) -> Observation:
        """Run one checked call (`tools.parse_arguments`); ToolError for a refused one."""
        handler = {
            "bash": self.bash,
            "view": self.view,
            "str_replace": self.str_replace,
            "insert": self.insert,
            "create": self.create,
        }.get(name)
        if handler is None:
            raise ToolError(f"{name} is not a working tool")
        return handler(**arguments)

    # -- the tools --------------------------------------------------------------------------------

    def bash(self, command: str) -> Observation:
        if not command.strip():
            raise ToolError("command is empty")
        result = self.box.run(command, timeout=self.bash_timeout, max_output=self.max_output)
        data = {
            "exit_code": result.exit_code,
            "timed_out": result.timed_out,
            "truncated": result.truncated,
            "seconds": round(result.duration_s, 3),
        }
        text = result.output.rstrip("\n")
        if result.timed_out:
            tail = (
                f"[timed out after {self.bash_timeout:g} s: the command and everything it started were killed; "
                "the shell session is still usable]"
            )
        elif result.disk_exceeded:
            tail = "[stopped: the sandbox's disk limit was exceeded]"
        else:
            tail = f"[exit code {result.exit_code}]"
        return Observation(
            f"{text}\n{tail}" if text else tail, error=result.timed_out or result.disk_exceeded, data=data
        )

    def view(self, path: str, start: int | None = None, end: int | None = None) -> Observation:
        target = container_path(path)
        try:
            data = self._read(target)
        except IsADirectoryError:
            if start is not None or end is not None:
                raise ToolError(f"{shown_path(target)} is a directory: start and end select lines of a file") from None
            return Observation(self._listing(target))
        except SandboxError as exc:
            raise ToolError(str(exc).replace(REPO_DIR, TESTBED)) from None
        if data is None:
            raise ToolError(f"{shown_path(target)} does not exist")
        shown = shown_path(target)
        return Observation(numbered(data.decode("utf-8", "replace"), shown, start, end))

    def str_replace(self, path: str, old_str: str, new_str: str) -> Observation:
        target, before = self._read_text(path)
        after, count = replace_all(before, old_str, new_str, shown_path(target))
        self._rewrite(target, after)
        times = "1 occurrence" if count == 1 else f"{count} occurrences"
        diff = unified_diff(before, after, shown_path(target))
        return Observation(f"Replaced {times} in {shown_path(target)}.\n{diff}", data={"replaced": count})

    def insert(self, path: str, start: int, content: str) -> Observation:
        target, before = self._read_text(path)
        after = insert_at(before, start, content, shown_path(target))
        self._rewrite(target, after)
        diff = unified_diff(before, after, shown_path(target))
        return Observation(f"Inserted at line {start} of {shown_path(target)}.\n{diff}")

    def create(self, path: str, content: str) -> Observation:
        target = container_path(path)
        shown = shown_path(target)
        try:
            exists = self._read(target) is not None
        except IsADirectoryError:
            raise ToolError(f"{shown} is a directory") from None
        except SandboxError:
            exists = True  # too large, a symbolic link loop: something is there
        if exists:
            raise ToolError(f"{shown} already exists: change it with str_replace or insert (or bash)")
        put_files(self.box, {target: content.encode("utf-8")})
        lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        return Observation(f"Created {shown} ({lines} lines).")

    # -- container I/O ----------------------------------------------------------------------------

    def _read(self, target: str) -> bytes | None:
        """A file's bytes (None: nothing there); IsADirectoryError for a directory, found by a stat first: the
        engine keeps the container locked while a directory's archive stream is left unread, so reading a large
        directory as a file would hold every later call of the episode."""
        kind = self._kind(target)
        if kind is None:
            return None
        if kind == "directory":
            raise IsADirectoryError(target)
        return self.box.read_file(target, max_bytes=MAX_FILE_BYTES)

    def _kind(self, target: str) -> str | None:
        """`directory`, `other` or None (nothing there), symbolic links followed; the engine's archive stat (a HEAD
        request: no archive is made)."""
        api = self.box.client.api
        url = api._url("/containers/{0}/archive", self.box.container.id)
        for _ in range(MAX_LINKS):
            response = api.head(url, params={"path": target}, timeout=60)
            if response.status_code == 404:
                return None
            header = response.headers.get("X-Docker-Container-Path-Stat")
            if not response.ok or not header:
                return "other"  # the read says what is wrong
            stat = json.loads(base64.b64decode(header))
            mode = int(stat.get("mode", 0))
            if mode & (1 << 27) and stat.get("linkTarget") and stat["linkTarget"] != target:  # os.ModeSymlink
                target = stat["linkTarget"]  # the engine resolves the whole chain
                continue
            return "directory" if mode & (1 << 31) else "other"  # os.ModeDir
        return "other"

    def _read_text(self, path: str) -> tuple[str, str]:
        target = container_path(path)
        shown = shown_path(target)
        try:
            data = self._read(target)
        except IsADirectoryError:
            raise ToolError(f"{shown} is a directory") from None
        except SandboxError as exc:
            raise ToolError(str(exc).replace(REPO_DIR, TESTBED)) from None
        if data is None:
            raise ToolError(f"{shown} does not exist (create it with create)")
        return target, as_text(data, shown)

    def _rewrite(self, target: str, text: str) -> None:
        """Replace the file's content in place: staged through the archive API, then copied over it."""
        staged = f"{STAGING}/{uuid.uuid4().hex}"
        put_files(self.box, {staged: text.encode("utf-8")})
        script = 'cat -- "$1" > "$2"; status=$?; rm -f -- "$1"; exit $status'
        argv = ["timeout", str(HELPER_TIMEOUT_S), "sh", "-c", script, "sh", staged, target]
        exit_code, output = self.box.container.exec_run(argv, workdir="/")
        if exit_code != 0:
            raise ToolError(f"writing {shown_path(target)} failed: {_failure(exit_code, output)}")

    def _listing(self, directory: str) -> str:
        # -H: a symbolic link given as the directory is followed; the first MAX_ENTRIES + 1 entries only
        script = (
            f'find -H "$1" -mindepth 1 -maxdepth 2 -name ".*" -prune -o -printf "%y %p\\n" 2>/dev/null '
            f"| head -n {MAX_ENTRIES + 1}"
        )
        argv = ["timeout", str(HELPER_TIMEOUT_S), "sh", "-c", script, "sh", directory]
        exit_code, output = self.box.container.exec_run(argv, workdir="/")
        if exit_code != 0:
            raise ToolError(f"listing {shown_path(directory)} failed: {_failure(exit_code, output)}")
        entries = sorted(
            shown_path(line[2:]) + ("/" if line[:1] == "d" else "")
            for line in output.decode("utf-8", "replace").splitlines()
            if len(line) > 2
        )
        more = f"\n[more entries not shown: the first {MAX_ENTRIES} found are listed]" if entries[MAX_ENTRIES:] else ""
        head = f"{shown_path(directory)}/ (two levels, hidden entries left out):\n"
        return head + "\n".join(entries[:MAX_ENTRIES]) + more


def _failure(exit_code: int, output: bytes) -> str:
    """Why a helper command failed: its timeout, or the end of its output."""
    if exit_code == 124:
        return f"timed out after {HELPER_TIMEOUT_S} s"
    return output.decode(errors="replace")[-500:] or f"exit code {exit_code}"
