"""`swe-forge dev`: `dagster dev` on the persistent instance (extra arguments are passed through).

On any home, `dagster dev` replaces this process (exec). On a demo's home (`SWE_FORGE_DEMO_WORLD`, which
`swe-forge demo` writes into the home's `settings.env`), this process stays: it serves the demo world's
GitHub and LLM twins on 127.0.0.1 (`demo.world_home`) and runs `dagster dev` as its child, with the settings
pointing at them, forwarding SIGINT and SIGTERM to it; the twins stop when `dagster dev` does.
Exit codes: `dagster dev`'s own; 2 when the home's demo world cannot be read.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType

import typer

from swe_forge_dagster.cli.common import err, say, usage_error
from swe_forge_dagster.settings import get_settings

FORWARDED = (signal.SIGINT, signal.SIGTERM)


def dev(ctx: typer.Context) -> None:
    """`dagster dev` on the persistent instance (extra arguments are passed through)."""
    from swe_forge_dagster.orchestration.instance import open_instance

    settings = get_settings()
    open_instance(settings)  # DAGSTER_HOME, pool limits, and runs of killed processes failed first
    target = ["-w", "workspace.yaml"] if Path("workspace.yaml").is_file() else ["-m", "swe_forge_dagster.definitions"]
    dagster = shutil.which("dagster") or str(Path(sys.executable).with_name("dagster"))
    command = [dagster, "dev", *target, *ctx.args]
    err.print(f"DAGSTER_HOME={os.environ['DAGSTER_HOME']} dagster dev {' '.join(target + ctx.args)}", markup=False)
    if settings.demo_world is None:
        os.execv(dagster, command)
    from swe_forge_dagster.demo.world_home import DemoWorldError, announced_demo_world

    try:
        with announced_demo_world(settings, lambda line: say("demo world:", "bold yellow", line)) as served:
            assert served is not None  # a demo world is set
            raise typer.Exit(run_forwarding_signals(command, {**os.environ, **served[0].child_env()}))
    except DemoWorldError as exc:
        raise usage_error(str(exc)) from None


def run_forwarding_signals(command: Sequence[str], env: Mapping[str, str]) -> int:
    """Run `command` as a child in its own process group, forward SIGINT/SIGTERM to it, return its exit code.

    Its own group: a Ctrl-C at the terminal reaches this process only, which passes it on, so the child gets
    each signal once however it was sent (the terminal, or `kill` of this process). The handlers are in place
    before the child starts, so it starts with both signals at their defaults even when this process was
    started with SIGINT ignored (a background job of a script): `dagster dev` maps SIGTERM to its SIGINT
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
