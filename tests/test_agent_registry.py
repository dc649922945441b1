"""Any (agent, task) partition of `eval_result` runs its own agent (`harness.agent_registry`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from swe_forge_dagster.common.agent_kind import AgentKind
from swe_forge_dagster.common.dagster_names import AGENT_PARTITIONS
from swe_forge_dagster.harness.agent_registry import UnknownAgent, agent_file, config_for, record_agent
from swe_forge_dagster.harness.models import HarnessConfig
from swe_forge_dagster.harness.store import agent_key


def test_a_recorded_agent_runs_its_own_partitions_with_the_configured_settings(tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    folder = tmp_path / "my-agent"
    folder.mkdir()
    (folder / "agent.py").write_text("print('patch')\n")
    mine = HarnessConfig(agent="command", agent_dir=folder, agent_cmd="python agent.py")
    key = record_agent(lake, mine)
    assert key == agent_key(mine.agent_label)
    configured = HarnessConfig(agent="oracle", test_timeout=33.0, agent_env=("OPENAI_API_KEY",))
    assert config_for(lake, agent_key("oracle"), configured) is configured  # the configured one: as it is
    chosen = config_for(lake, key, configured)
    assert (chosen.agent, chosen.agent_dir, chosen.agent_cmd) == (AgentKind.COMMAND, folder, "python agent.py")
    assert '"agent": "command"' in agent_file(lake, key).read_text()  # the record keeps the kind's word
    assert chosen.test_timeout == 33.0 and chosen.agent_env == ("OPENAI_API_KEY",)  # the run's own settings
    assert chosen.agent_label == mine.agent_label

    (folder / "agent.py").write_text("print('another patch')\n")  # another agent now: its old row is not re-judged
    with pytest.raises(UnknownAgent, match="content changed"):
        config_for(lake, key, configured)
    with pytest.raises(UnknownAgent, match="was ever evaluated"):
        config_for(lake, "someone-12345678", configured)


def test_every_command_that_opens_the_instance_adds_the_configured_agents_row(tmp_path: Path) -> None:
    import dagster as dg

    from swe_forge_dagster.orchestration.instance import add_configured_agent
    from swe_forge_dagster.settings import Settings

    with dg.instance_for_test() as instance:
        add_configured_agent(instance, Settings(SWE_FORGE_HOME=str(tmp_path)))  # no agent configured: no row
        assert instance.get_dynamic_partitions(AGENT_PARTITIONS) == []
        add_configured_agent(instance, Settings(SWE_FORGE_HOME=str(tmp_path), SWE_FORGE_AGENT="oracle"))
        assert instance.get_dynamic_partitions(AGENT_PARTITIONS) == [agent_key("oracle")]
