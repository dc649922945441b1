"""The documentation: a README that fits a few screens, a MkDocs site that builds in strict mode (broken links and
missing pages fail), and generated pages (the CLI reference, the settings table) that match the code."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from swe_forge_dagster.cli.reference_pages import PAGES, main

ROOT = Path(__file__).resolve().parents[1]


def test_the_readme_fits_a_few_screens_and_its_links_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) < 250
    assert "./swe-forge demo" in readme and "scripts/test" in readme  # the two Quickstart commands
    for target in re.findall(r"\]\(((?!https?://)[^)#]+)", readme):
        assert (ROOT / target).is_file(), target


def test_the_generated_pages_match_the_code() -> None:
    assert main(["--check"]) == 0, "run: .venv/bin/python -m swe_forge_dagster.cli.reference_pages"
    settings = PAGES["settings.md"]()
    assert "`SWE_FORGE_HOME`" in settings and "| `SWE_FORGE_AGENT_TIMEOUT` | `600.0` |" in settings
    assert "## `swe-forge harness`" in PAGES["cli.md"]() and "`--no-keep-containers`" in PAGES["cli.md"]()


def test_the_site_builds_in_strict_mode(tmp_path: Path) -> None:
    done = subprocess.run(
        [str(Path(sys.executable).with_name("mkdocs")), "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "harness" / "index.html").is_file()
