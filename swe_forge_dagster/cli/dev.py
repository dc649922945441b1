"""`swe-forge dev`: `dg dev` on the persistent instance (extra arguments are passed through).

On any home, `dg dev` replaces this process (exec). On a demo's home (`SWE_FORGE_DEMO_WORLD`, which
`swe-forge demo` writes into the home's `settings.env`), this process stays: it serves the demo world's
GitHub and LLM twins on 127.0.0.1 (`demo.world_home`) and runs `dg dev` as its child, with the settings
pointing at them, forwarding SIGINT and SIGTERM to it; the twins stop when `dg dev` does.
Exit codes: `dg dev`'s own; 2 when the home's demo world cannot be read.

Why `dg dev` and a filter, and not `dagster dev` as it is: Dagster 1.13's `dagster dev` starts with a
`SupersessionWarning` ("Use 'dg dev' instead"), and both commands log a WARNING when the working folder holds
a `dagster.yaml` while `DAGSTER_HOME` names another folder. Both read as faults and are none here: `dg dev`
with an explicit target (`-w workspace.yaml` or `-m`) is the same server (it goes straight to `dagster dev`'s
own implementation, no `[tool.dg]` project needed), and this project's `./dagster.yaml` is by design only for a
plain `dagster dev` with `DAGSTER_HOME` unset, while `swe-forge dev` always runs on the home's instance. So the
child is `dg dev` run by `serve`, which drops that one log record (nothing else), and this command says
instead, as information, which instance configuration is in force. Moving the child to another working
folder would silence it too, but would lose the folder's `.env` and the relative `SWE_FORGE_HOME` it means.
On an instance no Dagster daemon has run on yet (a new home, the demo's), the daemon's first tick would log
two WARNINGs ("No cursor for event type RUN_FAILURE, ignoring older events"); `seed_run_retry_cursors` sets
those cursors first, where that tick would set them, so the start prints no WARNING at all
(`tests/test_dev_startup.py` starts `swe-forge dev` for real and checks).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import typer

from swe_forge_dagster.cli.common import err, say, usage_error
from swe_forge_dagster.settings import get_settings

if TYPE_CHECKING:
    from dagster import DagsterInstance

FORWARDED = (signal.SIGINT, signal.SIGTERM)
CWD_CONFIG_NOTICE = "Found a dagster instance configuration value"
"""How Dagster's WARNING about a `dagster.yaml` in the working folder begins (`dagster._cli.dev`)."""
SERVE = "import sys; from swe_forge_dagster.cli.dev import serve; serve(sys.argv[1:])"


def dev(ctx: typer.Context) -> None:
    """`dg dev` on the persistent instance (extra arguments are passed through)."""
    from swe_forge_dagster.orchestration.instance import open_instance

    settings = get_settings()
    instance = open_instance(settings)  # DAGSTER_HOME, pool limits, and runs of killed processes failed first
    seed_run_retry_cursors(instance)
    target = ["-w", "workspace.yaml"] if Path("workspace.yaml").is_file() else ["-m", "swe_forge_dagster.definitions"]
    command = [sys.executable, "-c", SERVE, *target, *ctx.args]
    home = Path(os.environ["DAGSTER_HOME"])
    err.print(f"DAGSTER_HOME={home} dg dev {' '.join(target + ctx.args)}", markup=False)
    if Path("dagster.yaml").is_file() and Path.cwd().resolve() != home.resolve():
        err.print(
            f"instance configuration: {home / 'dagster.yaml'} (./dagster.yaml is read only by a plain "
            "`dagster dev` with DAGSTER_HOME unset)",
            markup=False,
        )
    if settings.demo_world is None:
        os.execv(sys.executable, command)
    from swe_forge_dagster.demo.world_home import DemoWorldError, announced_demo_world

    try:
        with announced_demo_world(settings, lambda line: say("demo world:", "bold yellow", line)) as served:
            assert served is not None  # a demo world is set
            raise typer.Exit(run_forwarding_signals(command, {**os.environ, **served[0].child_env()}))
    except DemoWorldError as exc:
        raise usage_error(str(exc)) from None


def seed_run_retry_cursors(instance: DagsterInstance) -> None:
    """Set the daemon's missing run-retry cursors at the newest event, as its first tick would (older runs are
    not retried), so that the tick does not say so as a WARNING; cursors already there are left as they are.
    The cursors' names are the daemon's own (private) code: should an upgrade move it, nothing is seeded and
    the WARNINGs come back, which `tests/test_dev_startup.py` reports."""
    try:
        from dagster._daemon.auto_run_reexecution.event_log_consumer import DAGSTER_EVENT_TYPES, _create_cursor_key
    except ImportError:
        return
    keys = {_create_cursor_key(event_type) for event_type in DAGSTER_EVENT_TYPES}
    storage = instance.daemon_cursor_storage
    missing = keys - set(storage.get_cursor_values(keys))
    if missing:
        newest = instance.event_log_storage.get_maximum_record_id() or 0
        storage.set_cursor_values(dict.fromkeys(sorted(missing), str(newest)))


def serve(argv: Sequence[str]) -> None:
    """`dg dev argv` in this process, without Dagster's notice about a `dagster.yaml` in the working folder
    (`swe-forge dev` has said which configuration is in force); every other record is logged as usual."""
    logging.getLogger("dagster").addFilter(without_cwd_config_notice)
    from dagster_dg_cli.cli.dev import dev_command

    dev_command.main(args=list(argv), prog_name="dg dev")


def without_cwd_config_notice(record: logging.LogRecord) -> bool:
    """False for Dagster's record about a `dagster.yaml` in the working folder, True for any other."""
    return not record.getMessage().startswith(CWD_CONFIG_NOTICE)


def run_forwarding_signals(command: Sequence[str], env: Mapping[str, str]) -> int:
    """Run `command` as a child in its own process group, forward SIGINT/SIGTERM to it, return its exit code.

    Its own group: a Ctrl-C at the terminal reaches this process only, which passes it on, so the child gets
    each signal once however it was sent (the terminal, or `kill` of this process). The handlers are in place
    before the child starts, so it starts with both signals at their defaults even when this process was
    started with SIGINT ignored (a background job of a script): `dg dev` maps SIGTERM to its SIGINT
    handler, and would otherwise ignore both. A signal that arrives before the child exists is sent once it does.
    A child ended by a signal gives 128 + its number, as a shell reports it."""
    started: list[subprocess.Popen[bytes]] = []
    pending: list[int] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        if not started:
            pending.append(signum)
            return
        with contextlib.suppress(ProcessLookupError):
            started[0].send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    try:
        started.append(subprocess.Popen(list(command), env=dict(env), process_group=0))
        for signum in pending:
            started[0].send_signal(signum)
        code = started[0].wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 128 - code if code < 0 else code
