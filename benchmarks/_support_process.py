"""A test-support module run in its own process, its last stdout line read as JSON: how benchmarks reuse the test
worlds (deployments, red teams) without importing test code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def run_support(module: str, *args: str, what: str, timeout: float = 7200) -> Any:
    """`python -m MODULE ARGS` from the repository's root; its last stdout line, parsed (SystemExit naming `what`
    and the tail of its stderr when it fails or prints nothing)."""
    done = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise SystemExit(f"{what}: the run failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])
