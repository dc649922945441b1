"""A demo's home stays in the demo's world: what `swe-forge demo` leaves in its home, and how later commands serve it.

Without this, `SWE_FORGE_HOME=<demo home> swe-forge dev` opens the demo's instance with resources pointing at the
real GH Archive, GitHub and OpenRouter and hourly partitions from 2024: a backfill from the UI would leave the
demo's world without a word. So the demo writes into its home:

- `settings.env`, the home's own settings (`settings.py` reads them below the process environment): the start
  date, the GH Archive mirror, the git remotes, the sandbox image, the output folder, the CA bundle, and
  `SWE_FORGE_DEMO_WORLD`, which marks the home as a demo world and names the folder below;
- `demo-world/`: the GitHub world the twin served (JSON: partly invented per seed, so kept rather than generated
  again) and a manifest naming the task world's git remotes, from which the LLM twin's agent is rebuilt.

`serve_demo_world` brings both twins back up on 127.0.0.1 (ports chosen by the OS) for as long as a command runs.
Their URLs are never in the file (they change per run): a command puts them in its settings (`apply`), or in the
environment of its child (`child_env`, for `swe-forge dev`'s `dagster dev`), with the demo's not-secret keys in
place of the user's, which therefore never reach a twin.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from swe_forge_dagster.demo.twins.github_twin import GithubTwin
from swe_forge_dagster.demo.twins.openai_twin import OpenAITwin
from swe_forge_dagster.demo.worlds.git_world import GitWorld, build_git_world
from swe_forge_dagster.demo.worlds.github_world import GithubWorld
from swe_forge_dagster.demo.worlds.github_world_file import load_world, save_world
from swe_forge_dagster.demo.worlds.world_agent import world_agent_responder
from swe_forge_dagster.settings import HOME_SETTINGS_FILE, Settings

DEMO_TOKEN_ENV = "SWE_FORGE_DEMO_GITHUB_TOKEN"  # never the user's GITHUB_TOKEN
DEMO_TOKEN = "demo-token-not-a-secret"
DEMO_LLM_KEY_ENV = "SWE_FORGE_DEMO_LLM_KEY"  # never the user's LLM key
DEMO_LLM_KEY = "demo-llm-key-not-a-secret"
LLM_COST_PER_MTOK = (1.25, 10.0)
"""What the demo's LLM twin bills per 1M tokens (in, out), like a priced model, so the ledger has costs."""
WORLD_DIR = "demo-world"
GITHUB_WORLD = "github-world.json"
MANIFEST = "world.json"
DEMO_WORLD_SETTING = "SWE_FORGE_DEMO_WORLD"


class DemoWorldError(RuntimeError):
    """The home says it is a demo world, but the world is not (or no longer) there."""


def write_home_settings(home: Path, values: Mapping[str, str | None]) -> Path:
    """`<home>/settings.env` with `values` (documented `SWE_FORGE_*` names; None leaves a name out), dotenv format."""
    lines = [
        "# This home's own settings (swe_forge_dagster/settings.py): the process environment wins over them.",
        "# Written by `swe-forge demo`: every command on this home works in the demo's world.",
    ]
    lines += [f"{name}={_dotenv_value(value)}" for name, value in values.items() if value is not None]
    path = home / HOME_SETTINGS_FILE
    home.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def _dotenv_value(value: str) -> str:
    """Single-quoted unless the value holds a quote (then double-quoted, escaped). python-dotenv expands `${NAME}`
    in any quoting and has no escape for it, so such a value cannot be written (ValueError), never misread."""
    if "${" in value:
        raise ValueError(f"a home setting cannot hold '${{': {value!r}")
    if "'" not in value:
        return f"'{value}'"
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_demo_home(
    home: Path, world: GithubWorld, git_root: Path, *, javascript: bool, values: Mapping[str, str | None]
) -> Path:
    """Keep the demo's world in its home and mark the home as one (`values` go to `settings.env` too)."""
    world_dir = home / WORLD_DIR
    save_world(world, world_dir / GITHUB_WORLD)
    (world_dir / MANIFEST).write_text(json.dumps({"git_root": str(git_root), "javascript": javascript}))
    write_home_settings(home, {**values, DEMO_WORLD_SETTING: str(world_dir)})
    return world_dir


@dataclass
class DemoTwins:
    """The demo world's twins, up; how a command's settings or a child's environment reach them."""

    world_dir: Path
    github: GithubTwin
    llm: OpenAITwin

    def apply(self, settings: Settings) -> Settings:
        return settings.model_copy(update={"github_api_url": self.github.url, "llm_base_url": self.llm.url})

    def child_env(self) -> dict[str, str]:
        """What a child process (`dagster dev` and the code servers it starts) needs on top of the environment."""
        return {
            "SWE_FORGE_GITHUB_API_URL": self.github.url,
            "SWE_FORGE_LLM_BASE_URL": self.llm.url,
            "GITHUB_TOKEN": DEMO_TOKEN,
            "SWE_FORGE_LLM_API_KEY": DEMO_LLM_KEY,
            DEMO_TOKEN_ENV: DEMO_TOKEN,
            DEMO_LLM_KEY_ENV: DEMO_LLM_KEY,
        }

    def notice(self, settings: Settings) -> list[str]:
        """What the user must not miss: where this instance's resources point (`settings` as the command uses them)."""
        return [
            f"This instance is the demo's world ({DEMO_WORLD_SETTING} in {settings.home_abs / HOME_SETTINGS_FILE}):",
            f"  GH Archive   {settings.gharchive_url}",
            f"  GitHub twin  {settings.github_api_url}  (the demo's repositories and PRs, served by this process)",
            f"  LLM twin     {settings.llm_base_url}  (the demo's scripted model: no real LLM is called)",
            f"  git remotes  {settings.git_url}",
            f"  partitions   hourly from {settings.start_date}",
            "Backfills read and write this world only; the twins stop when this command does. A variable set in "
            "the environment wins over the home's settings.env.",
        ]


@contextmanager
def serve_demo_world(settings: Settings) -> Iterator[DemoTwins | None]:
    """The home's demo world served on loopback while the block runs; None (nothing started) for any other home."""
    if settings.demo_world is None:
        yield None
        return
    world_dir = settings.demo_world.expanduser().resolve()
    try:
        manifest = json.loads((world_dir / MANIFEST).read_text())
        world = load_world(world_dir / GITHUB_WORLD)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DemoWorldError(
            f"{DEMO_WORLD_SETTING}={world_dir} names no readable demo world ({exc}): run `swe-forge demo` again, or "
            f"remove that line from {settings.home_abs / HOME_SETTINGS_FILE}"
        ) from exc
    git = build_git_world(Path(manifest["git_root"]), javascript=bool(manifest.get("javascript")))
    with demo_twins(world, git) as (github, llm):
        yield DemoTwins(world_dir, github, llm)


@contextmanager
def announced_demo_world(
    settings: Settings, notify: Callable[[str], None]
) -> Iterator[tuple[DemoTwins, Settings] | None]:
    """`serve_demo_world`, each line of its notice told to `notify`, with `settings` pointed at the twins; None
    (nothing started, nothing said) for any other home. What `swe-forge dev` and `swe-forge ingest` open."""
    with serve_demo_world(settings) as twins:
        if twins is None:
            yield None
            return
        world_settings = twins.apply(settings)
        for line in twins.notice(world_settings):
            notify(line)
        yield twins, world_settings


@contextmanager
def demo_twins(world: GithubWorld, git: GitWorld) -> Iterator[tuple[GithubTwin, OpenAITwin]]:
    """The demo's GitHub twin (serving `world`) and LLM twin (answering from `git`'s remotes) on 127.0.0.1, with the
    demo's not-secret keys in this process's environment for its own runs: the demo and a demo home's commands."""
    os.environ[DEMO_TOKEN_ENV] = DEMO_TOKEN  # `build_definitions(..., DEMO_TOKEN_ENV)` reads the key by this name
    os.environ[DEMO_LLM_KEY_ENV] = DEMO_LLM_KEY
    with (
        GithubTwin(world, token=DEMO_TOKEN) as github,
        OpenAITwin(world_agent_responder(git), api_key=DEMO_LLM_KEY, cost_per_mtok=LLM_COST_PER_MTOK) as llm,
    ):
        yield github, llm
