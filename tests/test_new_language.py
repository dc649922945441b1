"""Adding a language is one folder and an entry point: a throwaway Ruby pack, never named by the product.

The pack's module (`tests/support/new_language/ruby_pack.py`) is copied into a temporary folder with a
distribution's metadata that declares it in the `swe_forge.languages` entry-point group, as `pip install` of a
plugin would leave it; the product finds it through `languages.registry` alone. A small Ruby repository
(`ruby_repo.py`: a bare remote and its SWE-bench row) then goes through `swe-forge validate` (its environment from
the pack's recipe on the pack's toolchain image, built on first need from its Debian packages; its lists in the
pack's id form) and `swe-forge harness` (the oracle resolves it, an agent that changes nothing does not).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.common import BASE_IMAGE, EXAMPLES, cli_json
from tests.support.new_language import ruby_pack
from tests.support.new_language.ruby_repo import write_ruby_world

PLUGIN = "swe_forge_ruby"


def install_plugin(site: Path) -> Path:
    """`site` holding the pack's module and the `.dist-info` of a distribution that declares it."""
    site.mkdir(parents=True, exist_ok=True)
    shutil.copy(ruby_pack.__file__, site / f"{PLUGIN}.py")
    info = site / "swe_forge_ruby-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: swe-forge-ruby\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[swe_forge.languages]\nruby = {PLUGIN}:PACK\n")
    return site


def plugin_env(site: Path | None, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWE_FORGE_")}
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(site), env.get("PYTHONPATH"))))
    return {**env, **more}


ASK = """
from swe_forge_dagster.languages import registry
print(registry.toolchain_of({"Gemfile"}, ["lib/stats.rb"]), registry.runner_of("ruby -Ilib t.rb").name,
      "ruby" in [p.name for p in registry.packs()], registry.is_test_code("test/test_stats.rb"))
"""


def test_an_installed_pack_is_registered_through_its_entry_point(tmp_path: Path) -> None:
    site = install_plugin(tmp_path / "site")
    asked = subprocess.run([sys.executable, "-c", ASK], env=plugin_env(site), capture_output=True, text=True)
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.split() == ["ruby", "minitest", "True", "True"]
    without = subprocess.run([sys.executable, "-c", ASK], env=plugin_env(None), capture_output=True, text=True)
    assert without.returncode == 0, without.stderr
    assert without.stdout.split()[2] == "False"  # nothing of Ruby is in the product itself


def test_a_broken_plugin_is_named_in_a_clear_error(tmp_path: Path) -> None:
    site = install_plugin(tmp_path / "site")
    (site / f"{PLUGIN}.py").write_text("PACK = 'not a pack'\n")
    asked = subprocess.run([sys.executable, "-c", ASK], env=plugin_env(site), capture_output=True, text=True)
    assert asked.returncode != 0
    assert "swe_forge_ruby:PACK" in asked.stderr and "LanguagePack" in asked.stderr


def cli(site: Path, home: Path, *args: str) -> dict:
    """`swe-forge <args> --json` as a user runs it, with the plugin's folder on the path."""
    return cli_json(home, *args, PYTHONPATH=str(site), SWE_FORGE_DOCKER_IMAGE=BASE_IMAGE)


@pytest.mark.docker
def test_a_ruby_repository_validates_and_only_the_oracle_resolves(tmp_path: Path, docker_client: object) -> None:
    site = install_plugin(tmp_path / "site")
    instances, git_url = write_ruby_world(tmp_path / "world")
    home = tmp_path / "home"
    (proved,) = cli(site, home, "validate", "-i", str(instances), "--git-url", git_url)["results"]
    assert proved["status"] == "valid", (proved["reason"], proved.get("differences"))
    assert proved["fail_to_pass"] == ["TestStats#test_mean_of_two"]
    assert proved["pass_to_pass"] == ["TestStats#test_total"]
    assert "swe-forge-ruby:bookworm" in proved["recipe"]
    oracle = cli(site, home, "harness", "-i", str(instances), "--agent", "oracle", "--git-url", git_url)
    assert (oracle["total"], oracle["resolved"]) == (1, 1), [(r["task_id"], r["error"]) for r in oracle["results"]]
    empty_agent = ("--agent-dir", str(EXAMPLES / "emptyagent"), "--agent-cmd", "python3 -m emptyagent")
    empty = cli(site, home, "harness", "-i", str(instances), *empty_agent, "--git-url", git_url)
    assert (empty["total"], empty["unresolved"]) == (1, 1), [(r["task_id"], r["error"]) for r in empty["results"]]
