"""llama.cpp's server in this process (the `xllamacpp` wheel), serving a verified GGUF on 127.0.0.1.

The engine is the optional `local-llm` extra: installed on first use into the running interpreter's environment
(uv, as `scripts/bootstrap` does, else pip) at the version `pyproject.toml` pins, never by the default install.
The server speaks OpenAI's `/v1/chat/completions` with `tools`, so `SWE_FORGE_LLM_BASE_URL=http://127.0.0.1:PORT/v1`
runs every LLM stage against it with no other change (the client reads calls the model writes as text:
`llm.content_calls`).

Threads: generation on two cores collapses under load unless OpenMP waits passively (`OMP_WAIT_POLICY=PASSIVE`,
set before the engine loads), and prompt processing and generation share the threads given.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from swe_forge_dagster.common.uv import uv_binary, uv_environment

EXTRA = "local-llm"
ENGINE = "xllamacpp"
ENGINE_PIN = "xllamacpp==2026.10.11549"
"""The extra's pin in `pyproject.toml` (a test holds them equal): used when the installed metadata predates it."""


class EngineError(RuntimeError):
    """The engine cannot be installed or started (a clear message, never a traceback)."""


@dataclass(frozen=True)
class ServeOptions:
    """How the server runs: where it listens, its threads, its context (shared by the slots) and its slots."""

    host: str = "127.0.0.1"
    port: int = 8080
    threads: int = 1
    context: int = 8192
    parallel: int = 1


def pinned_requirement() -> str:
    """The engine's requirement as the project pins it (`[project.optional-dependencies] local-llm`)."""
    try:
        requirements = importlib.metadata.requires("swe-forge-dagster") or []
    except importlib.metadata.PackageNotFoundError:
        requirements = []
    for requirement in requirements:
        name, _, marker = requirement.partition(";")
        if name.strip().startswith(ENGINE) and EXTRA in marker:
            return name.strip().replace(" ", "")
    return ENGINE_PIN


def ensure_engine(say: Any = print) -> Any:
    """The `xllamacpp` module, installed first when it is missing."""
    try:
        return importlib.import_module(ENGINE)
    except ImportError:
        pass
    requirement = pinned_requirement()
    uv = uv_binary()
    command = (
        [uv, "pip", "install", "--python", sys.executable, requirement]
        if uv
        else [sys.executable, "-m", "pip", "install", requirement]
    )
    say(f"installing the engine ({requirement}, the `{EXTRA}` extra): {' '.join(command)}")
    done = subprocess.run(command, capture_output=True, text=True, env=uv_environment())
    if done.returncode != 0:
        raise EngineError(f"could not install {requirement}: {(done.stderr or done.stdout).strip()[-800:]}")
    importlib.invalidate_caches()
    return importlib.import_module(ENGINE)


def port_taken(port: int, host: str = "127.0.0.1") -> str:
    return f"{host}:{port} is taken: stop what listens there or pass --port"


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def start_server(model: Path, options: ServeOptions, alias: str, say: Any = print) -> Any:
    """llama.cpp's server on `options.host:port` with `model` loaded; returns the server (it lives while referenced)."""
    if options.host not in ("127.0.0.1", "localhost", "::1"):
        raise EngineError(f"the local model serves on loopback only, not {options.host}")
    if not port_free(options.host, options.port):
        raise EngineError(port_taken(options.port, options.host))
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    engine = ensure_engine(say)
    params = engine.CommonParams()
    params.model.path = str(model)
    params.model_alias = alias
    params.n_ctx = options.context
    params.n_parallel = options.parallel
    params.use_jinja = True  # the GGUF's own chat template, which writes `tools` into the prompt
    params.cpuparams.n_threads = options.threads
    params.cpuparams_batch.n_threads = options.threads
    params.hostnames = [options.host]
    params.port = options.port
    params.warmup = False
    try:
        return engine.Server(params)
    except Exception as exc:  # the engine's own error (a model it cannot load): its words, no traceback
        raise EngineError(f"llama.cpp could not serve {model}: {exc}") from None
