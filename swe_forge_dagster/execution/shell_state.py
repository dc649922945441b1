"""How one sandbox command executes: the bash scripts that keep shell state between commands
inside the container, and the host-side reading of its output (bounded, with a timeout).

Every `Sandbox.run` is a fresh `docker exec`, yet agents and recipes expect a shell session:
`cd`, `export` and `source .venv/bin/activate` must carry over to the next command. The state
that matters for that lives in files under `STATE_DIR` inside the container (the exported
environment as `export -p` prints it, and the working directory), restored before and saved
after each command. Keeping it in the container rather than in Python means a committed image
and a second client see the same state, and nothing of the command's text is interpolated into
a shell string: the command travels as a file and is `source`d verbatim.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any

import docker
from docker.utils.socket import frames_iter


class SandboxError(RuntimeError):
    """The sandbox itself failed (not the command run in it)."""


STATE_DIR = "/tmp/.sf_state"
"""Where the shell state lives; a dot folder so a `rm -rf /tmp/*` by a recipe leaves it alone."""

ENV_FILE = f"{STATE_DIR}/env"
CWD_FILE = f"{STATE_DIR}/cwd"
CMD_NAME = "cmd"
"""The file name (in STATE_DIR) the next command is written to; commands never overlap, so one suffices."""

# Snapshot the container's own environment once at start: each command then runs under
# `env -i` from this file, so an `unset` carries over as faithfully as an `export`.
INIT_SCRIPT = f"""
mkdir -p {STATE_DIR} && chmod 700 {STATE_DIR} || exit 1
builtin export -p > {ENV_FILE} && builtin pwd > {CWD_FILE}
"""

# One command, as `bash -c RUNNER_SCRIPT sandbox <run id> <command file>` under `env -i`.
# - The process-group id goes to pgid.<run id> first, so a timeout can kill the whole group.
# - The command is `source`d (not run as a child) so its `cd`/`export` happen in this shell;
#   `source` reads the whole file before running it, and `set --` hides our arguments.
# - The EXIT trap saves the state even when the command calls `exit`, and keeps its status.
#   It uses builtins and absolute paths only, so a command that empties PATH cannot stop the save,
#   and it writes through a rename so a kill mid-save never leaves a half-written env file.
# - stdin is /dev/null (nothing can wait for input) and stderr joins stdout, so the two arrive
#   interleaved in the order they were written.
RUNNER_SCRIPT = f"""
__sf_id=$1; __sf_cmd=$2; set --
read -r -a __sf_stat < /proc/$$/stat && builtin echo "${{__sf_stat[4]}}" > {STATE_DIR}/pgid.$__sf_id
unset __sf_stat
exec </dev/null 2>&1
if [ -f {ENV_FILE} ]; then builtin source {ENV_FILE} 2>/dev/null; fi
__sf_cwd=; if [ -f {CWD_FILE} ]; then IFS= read -r __sf_cwd < {CWD_FILE}; fi
if ! builtin cd -- "${{__sf_cwd:-/}}" 2>/dev/null; then
  builtin echo "[sandbox: working directory ${{__sf_cwd}} is gone; now in /]"
  builtin cd /
fi
unset __sf_cwd
__sf_save() {{
  local __sf_rc=$?
  builtin export -p > {ENV_FILE}.new && /bin/mv -f {ENV_FILE}.new {ENV_FILE}
  builtin pwd > {CWD_FILE}.new && /bin/mv -f {CWD_FILE}.new {CWD_FILE}
  /bin/rm -f {STATE_DIR}/pgid.$__sf_id
  builtin exit "$__sf_rc"
}}
trap __sf_save EXIT
builtin source "$__sf_cmd"
"""

# Kill a running command's whole process group (background jobs included) by its run id,
# waiting briefly for the runner to have recorded its group. Exit 3: the runner never started.
KILL_SCRIPT = f"""
f={STATE_DIR}/pgid.$1
for _ in $(seq 250); do [ -s "$f" ] && break; sleep 0.02; done
[ -s "$f" ] || exit 3
pg=$(< "$f")
kill -KILL -- "-$pg" 2>/dev/null || kill -KILL "$pg" 2>/dev/null
rm -f "$f"
"""

# The persistent environment as NUL-separated NAME=value pairs, for baking into a committed image.
ENV_DUMP_SCRIPT = f"builtin source {ENV_FILE} 2>/dev/null; exec /usr/bin/env -0"

SHELL_ONLY_VARS = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "HOSTNAME"})
"""Variables bash or Docker set per process or per container: never baked into an image."""


class OutputBuffer:
    """A command's output kept to at most `limit` bytes: the head and the tail, as they stream in.

    A test suite or a runaway loop can print gigabytes; only the first and last part are useful
    to an agent (the command that started, and the failure at the end), and holding everything
    in memory first would let one command exhaust the host.
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"max_output must be positive, got {limit}")
        self.head_limit = limit // 2
        self.tail_limit = limit - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_limit:  # trim in batches: amortized O(1) per byte
                del self.tail[: len(self.tail) - self.tail_limit]

    @property
    def truncated(self) -> bool:
        return self.total > self.head_limit + self.tail_limit

    def render(self) -> str:
        """The kept output as text, with `[... N bytes truncated ...]` where bytes were dropped."""
        if not self.truncated:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        tail = bytes(self.tail[-self.tail_limit :]) if self.tail_limit else b""
        dropped = self.total - len(self.head) - len(tail)
        head_text = bytes(self.head).decode("utf-8", "replace")
        tail_text = tail.decode("utf-8", "replace")
        return f"{head_text}\n[... {dropped} bytes truncated ...]\n{tail_text}"


class StreamReader(threading.Thread):
    """Drains an exec's multiplexed output into a buffer, so the caller can wait with a timeout."""

    def __init__(self, sock: Any, buffer: OutputBuffer) -> None:
        super().__init__(name="sandbox-output", daemon=True)
        self.sock = sock
        self.buffer = buffer
        self.error: BaseException | None = None
        self._aborted = False

    def run(self) -> None:
        try:
            for _stream, data in frames_iter(self.sock, tty=False):
                self.buffer.feed(data)
        except Exception as exc:
            if not self._aborted:
                self.error = exc

    def abort(self) -> None:
        """Unblock the reading thread: shutdown (unlike close) wakes a blocked recv."""
        self._aborted = True
        with contextlib.suppress(OSError, AttributeError):
            getattr(self.sock, "_sock", self.sock).shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.sock.close()
        response = getattr(self.sock, "_response", None)
        if response is not None:
            with contextlib.suppress(Exception):
                response.close()


def exec_exit_code(api: docker.APIClient, exec_id: str) -> int:
    """The exec's exit code; the daemon may record it a moment after the output stream ends."""
    deadline = time.monotonic() + 10
    while True:
        info = api.exec_inspect(exec_id)
        if not info["Running"] and info["ExitCode"] is not None:
            return int(info["ExitCode"])
        if time.monotonic() > deadline:
            raise SandboxError(f"exec {exec_id} never reported an exit code")
        time.sleep(0.01)
