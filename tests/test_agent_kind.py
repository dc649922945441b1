"""The agent kind is one type (`harness.agent_kind.AgentKind`), parsed where text comes in, written as its word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swe_forge_dagster.common.agent_kind import AgentKind, configured_kind
from swe_forge_dagster.harness.agent_registry import UnknownAgent, agent_file, config_for, record_agent
from swe_forge_dagster.harness.models import HarnessConfig
from swe_forge_dagster.resources.harness import HarnessResource


def test_the_kinds_are_the_words_users_write() -> None:
    assert [kind.value for kind in AgentKind] == ["command", "oracle", "predictions"]
    assert json.dumps({"agent": AgentKind.ORACLE}) == '{"agent": "oracle"}'
    assert HarnessConfig(agent="oracle").model_dump(mode="json")["agent"] == "oracle"
    assert HarnessConfig(agent="oracle").agent is AgentKind.ORACLE  # text in, the type inside


def test_an_unknown_kind_fails_where_it_is_parsed_naming_the_choices() -> None:
    assert AgentKind.parse("predictions") is AgentKind.PREDICTIONS
    with pytest.raises(ValueError, match="agent must be command or oracle or predictions, not 'gold'"):
        AgentKind.parse("gold")
    with pytest.raises(ValueError, match="--agent must be command or oracle, not 'predictions'"):
        AgentKind.parse("predictions", where="--agent", allowed=(AgentKind.COMMAND, AgentKind.ORACLE))


def test_the_configured_agent_needs_its_folder_unless_it_is_the_oracle() -> None:
    assert configured_kind("", has_agent_dir=False) is None
    assert configured_kind("", has_agent_dir=True) is AgentKind.COMMAND
    assert configured_kind("command", has_agent_dir=False) is None
    assert configured_kind("command", has_agent_dir=True) is AgentKind.COMMAND
    assert configured_kind("oracle", has_agent_dir=True) is AgentKind.ORACLE
    with pytest.raises(ValueError, match="SWE_FORGE_AGENT must be oracle or command, not 'predictions'"):
        configured_kind("predictions", has_agent_dir=True)


def test_the_harness_resource_parses_its_configured_kind(tmp_path: Path) -> None:
    oracle = HarnessResource(home=str(tmp_path), agent="oracle", agent_dir=str(tmp_path))
    assert oracle.configured and oracle.config("run1").agent is AgentKind.ORACLE
    assert oracle.config("run1").agent_dir is None  # the oracle mounts no folder
    assert not HarnessResource(home=str(tmp_path)).configured
    with pytest.raises(ValueError, match="not 'orcale'"):
        HarnessResource(home=str(tmp_path), agent="orcale").config("run1")


def test_a_recorded_kind_the_harness_does_not_know_is_refused_plainly(tmp_path: Path) -> None:
    folder = tmp_path / "agent"
    folder.mkdir()
    key = record_agent(tmp_path / "lake", HarnessConfig(agent="command", agent_dir=folder))
    path = agent_file(tmp_path / "lake", key)
    path.write_text(path.read_text().replace('"command"', '"shell"'))
    with pytest.raises(ValueError, match="not 'shell'") as raised:
        config_for(tmp_path / "lake", key, HarnessConfig(agent="oracle"))
    assert not isinstance(raised.value, UnknownAgent)


def test_the_harness_resource_refuses_an_unknown_kind_when_configured() -> None:
    from pydantic import ValidationError

    assert HarnessResource(home="/tmp/h", agent="oracle").kind is AgentKind.ORACLE
    with pytest.raises(ValidationError, match="must be oracle or command, not 'Oracle'"):
        HarnessResource(home="/tmp/h", agent="Oracle")
