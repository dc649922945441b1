"""The many-machines configuration: the Postgres URL forms, the instance files `swe-forge` writes, and
deploy/dagster.yaml rendered for one machine (secrets by name only, the local folder mounted in place).

No database is needed here: tests/test_instance_postgres.py loads these files against a real Postgres.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from dagster._config import process_config
from dagster._core.instance.config import dagster_instance_config_schema
from dagster_docker import DockerRunLauncher

from swe_forge_dagster.common.postgres_url import PostgresUrlError, libpq_url, postgres_url, sqlalchemy_url
from swe_forge_dagster.orchestration.deploy import (
    RUN_SECRETS,
    DeployConfigError,
    public_names,
    render_instance,
    setting_names,
    step_env_names,
)
from swe_forge_dagster.orchestration.instance import TEMPLATE, ensure_dagster_home, instance_yaml
from swe_forge_dagster.settings import Settings
from tests.support.common import REPO_ROOT

DEPLOY_TEMPLATE = (REPO_ROOT / "deploy" / "dagster.yaml").read_text()
URL = "postgresql://swe:s3cret-pw@127.0.0.1:5432/dagster"


def test_every_postgres_url_form_becomes_the_one_each_client_needs() -> None:
    for given in (
        URL,
        "postgres://swe:s3cret-pw@127.0.0.1:5432/dagster",
        "postgresql+psycopg2://swe:s3cret-pw@127.0.0.1:5432/dagster",
    ):
        assert sqlalchemy_url(given) == "postgresql+psycopg2://swe:s3cret-pw@127.0.0.1:5432/dagster"
        assert libpq_url(given) == URL
    for bad in ("mysql://swe:s3cret-pw@h/db", "swe:s3cret-pw@127.0.0.1/dagster", "postgresql://"):
        with pytest.raises(PostgresUrlError, match="SWE_FORGE_POSTGRES_URL") as error:
            sqlalchemy_url(bad)
        assert "s3cret-pw" not in str(error.value)  # the message never repeats the password


def test_the_instance_file_follows_the_postgres_setting_and_never_holds_the_url(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = home / "dagster" / "dagster.yaml"
    ensure_dagster_home(Settings())
    assert config.read_text() == TEMPLATE.read_text() == instance_yaml(postgres=False)
    monkeypatch.setenv("SWE_FORGE_POSTGRES_URL", URL)
    ensure_dagster_home(Settings())
    written = yaml.safe_load(config.read_text())
    assert written["storage"]["custom"]["config"] == {"postgres_url": {"env": "SWE_FORGE_POSTGRES_URL"}}
    assert "s3cret-pw" not in config.read_text()
    assert {k: v for k, v in written.items() if k != "storage"} == yaml.safe_load(TEMPLATE.read_text())
    process_config(dagster_instance_config_schema(), written).value  # a valid instance config  # noqa: B018
    monkeypatch.delenv("SWE_FORGE_POSTGRES_URL")
    ensure_dagster_home(Settings())  # back to SQLite: the file is still one swe-forge wrote
    assert config.read_text() == TEMPLATE.read_text()
    config.write_text(instance_yaml(postgres=True) + "# my edit\n")
    ensure_dagster_home(Settings())
    assert config.read_text().endswith("# my edit\n")  # a user's file is never replaced


def test_a_url_in_dotenv_reaches_dagster_s_env_reference(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    # set, then removed: monkeypatch records "absent" as what to restore (a bare delenv of an absent
    # variable records nothing, and the URL the .env puts in would outlive the test)
    monkeypatch.setenv("SWE_FORGE_POSTGRES_URL", URL)
    monkeypatch.delenv("SWE_FORGE_POSTGRES_URL")
    (tmp_path / ".env").write_text(f"SWE_FORGE_POSTGRES_URL={URL}\n")
    assert postgres_url() == URL
    ensure_dagster_home(Settings())
    assert os.environ["SWE_FORGE_POSTGRES_URL"] == URL  # Dagster reads `env:` from the process environment
    monkeypatch.delenv("SWE_FORGE_POSTGRES_URL")
    (tmp_path / ".env").write_text("SWE_FORGE_POSTGRES_URL=s3cret-pw@nowhere\n")
    with pytest.raises(PostgresUrlError, match="SWE_FORGE_POSTGRES_URL"):
        ensure_dagster_home(Settings())


def _environ(local: Path, **extra: str) -> dict[str, str]:
    return {
        "SWE_FORGE_HOME": str(local),
        "SWE_FORGE_POSTGRES_URL": URL,
        "SWE_FORGE_IMAGE": "swe-forge:test",
        "GITHUB_TOKEN": "ghp_secret_token",
        "SWE_FORGE_START_DATE": "2015-01-01",
        **extra,
    }


def test_deploy_instance_forwards_set_names_only_and_mounts_the_local_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local = tmp_path / "home"
    socket = tmp_path / "docker.sock"
    socket.touch()
    environ = _environ(local, SWE_FORGE_REGISTRY="127.0.0.1:5000")
    rendered = render_instance(DEPLOY_TEMPLATE, Settings(SWE_FORGE_HOME=str(local)), environ, socket=str(socket))
    for value in (URL, "s3cret-pw", "ghp_secret_token"):
        assert value not in rendered
    config = yaml.safe_load(rendered)
    launcher = config["run_launcher"]["config"]
    # every set setting and secret, no unset name (Dagster would refuse to launch); the image is the launcher's own
    assert sorted(launcher["env_vars"]) == sorted(set(environ) - {"SWE_FORGE_IMAGE"})
    assert launcher["network"] == "host"
    volumes = launcher["container_kwargs"]["volumes"]
    assert f"{local}:{local}" in volumes and "/var/run/docker.sock:/var/run/docker.sock" in volumes
    process_config(dagster_instance_config_schema(), config).value  # noqa: B018
    monkeypatch.setenv("SWE_FORGE_IMAGE", "swe-forge:test")  # the launcher's `image: {env: ...}`
    assert process_config(DockerRunLauncher.config_type(), launcher).success
    # Everything but the launcher and the storage is the instance template's: one set of limits everywhere.
    shared = {k: v for k, v in config.items() if k not in ("run_launcher", "storage")}
    template = {k: v for k, v in yaml.safe_load(instance_yaml(postgres=True)).items() if k != "storage"}
    assert shared == template
    assert config["storage"] == yaml.safe_load(instance_yaml(postgres=True))["storage"]
    # Without the socket (an engine behind DOCKER_HOST) it is not mounted, and DOCKER_HOST is forwarded.
    environ["DOCKER_HOST"] = "tcp://127.0.0.1:2375"
    rendered = render_instance(
        DEPLOY_TEMPLATE, Settings(SWE_FORGE_HOME=str(local)), environ, socket=str(tmp_path / "absent.sock")
    )
    launcher = yaml.safe_load(rendered)["run_launcher"]["config"]
    assert "DOCKER_HOST" in launcher["env_vars"]
    assert not [v for v in launcher["container_kwargs"]["volumes"] if "docker.sock" in v]


def test_every_setting_is_forwarded_when_set(tmp_path: Path) -> None:
    """A setting added to settings.py later reaches run containers without touching deploy/."""
    environ = {name: "x" for name in setting_names()} | _environ(tmp_path)
    launcher = yaml.safe_load(render_instance(DEPLOY_TEMPLATE, Settings(SWE_FORGE_HOME=str(tmp_path)), environ))
    assert set(setting_names()) <= set(launcher["run_launcher"]["config"]["env_vars"])
    assert "SWE_FORGE_REGISTRY" in setting_names() and "SWE_FORGE_POSTGRES_URL" not in setting_names()


def test_deploy_instance_refuses_what_cannot_work_in_a_container(tmp_path: Path) -> None:
    settings = Settings(SWE_FORGE_HOME=str(tmp_path))
    for missing in ("SWE_FORGE_POSTGRES_URL", "SWE_FORGE_IMAGE"):
        environ = _environ(tmp_path)
        del environ[missing]
        with pytest.raises(DeployConfigError, match=missing):
            render_instance(DEPLOY_TEMPLATE, settings, environ)
    with pytest.raises(DeployConfigError, match="SWE_FORGE_HOME=relative/home is relative"):
        render_instance(DEPLOY_TEMPLATE, Settings(SWE_FORGE_HOME="relative/home"), _environ(tmp_path))


def test_agent_variables_and_session_token_are_forwarded_but_never_public(tmp_path: Path) -> None:
    """SWE_FORGE_AGENT_ENV's host variables reach run containers (the agent runs there); like the secrets,
    they are not among the names deploy/start writes into its env file. Run containers carry the deployment."""
    agent = {
        "SWE_FORGE_AGENT_ENV": "ANTHROPIC_API_KEY, MY_AGENT_FLAG",
        "ANTHROPIC_API_KEY": "sk-a",
        "MY_AGENT_FLAG": "1",
    }
    environ = _environ(tmp_path, **agent, AWS_SESSION_TOKEN="tok", SWE_FORGE_DEPLOY_DIR=str(tmp_path / "d"))
    rendered = render_instance(DEPLOY_TEMPLATE, Settings(SWE_FORGE_HOME=str(tmp_path)), environ)
    launcher = yaml.safe_load(rendered)["run_launcher"]["config"]
    assert {"ANTHROPIC_API_KEY", "MY_AGENT_FLAG", "AWS_SESSION_TOKEN"} <= set(launcher["env_vars"])
    assert "sk-a" not in rendered and "tok" not in launcher["env_vars"]
    assert launcher["container_kwargs"]["labels"] == {
        "swe-forge.role": "run-worker",
        "swe-forge.deploy": str(tmp_path / "d"),
    }
    public = public_names(DEPLOY_TEMPLATE, environ)
    assert "SWE_FORGE_HOME" in public and "SWE_FORGE_AGENT_ENV" in public
    for secret in ("ANTHROPIC_API_KEY", "MY_AGENT_FLAG", "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "SWE_FORGE_POSTGRES_URL"):
        assert secret not in public


def test_steps_on_worker_hosts_get_what_a_run_container_gets_but_the_engine_address() -> None:
    launcher = yaml.safe_load((REPO_ROOT / "deploy" / "dagster.yaml").read_text())["run_launcher"]["config"]
    assert set(RUN_SECRETS) == set(launcher["env_vars"]) - {"DOCKER_HOST"}
    environ = {"SWE_FORGE_POSTGRES_URL": "postgresql://x", "DOCKER_HOST": "tcp://x", "GITHUB_TOKEN": "t"}
    assert set(step_env_names(environ)) == {"GITHUB_TOKEN", "SWE_FORGE_POSTGRES_URL"}
