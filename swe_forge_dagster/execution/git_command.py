"""Git run the same way by every caller of the repository cache: a clean environment (no system or user config, no
terminal prompts, no inherited `GIT_*` variables), safe server options for local remotes, one error type.

Split from `execution.repo_cache` (which decides what to clone, fetch and read) because how git runs is its own
concern: results must never depend on the machine's git setup, and `carried_trees` runs git the same way.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

# Set on every call (with --literal-pathspecs: paths are file names, never globs): no automatic
# gc or maintenance racing with another process's fetch, no detached-HEAD advice.
_CONFIG = ("gc.auto=0", "maintenance.auto=false", "advice.detachedHead=false")
# For local remotes (file:// or a path) *we* run the server side. Git strips `-c` options from
# the environment of a local upload-pack, so they go into the upload-pack command itself:
# without `allowFilter` the clone silently becomes a full clone ("filtering not recognized by
# server"), without `allowAnySHA1InWant` fetching a bare sha fails. GitHub allows both.
_SERVER_CONFIG = ("uploadpack.allowFilter=true", "uploadpack.allowAnySHA1InWant=true")


class RepoCacheError(RuntimeError):
    """A git operation of the cache failed; `stderr` is git's own explanation."""

    def __init__(self, message: str, stderr: str = "") -> None:
        super().__init__(f"{message}: {stderr.strip()}" if stderr.strip() else message)
        self.stderr = stderr


def is_local_url(url: str) -> bool:
    """file:// URLs and plain paths: remotes whose upload-pack runs on this machine.

    Only file:// gives a real partial clone: for a plain path git makes a local (hardlinked,
    unfiltered) clone instead, which works the same but holds every blob.
    """
    return url.startswith(("file://", "/", "./", "../"))


class IsolatedGit:
    """git under `root/.home` as its home, with the options above; `_run` raises `RepoCacheError` with git's stderr."""

    def __init__(self, root: Path, git: str = "git", timeout: float = 1800.0) -> None:
        self.root = Path(root).absolute()
        self.git = git
        self.timeout = timeout
        home = self.root / ".home"
        self._env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        self._env.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / ".config"),
            GIT_TERMINAL_PROMPT="0",
            GIT_CONFIG_NOSYSTEM="1",
            GIT_HTTP_LOW_SPEED_LIMIT="1000",  # abort transfers stalled below 1 kB/s for a minute
            GIT_HTTP_LOW_SPEED_TIME="60",
            LC_ALL="C",  # stable, English stderr in our errors
        )

    def _upload_pack(self) -> str:
        """The upload-pack command for local remotes, with the server options it needs."""
        options = " ".join(f"-c {opt}" for opt in _SERVER_CONFIG)
        return f"{shlex.quote(self.git)} {options} upload-pack"

    def _upload_pack_args(self, url: str) -> list[str]:
        return ["--upload-pack", self._upload_pack()] if is_local_url(url) else []

    def _ok(self, args: list[str], cwd: Path) -> bool:
        return self._run(args, cwd=cwd, check=False).returncode == 0

    def _run(
        self, args: list[str], cwd: Path | None = None, *, text: bool = True, check: bool = True, what: str = ""
    ) -> subprocess.CompletedProcess:
        """Run git; with `check`, a failure raises `RepoCacheError` carrying git's stderr."""
        (self.root / ".home").mkdir(parents=True, exist_ok=True)
        cmd = [self.git, "--literal-pathspecs"]
        for option in _CONFIG:
            cmd += ["-c", option]
        try:
            proc = subprocess.run(
                [*cmd, *args], cwd=cwd, env=self._env, capture_output=True, text=text, check=False, timeout=self.timeout
            )
        except FileNotFoundError as exc:
            raise RepoCacheError(f"git executable {self.git!r} not found") from exc
        except subprocess.TimeoutExpired as exc:
            raise RepoCacheError(f"{what or 'git ' + args[0]}: timed out after {self.timeout}s") from exc
        if check and proc.returncode != 0:
            stderr = proc.stderr if text else proc.stderr.decode("utf-8", "replace")
            raise RepoCacheError(what or f"git {args[0]} failed (exit {proc.returncode})", stderr)
        return proc
