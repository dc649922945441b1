"""An agent's folder digest (`common.content_digest`): folders are left out by their shape, never by a tool's name."""

from __future__ import annotations

from pathlib import Path

from swe_forge_dagster.common.content_digest import folder_digest, skipped


def test_hidden_and_dunder_folders_are_left_out_and_installed_dependencies_count(tmp_path: Path) -> None:
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "main.py").write_text("print(1)\n")
    before = folder_digest(agent)
    for cache in (".git", ".venv", ".pytest_cache", "__pycache__"):
        (agent / cache).mkdir()
        (agent / cache / "x").write_text(cache)
    assert folder_digest(agent) == before
    (agent / "node_modules" / "dep").mkdir(parents=True)
    (agent / "node_modules" / "dep" / "index.js").write_text("module.exports = 1\n")
    assert folder_digest(agent) != before  # an edited dependency is another agent
    assert [skipped(name) for name in (".git", "__pycache__", "__", "____", "lib", "_private", "node_modules")] == [
        True,
        True,
        False,
        False,
        False,
        False,
        False,
    ]
