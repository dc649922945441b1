"""The persistent Dagster instance, pool limits, and `dagster dev -w workspace.yaml` for real."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import httpx
import pytest
import yaml

from swe_forge_dagster.orchestration.instance import POOL_LIMITS, TEMPLATE, ensure_dagster_home, set_pool_limits
from swe_forge_dagster.settings import Settings
from tests.support.common import REPO_ROOT


def test_dagster_home_defaults_under_swe_forge_home(home: Path) -> None:
    path = ensure_dagster_home(Settings())
    assert path == home / "dagster" and os.environ["DAGSTER_HOME"] == str(path)
    assert (path / "dagster.yaml").read_text() == TEMPLATE.read_text()
    (path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")  # a user's edit survives
    ensure_dagster_home(Settings())
    assert (path / "dagster.yaml").read_text() == "telemetry:\n  enabled: false\n"


def test_explicit_dagster_home_is_respected(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "elsewhere"))
    assert ensure_dagster_home(Settings()) == tmp_path / "elsewhere"


def test_pool_limits_are_written_to_the_instance(instance: dg.DagsterInstance) -> None:
    set_pool_limits(instance)
    for pool, limit in POOL_LIMITS.items():
        assert instance.event_log_storage.get_concurrency_info(pool).slot_count == limit


def test_template_loads_as_an_instance(tmp_path: Path) -> None:
    from dagster._core.instance.ref import InstanceRef

    shutil.copyfile(TEMPLATE, tmp_path / "dagster.yaml")
    with dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(tmp_path))) as instance:
        assert instance.run_coordinator.__class__.__name__ == "QueuedRunCoordinator"


def test_root_dagster_yaml_is_the_template_plus_relative_storage() -> None:
    root = yaml.safe_load((REPO_ROOT / "dagster.yaml").read_text())
    template = yaml.safe_load(TEMPLATE.read_text())
    storage_keys = {"storage", "local_artifact_storage", "compute_logs"}
    assert {k: v for k, v in root.items() if k not in storage_keys} == template
    assert root["storage"]["sqlite"]["base_dir"] == ".swe-forge/dagster/storage"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_dagster_dev_loads_the_workspace_and_persists_state(tmp_path: Path) -> None:
    """`dagster dev -w workspace.yaml` with DAGSTER_HOME unset: loads, and keeps state in ./.swe-forge."""
    for name in ("workspace.yaml", "dagster.yaml"):
        shutil.copyfile(REPO_ROOT / name, tmp_path / name)
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"}
    env.update(SWE_FORGE_HOME=str(tmp_path / ".swe-forge"), SWE_FORGE_START_DATE="2015-01-01")
    port = _free_port()
    dagster = Path(sys.executable).with_name("dagster")
    proc = subprocess.Popen(
        [str(dagster), "dev", "-w", "workspace.yaml", "-h", "127.0.0.1", "-p", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        nodes: list[str] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "gharchive_pr_events" not in nodes:
            time.sleep(1)
            try:
                response = httpx.post(
                    f"http://127.0.0.1:{port}/graphql", json={"query": "{ assetNodes { assetKey { path } } }"}
                )
                nodes = [n["assetKey"]["path"][-1] for n in response.json()["data"]["assetNodes"]]
            except (httpx.HTTPError, KeyError, TypeError, ValueError):
                continue
        assert "gharchive_pr_events" in nodes and "catalog" in nodes
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    assert (tmp_path / ".swe-forge" / "dagster" / "storage").is_dir()  # survives exit
    assert not list(tmp_path.glob(".tmp_dagster_home_*/storage"))


def test_secrets_come_from_the_environment_then_dotenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review finding: a token in `.env` (which Settings reads) must reach the resources too."""
    from swe_forge_dagster.common.secrets import secret_from_env

    (tmp_path / ".env").write_text("GITHUB_TOKEN=from-dotenv\nOPENROUTER_API_KEY=or-key\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("SWE_FORGE_LLM_API_KEY", raising=False)
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    assert secret_from_env(["GITHUB_TOKEN"]) == "from-dotenv"
    assert secret_from_env(["SWE_FORGE_LLM_API_KEY", "OPENROUTER_API_KEY"]) == "or-key"
    monkeypatch.setenv("GITHUB_TOKEN", "from-env")
    assert secret_from_env(["GITHUB_TOKEN"]) == "from-env"
    assert secret_from_env(["NOT_SET_ANYWHERE"]) is None


def test_settings_read_only_their_documented_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found in a final check: with field-name population on, HOME became SWE_FORGE_HOME."""
    monkeypatch.chdir(tmp_path)
    for name in ("SWE_FORGE_HOME", "SWE_FORGE_MODEL", "SWE_FORGE_LANGUAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", "/somewhere/else")
    monkeypatch.setenv("MODEL", "not-this-model")
    monkeypatch.setenv("LANGUAGES", "cobol")
    settings = Settings()
    assert settings.home == ".swe-forge" and settings.home_abs == tmp_path / ".swe-forge"
    assert settings.model == "openai/gpt-5.2-codex:nitro" and "cobol" not in settings.languages
    monkeypatch.setenv("SWE_FORGE_HOME", "/data/forge")
    assert Settings().home == "/data/forge"
