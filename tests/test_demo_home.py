"""A home's own settings file, and a demo's home that stays in the demo's world.

The settings file sits between the process environment and `.env`; the demo's home (written by the same
`write_demo_home` the demo calls) brings back twins that serve the very world the demo served, and the
environment `swe-forge dev` gives its child (`run_forwarding_signals`) reaches them through `Settings`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from swe_forge_dagster.cli.dev import run_forwarding_signals
from swe_forge_dagster.demo.run import demo_hours
from swe_forge_dagster.demo.world_home import (
    DEMO_TOKEN,
    DemoWorldError,
    serve_demo_world,
    write_demo_home,
    write_home_settings,
)
from swe_forge_dagster.demo.worlds.gharchive_world import TRIMMED_SINCE
from swe_forge_dagster.demo.worlds.github_world_file import load_world, save_world
from swe_forge_dagster.demo.worlds.github_world_gen import world_from_pr_events
from swe_forge_dagster.demo.worlds.task_world import TaskWorld, build_task_world
from swe_forge_dagster.settings import Settings, home_settable_names

NEWEST = dt.datetime(2026, 11, 20, 15, tzinfo=dt.UTC)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No SWE_FORGE_* variable of the outer process, and a working directory of our own (its `.env`)."""
    for name in list(os.environ):
        if name.startswith("SWE_FORGE_"):
            monkeypatch.delenv(name)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


def test_home_settings_sit_between_the_environment_and_dotenv(
    clean_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    write_home_settings(
        home,
        {
            "SWE_FORGE_START_DATE": "2026-11-19",
            "SWE_FORGE_DIFFICULTY": "hard",
            "SWE_FORGE_MIN_STARS": "7",
            "SWE_FORGE_GIT_URL": "file:///it's here/{repo}.git",
            "SWE_FORGE_HOME": "/somewhere/else",  # a file inside a home cannot move the home
        },
    )
    (clean_env / ".env").write_text(f"SWE_FORGE_HOME={home}\nSWE_FORGE_MIN_STARS=99\nSWE_FORGE_LANGUAGES=go\n")
    monkeypatch.setenv("SWE_FORGE_DIFFICULTY", "easy")
    settings = Settings()
    assert settings.home == str(home)  # named by .env: its settings file is read all the same
    assert settings.start_date == dt.date(2026, 11, 19)
    assert settings.difficulty == "easy"  # the environment wins
    assert settings.min_stars == 7  # the home's file wins over .env
    assert settings.languages == "go"  # .env still counts where the home says nothing
    assert settings.git_url == "file:///it's here/{repo}.git"
    assert Settings(SWE_FORGE_HOME=str(tmp_path / "other")).start_date == dt.date(2024, 1, 1)
    monkeypatch.setenv("SWE_FORGE_HOME", "s3://bucket/prefix")  # a store home has no file of its own
    assert Settings().difficulty == "easy" and Settings().min_stars == 99


def test_a_home_file_cannot_send_credentials_or_code_elsewhere(
    clean_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A copied or unpacked home must not redirect the user's keys (GitHub, LLM, registry, store) or choose the
    agent and the host variables it gets: only the settings marked `HOME_MAY_SET` are read from its file."""
    home = tmp_path / "home"
    hostile = {
        "SWE_FORGE_LLM_BASE_URL": "http://127.0.0.1:9/steal",
        "SWE_FORGE_GITHUB_API_URL": "http://127.0.0.1:9/steal",
        "SWE_FORGE_REGISTRY": "127.0.0.1:9",
        "SWE_FORGE_AGENT_DIR": str(tmp_path),
        "SWE_FORGE_AGENT_ENV": "GITHUB_TOKEN",
        "SWE_FORGE_S3_ENDPOINT_URL": "http://127.0.0.1:9",
    }
    write_home_settings(home, {**hostile, "SWE_FORGE_START_DATE": "2026-11-19"})
    settings = Settings(SWE_FORGE_HOME=str(home))
    assert settings.start_date == dt.date(2026, 11, 19)  # what the home's data is: read
    defaults = Settings(SWE_FORGE_HOME=str(tmp_path / "plain"))
    for field in ("llm_base_url", "github_api_url", "registry", "agent_dir", "agent_env", "s3_endpoint_url"):
        assert getattr(settings, field) == getattr(defaults, field), field
    said = capsys.readouterr().err
    assert all(name in said for name in hostile) and "ignored in" in said


def test_the_demo_hours_are_days_not_years_unless_a_start_date_is_set(clean_env: Path) -> None:
    recent = demo_hours(Settings(), NEWEST)  # no start date set: the day before the newest hour, trimmed payload
    assert recent == [dt.datetime(2026, 11, 19, h, tzinfo=dt.UTC) for h in (6, 18)]
    assert all(hour >= TRIMMED_SINCE for hour in recent)
    old = demo_hours(Settings(SWE_FORGE_START_DATE="2015-01-01"), NEWEST)  # as asked: a classic hour, and a trimmed one
    assert old[0] == dt.datetime(2015, 1, 1, tzinfo=dt.UTC) < TRIMMED_SINCE <= old[1]


def test_a_github_world_survives_its_file(tmp_path: Path) -> None:
    rows = [
        {"repo_name": f"org{i % 7}/p{i % 7}", "number": i, "action": "closed", "created_at": "2025-10-10T12:00:00Z"}
        for i in range(1, 80)
    ]
    world = world_from_pr_events(rows, seed=3)
    assert load_world(save_world(world, tmp_path / "w.json")) == world


@pytest.fixture(scope="module")
def task_world(tmp_path_factory: pytest.TempPathFactory) -> TaskWorld:
    return build_task_world(tmp_path_factory.mktemp("world"), NEWEST, noise_events=20, javascript=True)


def _demo_home(root: Path, task_world: TaskWorld) -> Path:
    """A home as `swe-forge demo` leaves it: the world it served and its settings file."""
    home = root / "demo"
    world = world_from_pr_events(
        [{"repo_name": "umbrella-dev/ledger", "number": 42, "action": "closed", "created_at": "2026-11-19T06:10:00Z"}]
    )
    world.pulls.update(task_world.github.pulls)
    world.repos.update(task_world.github.repos)
    world.issues.update(task_world.github.issues)
    values = {
        "SWE_FORGE_START_DATE": "2026-11-19",
        "SWE_FORGE_GHARCHIVE_URL": f"file://{task_world.mirror}",
        "SWE_FORGE_GIT_URL": task_world.git.url_template,
        "SWE_FORGE_OUTPUT": str(home / "tasks"),
    }
    write_demo_home(home, world, task_world.git.root, javascript=True, values=values)
    return home


def test_a_demo_home_serves_the_demo_world_again(clean_env: Path, tmp_path: Path, task_world: TaskWorld) -> None:
    home = _demo_home(tmp_path, task_world)
    settings = Settings(SWE_FORGE_HOME=str(home))
    assert settings.demo_world == home / "demo-world"
    assert settings.gharchive_url == f"file://{task_world.mirror}"
    pr = task_world.git.pr("acme-labs/tinycalc", 12)
    with serve_demo_world(settings) as twins:
        assert twins is not None
        live = twins.apply(settings)
        assert live.github_api_url.startswith("http://127.0.0.1:") and live.llm_base_url.startswith("http://127.0.0.1:")
        headers = {"Authorization": f"Bearer {DEMO_TOKEN}"}
        got = httpx.get(f"{live.github_api_url}/repos/acme-labs/tinycalc/pulls/12", headers=headers).json()
        assert (got["head"]["sha"], got["merge_commit_sha"]) == (pr.head_sha, pr.merge_commit_sha)
        invented = httpx.get(f"{live.github_api_url}/repos/umbrella-dev/ledger/pulls/42", headers=headers)
        assert invented.status_code == 200  # the generated part of the world too, as the demo served it
        assert any(line.startswith("This instance is the demo's world") for line in twins.notice(live))
    assert Settings(SWE_FORGE_HOME=str(tmp_path / "plain")).demo_world is None
    with serve_demo_world(Settings(SWE_FORGE_HOME=str(tmp_path / "plain"))) as nothing:
        assert nothing is None  # any other home: nothing started, nothing changed


CHILD = """
import json, os, pathlib, signal, sys, httpx
from swe_forge_dagster.settings import Settings
s = Settings()
token = os.environ["GITHUB_TOKEN"]
pull = httpx.get(f"{s.github_api_url}/repos/northwind/datekit/pulls/7", headers={"Authorization": f"Bearer {token}"})
answer = {"start": str(s.start_date), "gharchive": s.gharchive_url, "head": pull.json()["head"]["sha"],
          "llm": s.llm_base_url, "demo_world": str(s.demo_world),
          "sigint_default": signal.getsignal(signal.SIGINT) is signal.default_int_handler,
          "sigterm_default": signal.getsignal(signal.SIGTERM) == signal.SIG_DFL}
pathlib.Path(sys.argv[1]).write_text(json.dumps(answer))
signal.pause()
"""


def test_dev_child_sees_the_twins_and_gets_the_signal(clean_env: Path, tmp_path: Path, task_world: TaskWorld) -> None:
    """What `swe-forge dev` does on a demo's home, with a small child in place of `dagster dev`: its `Settings`
    name the live twins and the home's settings; SIGTERM sent to this process reaches it, and ends it, even
    when this process runs with SIGINT ignored (a background job of a script), which a child would inherit."""
    home = _demo_home(tmp_path, task_world)
    answer = tmp_path / "answer.json"
    with serve_demo_world(Settings(SWE_FORGE_HOME=str(home))) as twins:
        assert twins is not None
        env = {**os.environ, "SWE_FORGE_HOME": str(home), **twins.child_env()}

        def terminate_when_ready() -> None:
            deadline = time.monotonic() + 60
            while not answer.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGTERM)  # to us, as `kill <swe-forge dev>` would

        threading.Thread(target=terminate_when_ready, daemon=True).start()
        ignored = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            code = run_forwarding_signals([sys.executable, "-c", CHILD, str(answer)], env)
        finally:
            signal.signal(signal.SIGINT, ignored)
        seen = json.loads(answer.read_text())
    assert code == 128 + signal.SIGTERM  # forwarded, and the child's default action ended it
    assert seen["sigint_default"] and seen["sigterm_default"]
    assert seen["head"] == task_world.git.pr("northwind/datekit", 7).head_sha
    assert seen["llm"] == twins.llm.url and seen["start"] == "2026-11-19"
    assert seen["gharchive"] == f"file://{task_world.mirror}" and seen["demo_world"] == str(home / "demo-world")


def test_a_demo_home_without_its_world_says_what_to_do(clean_env: Path, tmp_path: Path) -> None:
    home = tmp_path / "broken"
    write_home_settings(home, {"SWE_FORGE_DEMO_WORLD": str(home / "demo-world")})
    with pytest.raises(DemoWorldError, match="swe-forge demo"), serve_demo_world(Settings(SWE_FORGE_HOME=str(home))):
        pass


def test_the_configuration_page_lists_what_a_home_may_set() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text()
    paragraph = page.split("It sets only what the home's data is:", 1)[1].split("(the fields marked", 1)[0]
    assert set(re.findall(r"`(SWE_FORGE_\w+)`", paragraph)) == home_settable_names(Settings)
