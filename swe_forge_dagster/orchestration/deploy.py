"""This machine's copy of deploy/dagster.yaml: the DockerRunLauncher instance of the many-machines deployment.

The template names what a run container needs; what depends on the machine is filled in here:
the local folder mounted at its own path (bind mounts of the sandboxes a run starts go through
the host's engine by host path, and a lake in a folder must outlive the container), and the
settings and secrets forwarded by name. Dagster refuses to launch a run when a forwarded name is
unset, so only the names set in the daemon's environment are listed; the values never enter the
file. `deploy/start` runs `python -m swe_forge_dagster.orchestration.deploy render TEMPLATE`, and
`... names TEMPLATE` for the variables it forwards to the code server's container, and `... public TEMPLATE`
for the ones it may write into the deployment's env file (no secret: not the template's `env_vars`, not
the host variables named in SWE_FORGE_AGENT_ENV, which are forwarded to the agent and may be keys).
Run containers carry the label `swe-forge.deploy=<SWE_FORGE_DEPLOY_DIR>` so deploy/stop finds its own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from swe_forge_dagster.common.postgres_url import POSTGRES_URL_SETTING
from swe_forge_dagster.orchestration.celery_hosts import IMAGE_SETTING
from swe_forge_dagster.settings import Settings

LOCAL_ROOT = "${SWE_FORGE_LOCAL_ROOT}"
DOCKER_SOCKET = "/var/run/docker.sock"
AGENT_ENV_SETTING = "SWE_FORGE_AGENT_ENV"
DEPLOY_DIR_SETTING = "SWE_FORGE_DEPLOY_DIR"
DEPLOY_LABEL = "swe-forge.deploy"
NOT_SECRET = ("DOCKER_HOST",)
RUN_SECRETS = (
    "SWE_FORGE_POSTGRES_URL",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GITHUB_TOKEN",
    "OPENROUTER_API_KEY",
    "SWE_FORGE_LLM_API_KEY",
    "SWE_FORGE_BROKER_URL",
    "SWE_FORGE_RESULTS_URL",
)
"""The secrets deploy/dagster.yaml's run launcher forwards by name (a test keeps the two equal)."""


class DeployConfigError(ValueError):
    """The deployment cannot work with these settings (the message names the setting)."""


def setting_names() -> list[str]:
    """Every setting's environment name (settings.py): all are forwarded, so new ones are too."""
    return [str(field.validation_alias) for field in Settings.model_fields.values() if field.validation_alias]


def agent_env_names(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The host variables SWE_FORGE_AGENT_ENV names (comma-separated): the agent gets them, so runs need them."""
    return [name.strip() for name in environ.get(AGENT_ENV_SETTING, "").split(",") if name.strip()]


def forwarded_names(template: str, environ: Mapping[str, str] = os.environ) -> list[str]:
    """The settings, the template's secrets (`env_vars`) and the agent's variables that are set: what a run
    container receives."""
    launcher = yaml.safe_load(template)["run_launcher"]["config"]
    names = dict.fromkeys([*setting_names(), *launcher.get("env_vars", []), *agent_env_names(environ)])
    return [name for name in names if environ.get(name)]


def step_env_names(environ: Mapping[str, str] = os.environ) -> list[str]:
    """What a run worker's steps on worker hosts get (`celery_hosts`): what its run container was given (the
    settings, the run launcher's secrets and the agent's variables that are set), but the engine's address, since a
    step uses its own host's engine."""
    names = dict.fromkeys([*setting_names(), *RUN_SECRETS, *agent_env_names(environ)])
    return [name for name in names if environ.get(name) and name not in NOT_SECRET]


def public_names(template: str, environ: Mapping[str, str] = os.environ) -> list[str]:
    """The forwarded names whose values may be written to a file: none of the secrets or agent variables."""
    launcher = yaml.safe_load(template)["run_launcher"]["config"]
    secret = (set(launcher.get("env_vars", [])) | set(agent_env_names(environ))) - set(NOT_SECRET)
    return [name for name in forwarded_names(template, environ) if name not in secret]


def render_instance(
    template: str, settings: Settings, environ: Mapping[str, str] = os.environ, socket: str = DOCKER_SOCKET
) -> str:
    """deploy/dagster.yaml for this machine (see the module docstring)."""
    if not environ.get(POSTGRES_URL_SETTING):
        raise DeployConfigError(f"{POSTGRES_URL_SETTING} is not set: the deployment's instance is on Postgres")
    if not settings.layout.remote and not Path(settings.home).is_absolute():
        raise DeployConfigError(
            f"SWE_FORGE_HOME={settings.home} is relative: run containers resolve it elsewhere; give an absolute path"
        )
    if not environ.get(IMAGE_SETTING):
        raise DeployConfigError(
            f"{IMAGE_SETTING} is not set: the project image runs are launched in (deploy/build-image)"
        )
    config: dict[str, Any] = yaml.safe_load(template)
    launcher = config["run_launcher"]["config"]
    launcher["env_vars"] = forwarded_names(template, environ)
    local_root = str(settings.home_abs)
    volumes = []
    for volume in launcher.get("container_kwargs", {}).get("volumes", []):
        if volume.startswith(f"{DOCKER_SOCKET}:") and not Path(socket).exists():
            continue  # no socket here: the engine is reached through DOCKER_HOST, forwarded above
        volumes.append(volume.replace(LOCAL_ROOT, local_root))
    if volumes:
        launcher["container_kwargs"]["volumes"] = volumes
    if environ.get(DEPLOY_DIR_SETTING):
        labels = launcher.setdefault("container_kwargs", {}).setdefault("labels", {})
        labels[DEPLOY_LABEL] = environ[DEPLOY_DIR_SETTING]
    header = "# Rendered from deploy/dagster.yaml by swe_forge_dagster.orchestration.deploy: edit the template.\n"
    return header + yaml.safe_dump(config, sort_keys=False)


def main(argv: list[str] | None = None) -> int:
    """`render TEMPLATE`: the rendered instance on stdout; `names TEMPLATE`: the forwarded names that are set,
    one a line. A bad setting is one line on stderr, exit 2."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or args[0] not in ("render", "names", "public"):
        print(
            "usage: python -m swe_forge_dagster.orchestration.deploy render|names|public deploy/dagster.yaml",
            file=sys.stderr,
        )
        return 2
    try:
        template = Path(args[1]).read_text()
        if args[0] in ("names", "public"):
            names = forwarded_names(template) if args[0] == "names" else public_names(template)
            sys.stdout.write("".join(f"{name}\n" for name in names))
        else:
            sys.stdout.write(render_instance(template, Settings()))
    except (DeployConfigError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
