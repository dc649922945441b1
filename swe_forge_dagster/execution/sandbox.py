"""A long-lived Docker container that repository code runs in, driven one shell command at a time.

Installs, test suites and the shell commands of LLM agents are untrusted: they run in a container,
never on the host. The task builder and the agents need a *session* rather than isolated
`docker run`s (a `cd` or an activated venv carries over, a background server keeps running), so
the container idles and each command is a `docker exec` through a bash runner that restores and
saves the shell state (see `shell_state`). Limits bound what one command can do to the machine:
CPU, memory (no extra swap), process count, what it may write to disk (`disk_guard`), the network
mode, `no-new-privileges`, and a host-side timeout that kills the command's whole process group.

Capabilities stay at Docker's default set (no `privileged`): that set already excludes the
dangerous ones (SYS_ADMIN, NET_ADMIN, SYS_PTRACE, ...), while apt needs SETUID/SETGID/CHOWN/
DAC_OVERRIDE/FOWNER to drop to its `_apt` user and pip builds need to chown and chmod.

Crashed runs leave nothing behind: every container carries `swe-forge=1` and its owner's boot id,
pid namespace, pid and process start time (`ownership`), and `cleanup_stale` removes those whose
owner is gone.
"""

from __future__ import annotations

import contextlib
import io
import logging
import posixpath
import re
import tarfile
import tempfile
import threading
import time
import uuid
import weakref
from pathlib import Path
from typing import Any, Self

import docker
from docker.errors import NotFound
from docker.models.containers import Container

from swe_forge_dagster.execution.disk_guard import DiskWatch, create_options, engine_has_quota
from swe_forge_dagster.execution.engine_cpus import start_within_engine
from swe_forge_dagster.execution.ownership import RESERVED_LABELS, owner_labels, remove_container
from swe_forge_dagster.execution.sandbox_config import (
    DISK_EXIT_CODE,
    KEEPALIVE,
    KILL_GRACE_S,
    MAX_SYMLINKS,
    TIMEOUT_EXIT_CODE,
    CommandResult,
    Mounts,
    SandboxConfig,
    bind_mounts,
)
from swe_forge_dagster.execution.shell_state import (
    CMD_NAME,
    CWD_FILE,
    ENV_DUMP_SCRIPT,
    INIT_SCRIPT,
    KILL_SCRIPT,
    RUNNER_SCRIPT,
    SHELL_ONLY_VARS,
    STATE_DIR,
    OutputBuffer,
    SandboxError,
    StreamReader,
    exec_exit_code,
)

log = logging.getLogger(__name__)


class Sandbox:
    """A running sandbox container; use `Sandbox.start`, and `close()` it (or use it as a context manager).

    Commands are serialized (a lock): the shell state is one session, as in a terminal.
    """

    def __init__(self, client: docker.DockerClient, container: Container, config: SandboxConfig, session: str) -> None:
        self.client = client
        self.container = container
        self.config = config
        self.session = session
        self._lock = threading.Lock()
        # Removes the container when closed, when garbage collected, or at interpreter exit,
        # whichever comes first, and only once: this is what makes close() idempotent.
        self._finalizer = weakref.finalize(self, remove_container, client.api, container.id)
        self._watch: DiskWatch | None = None

    @classmethod
    def start(
        cls,
        client: docker.DockerClient,
        config: SandboxConfig,
        *,
        name_hint: str,
        mounts: Mounts | None = None,
    ) -> Self:
        """Create and start the container, and initialize its shell state in `config.workdir` (a missing image is
        made first by the configuration's hook, when it has one: the product's builds toolchain images,
        `environments.toolchain_images`)."""
        if config.ensure_image is not None:
            config.ensure_image(client, config.image)
        session = uuid.uuid4().hex

        def create(nano: int) -> Container:  # made again with fewer CPUs when the engine's cgroup allows less
            return client.containers.create(
                config.image,
                ["sh", "-c", KEEPALIVE],
                name=f"swe-forge-{_slug(name_hint)}-{session[:8]}",
                labels={**config.labels, **owner_labels(session)},
                environment=config.environment(),
                working_dir=config.workdir,
                nano_cpus=nano,
                mem_limit=config.mem_limit,
                memswap_limit=config.mem_limit,
                pids_limit=config.pids_limit,
                network_mode=config.network,
                security_opt=["no-new-privileges"],
                privileged=False,
                mounts=bind_mounts(config, mounts),
                detach=True,
                **create_options(client, config.disk_limit, config.image),
            )

        container = start_within_engine(client, create, config.cpu)
        sandbox = cls(client, container, config, session)
        try:
            exit_code, output = container.exec_run(["/bin/bash", "-c", INIT_SCRIPT], workdir=config.workdir)
            if exit_code != 0:
                raise SandboxError(f"shell state init failed ({exit_code}): {output.decode(errors='replace')}")
        except BaseException:
            sandbox.close()
            raise
        return sandbox

    @property
    def id(self) -> str:
        return self.container.id

    @property
    def name(self) -> str:
        return self.container.name

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Sandbox({self.name}, image={self.config.image!r})"

    def close(self) -> None:
        """Force-remove the container (and its anonymous volumes); safe to call again."""
        if self._watch is not None:
            self._watch.stop()
        self._finalizer()

    def run(self, command: str, timeout: float = 600, max_output: int = 30000) -> CommandResult:
        """Run `command` through bash in the persistent shell session.

        On timeout the command's whole process group is killed (background jobs too), its state
        changes are lost, and the result has `timed_out=True, exit_code=124`; the sandbox stays usable.
        """
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, got {timeout}")
        buffer = OutputBuffer(max_output)
        api = self.client.api
        with self._lock:
            run_id = uuid.uuid4().hex[:16]
            self._put(STATE_DIR, {CMD_NAME: command.encode()}, mode=0o600)
            started = time.monotonic()
            runner = ["env", "-i", "/bin/bash", "-c", RUNNER_SCRIPT, "sandbox", run_id, f"{STATE_DIR}/{CMD_NAME}"]
            exec_id = api.exec_create(self.id, runner, stdout=True, stderr=True, workdir="/")["Id"]
            reader = StreamReader(api.exec_start(exec_id, socket=True), buffer)
            reader.start()
            watch = self._disk_watch()
            try:
                reader.join(timeout)
                timed_out = reader.is_alive() and not watch.exceeded
                if timed_out:
                    self._kill(run_id)
                    reader.join(KILL_GRACE_S)
                    if reader.is_alive():  # a process that left the group still holds the output open
                        reader.abort()
                        reader.join(1.0)
                    exit_code = TIMEOUT_EXIT_CODE
                elif watch.exceeded:  # the watch killed the container
                    reader.join(KILL_GRACE_S)
                    if reader.is_alive():
                        reader.abort()
                        reader.join(1.0)
                    exit_code = DISK_EXIT_CODE
                else:
                    if reader.error is not None:
                        raise SandboxError(f"reading the output of {command!r} failed") from reader.error
                    exit_code = exec_exit_code(api, exec_id)
            finally:
                reader.close()
            duration = time.monotonic() - started
        return CommandResult(
            command=command,
            exit_code=exit_code,
            output=buffer.render(),
            truncated=buffer.truncated,
            duration_s=duration,
            timed_out=timed_out,
            disk_exceeded=watch.exceeded,
        )

    @property
    def cwd(self) -> str:
        """The shell session's current directory (where relative paths in this API resolve)."""
        data = self.read_file(CWD_FILE)
        return data.decode(errors="replace").rstrip("\n") if data else self.config.workdir

    def write_file(self, path: str, content: bytes | str, mode: int = 0o644) -> str:
        """Write a file (parents created) without a shell, so no content needs quoting; returns the path."""
        target = self._absolute(path)
        data = content.encode() if isinstance(content, str) else content
        directory, name = posixpath.split(target)
        self._put(directory, {name: data}, mode=mode)
        return target

    def read_file(self, path: str, max_bytes: int = 64 << 20, *, follow_symlinks: bool = True) -> bytes | None:
        """A file's bytes, or None when it does not exist.

        Symlinks are followed, or with `follow_symlinks=False` refused (SandboxError). Anything but a
        regular file is refused, and so is a file over `max_bytes`: its size is checked before the
        transfer, and the archive stream is abandoned once it grows past the limit, never buffered whole.
        """
        target = self._absolute(path)
        for _ in range(MAX_SYMLINKS):
            try:
                stream, stat = self.container.get_archive(target)
            except NotFound:
                return None
            mode = int(stat.get("mode", 0))
            if mode & (1 << 31):  # Go's os.ModeDir
                raise IsADirectoryError(target)
            if mode & (1 << 27) and not follow_symlinks:  # os.ModeSymlink
                raise SandboxError(f"{target} is a symbolic link")
            if int(stat.get("size", 0)) > max_bytes:
                raise SandboxError(f"{target} is {stat.get('size')} bytes, over the {max_bytes} byte limit")
            data = bytearray()
            for chunk in stream:  # the tar adds headers and padding: a few blocks, a 10 KiB record
                data += chunk
                if len(data) > max_bytes + (1 << 20):
                    raise SandboxError(f"{target} is over the {max_bytes} byte limit")
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                member = tar.next()
                if member is None:
                    return None
                if member.issym():
                    if not follow_symlinks:
                        raise SandboxError(f"{target} is a symbolic link")
                    target = posixpath.normpath(posixpath.join(posixpath.dirname(target), member.linkname))
                    continue
                if member.isdir():
                    raise IsADirectoryError(target)
                extracted = tar.extractfile(member) if member.isreg() else None
                if extracted is None or member.size > max_bytes:
                    raise SandboxError(f"{target} is not a regular file of at most {max_bytes} bytes")
                return extracted.read()
        raise SandboxError(f"too many levels of symbolic links: {path}")

    def copy_in(self, host_dir: str | Path, container_dir: str) -> str:
        """Copy a host directory's contents into `container_dir` (created), owned by root.

        Ownership is rewritten to root because the host uid means nothing in the container and
        git refuses repositories owned by another user. The tar spools to disk past a few MB,
        so a large checkout does not sit in memory. A git *worktree* has a `.git` file pointing
        at the host's repository, which does not exist in the container: copy a clone.
        """
        source = Path(host_dir)
        if not source.is_dir():
            raise NotADirectoryError(str(source))
        target = self._absolute(container_dir)
        self._mkdir(target)
        with tempfile.SpooledTemporaryFile(max_size=8 << 20) as spool:
            with tarfile.open(fileobj=spool, mode="w") as tar:
                for entry in sorted(source.iterdir()):
                    tar.add(entry, arcname=entry.name, filter=owned_by_root)
            spool.seek(0)
            if not self.container.put_archive(target, spool):
                raise SandboxError(f"copying {source} into {target} failed")
        return target

    def commit(
        self, repository: str, tag: str, labels: dict[str, str] | None = None, *, bake_state: bool = True
    ) -> str:
        """Snapshot the container as an image (to cache an environment); returns the image id.

        With `bake_state`, the session's exported environment and working directory become the
        image's Env and WorkingDir, so an activated venv survives into any container of it, also
        ones not started through `Sandbox`. The ownership labels are blanked: an image must not
        make its containers look like this (soon dead) session's.
        """
        conf: dict[str, Any] = {"Labels": {**dict.fromkeys(RESERVED_LABELS, ""), **(labels or {})}}
        with self._lock:  # not in the middle of a command
            if bake_state:
                conf["Env"] = [f"{k}={v}" for k, v in self._persistent_env().items() if k not in SHELL_ONLY_VARS]
                conf["WorkingDir"] = self.cwd
            image = self.container.commit(repository=repository, tag=tag, conf=conf)
        return image.id

    def _absolute(self, path: str) -> str:
        return posixpath.normpath(path if path.startswith("/") else posixpath.join(self.cwd, path))

    def _exec(self, argv: list[str]) -> tuple[int, str]:
        exit_code, output = self.container.exec_run(argv)
        return exit_code, output.decode(errors="replace")

    def _mkdir(self, directory: str) -> None:
        exit_code, output = self._exec(["mkdir", "-p", "--", directory])
        if exit_code != 0:
            raise SandboxError(f"mkdir -p {directory} failed: {output}")

    def _put(self, directory: str, files: dict[str, bytes], mode: int) -> None:
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w") as tar:
            for name, data in files.items():
                info = tarfile.TarInfo(name)
                info.size, info.mode, info.mtime = len(data), mode, int(time.time())
                tar.addfile(owned_by_root(info), io.BytesIO(data))
        try:
            ok = self.container.put_archive(directory, archive.getvalue())
        except NotFound:  # the parent folder is missing (or the state folder was deleted)
            self._mkdir(directory)
            ok = self.container.put_archive(directory, archive.getvalue())
        if not ok:
            raise SandboxError(f"writing {sorted(files)} into {directory} failed")

    def _disk_watch(self) -> DiskWatch | _NoWatch:
        """The container's disk watch (`disk_guard`), started by the first command so that what the harness put in
        /repo before it is not counted; nothing to do without a limit, or when the engine enforces a quota."""
        limit = self.config.disk_limit
        if limit is None or engine_has_quota(self.client, self.config.image):
            return _NO_WATCH
        if self._watch is None:
            self._watch = DiskWatch(self.client, self.id, limit, self._stop_for_disk)
        return self._watch

    def _stop_for_disk(self) -> None:
        log.warning("%s wrote past its disk limit (%s): killing it", self.name, self.config.disk_limit)
        with contextlib.suppress(docker.errors.DockerException):
            self.container.kill()

    def _kill(self, run_id: str) -> None:
        exit_code, output = self._exec(["/bin/bash", "-c", KILL_SCRIPT, "kill", run_id])
        if exit_code != 0:
            log.warning("killing timed-out command %s in %s failed (%s): %s", run_id, self.name, exit_code, output)

    def _persistent_env(self) -> dict[str, str]:
        exit_code, output = self.container.exec_run(["env", "-i", "/bin/bash", "-c", ENV_DUMP_SCRIPT])
        if exit_code != 0:
            raise SandboxError(f"reading the session environment failed: {output.decode(errors='replace')}")
        pairs = (item.decode(errors="replace").partition("=") for item in output.split(b"\0") if item)
        return {name: value for name, _, value in pairs}


class _NoWatch:
    exceeded = False

    def stop(self) -> None:
        pass


_NO_WATCH = _NoWatch()


def owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """A tar member owned by root (the host uid means nothing in a container, and git refuses other owners)."""
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def _slug(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_.-]+", "-", text).strip("-._")[:48] or "sandbox"
