"""Debian's PostgreSQL on 127.0.0.1 for tests: a throwaway cluster, a password user, a database.

    server = PostgresServer(tmp_path / "pg")
    url = server.start()                  # postgresql://swe:<pw>@127.0.0.1:<port>/swe_forge
    other = server.new_database("b")      # another database on the same server, same user
    server.stop()                         # the cluster and its data are gone

    with postgres_database(tmp_path / "pg") as url: ...        # one server for one test
    def test_x(postgres_server: PostgresServer): ...           # one server for the whole session
    def test_y(postgres_db: str): ...                          # a fresh database on it, per test

The binaries are Debian's (`/usr/lib/postgresql/<major>/bin`, package `postgresql`); without them a test
is skipped with the reason, or fails under SWE_FORGE_REQUIRE_DOCKER=1 (CI installs the package).
Postgres refuses to run as root, so as root `initdb` and `pg_ctl` run as the `postgres` user through
`runuser`, on a data folder it owns in /tmp (pytest's own temporary folders are closed to other users).
The server listens on one free loopback port and a Unix socket in its data folder (the superuser
connects there, without a password, to create the user and databases); TCP logins need the password.
Durability is switched off (`fsync=off`): a test cluster is thrown away, and it is several times faster.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg2
import pytest

HOST = "127.0.0.1"
USER, DATABASE = "swe", "swe_forge"
OS_USER = "postgres"  # who runs the server when the tests run as root


def postgres_bin_dir() -> Path | None:
    """The newest installed `/usr/lib/postgresql/<major>/bin` holding `postgres`, `initdb` and `pg_ctl`."""
    found = [p.parent for p in Path("/usr/lib/postgresql").glob("*/bin/postgres") if (p.parent / "pg_ctl").is_file()]
    return max(found, key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0) if found else None


def require_postgres() -> Path:
    """The binaries' folder, or skip the test (fail under SWE_FORGE_REQUIRE_DOCKER=1) saying what is missing."""
    bin_dir = postgres_bin_dir()
    reason = None
    if bin_dir is None:
        reason = "PostgreSQL not installed (apt-get install postgresql): /usr/lib/postgresql/*/bin/postgres missing"
    elif os.geteuid() == 0 and (shutil.which("runuser") is None or not _has_os_user(OS_USER)):
        reason = f"running as root needs `runuser` and the `{OS_USER}` user to start PostgreSQL"
    if reason is None:
        assert bin_dir is not None
        return bin_dir
    if os.environ.get("SWE_FORGE_REQUIRE_DOCKER") == "1":
        pytest.fail(reason)
    pytest.skip(reason)


def _has_os_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class PostgresServer:
    """One PostgreSQL cluster: `start()` gives the URL of its `swe_forge` database, `stop()` removes it all."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)  # the server log is copied here on stop (the data folder itself is in /tmp)
        self.password = secrets.token_hex(12)
        self.port = 0
        self.url = ""
        self._bin: Path | None = None
        self._dir: Path | None = None

    # -- lifecycle ------------------------------------------------------------------------
    def start(self, attempts: int = 3) -> str:
        """initdb, start on a free loopback port, create the user and database; the database's URL."""
        self._bin = require_postgres()
        self.root.mkdir(parents=True, exist_ok=True)
        self._dir = Path(tempfile.mkdtemp(prefix="swe-forge-pg-"))
        if os.geteuid() == 0:
            shutil.chown(self._dir, OS_USER, OS_USER)
        self._run(
            "initdb",
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync",
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
        )
        for attempt in range(attempts):  # the free port may be taken before the server binds it
            self.port = _free_port()
            options = " ".join(
                [
                    f"-p {self.port} -c listen_addresses={HOST} -c unix_socket_directories={self._dir}",
                    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off",
                    "-c max_connections=300",
                ]
            )
            started = self._run(
                "pg_ctl",
                "-D",
                str(self.data),
                "-l",
                str(self.log),
                "-w",
                "-t",
                "60",
                "-o",
                options,
                "start",
                check=False,
            )
            if started.returncode == 0:
                break
            if attempt == attempts - 1:
                self._remove()
                raise RuntimeError(f"PostgreSQL did not start: {started.stderr[-1000:]}\n{self._log_tail()}")
        with self.admin() as cursor:
            cursor.execute(f"CREATE ROLE {USER} LOGIN CREATEDB PASSWORD %s", (self.password,))
        self.url = self.new_database(DATABASE)
        return self.url

    def stop(self) -> None:
        """Stop the server (fast shutdown: open sessions are ended) and delete its data."""
        if self._dir is None:
            return
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "-t", "60", "stop", check=False)
        with contextlib.suppress(OSError):
            shutil.copyfile(self.log, self.root / "postgres.log")
        self._remove()

    def __enter__(self) -> PostgresServer:
        if not self.url:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- databases ------------------------------------------------------------------------
    def new_database(self, name: str) -> str:
        """Create database `name` owned by the password user; its URL (libpq form)."""
        if not name.replace("_", "").isalnum():
            raise ValueError(f"database name {name!r}: letters, digits and _ only")
        with self.admin() as cursor:
            cursor.execute(f"CREATE DATABASE {name} OWNER {USER}")
        return f"postgresql://{USER}:{self.password}@{HOST}:{self.port}/{name}"

    @contextlib.contextmanager
    def admin(self, database: str = "postgres") -> Iterator[psycopg2.extensions.cursor]:
        """A superuser cursor (autocommit) over the Unix socket: for setup and for inspecting a test's effects."""
        connection = psycopg2.connect(host=str(self._dir), port=self.port, user="postgres", dbname=database)
        connection.autocommit = True
        try:
            with connection.cursor() as cursor:
                yield cursor
        finally:
            connection.close()

    # -- internals ------------------------------------------------------------------------
    @property
    def data(self) -> Path:
        assert self._dir is not None, "start() first"
        return self._dir / "data"

    @property
    def log(self) -> Path:
        assert self._dir is not None, "start() first"
        return self._dir / "postgres.log"

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        assert self._bin is not None
        command = [str(self._bin / tool), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", OS_USER, "--", *command]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=self._dir)
        if check and result.returncode != 0:
            raise RuntimeError(f"{tool} failed ({result.returncode}): {result.stderr[-2000:]}")
        return result

    def _log_tail(self) -> str:
        try:
            return self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no server log)"

    def _remove(self) -> None:
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


@contextlib.contextmanager
def postgres_database(root: Path) -> Iterator[str]:
    """A server of its own for one test: the URL of its database, the server stopped and removed after."""
    with PostgresServer(root) as server:
        yield server.url


@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PostgresServer]:
    """One server for the session (starting one costs ~2 s); tests take their own database on it."""
    with PostgresServer(tmp_path_factory.mktemp("postgres")) as server:
        yield server


@pytest.fixture
def postgres_db(postgres_server: PostgresServer) -> str:
    """The URL of a fresh, empty database on the session's server (each test its own: no state leaks)."""
    return postgres_server.new_database(f"t_{secrets.token_hex(6)}")
