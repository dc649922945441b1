"""What kind of agent an evaluation runs: one type, parsed once where a kind comes in.

A kind arrives as text from many places (the CLI's `--agent`, `SWE_FORGE_AGENT`, the `harness` resource's
config, an agent recorded in the lake, a predictions file) and decides how the harness treats the agent's
diff (the oracle's gold patch is trusted whole, an agent's is protected) and what names its results. As a
`StrEnum` it is compared by member, never as a string, so a misspelt kind fails where it is parsed, with the
kinds there are, instead of silently falling into an `else`. Being a `str`, its serialized forms (JSON,
Parquet, lake rows, CLI output) stay the same words: `command`, `oracle`, `predictions`.
"""

from __future__ import annotations

from enum import StrEnum


class AgentKind(StrEnum):
    """How the agent of a harness run is given."""

    COMMAND = "command"  # a program in the agent's folder, run in the container (`--agent-dir`, `--agent-cmd`)
    ORACLE = "oracle"  # the task's gold patch: the reference solution, trusted whole
    PREDICTIONS = "predictions"  # SWE-bench predictions: a recorded model_patch per task, an agent's diff

    @classmethod
    def parse(cls, value: str, *, where: str = "agent", allowed: tuple[AgentKind, ...] | None = None) -> AgentKind:
        """`value` as a kind (among `allowed`, every kind by default); ValueError naming `where` and the choices."""
        choices = allowed or tuple(cls)
        try:
            kind = cls(value)
        except ValueError:
            kind = None
        if kind is None or kind not in choices:
            raise ValueError(f"{where} must be {' or '.join(choices)}, not {value!r}") from None
        return kind


def configured_kind(agent: str, has_agent_dir: bool) -> AgentKind | None:
    """The agent a deployment configures (`SWE_FORGE_AGENT`, the `harness` resource's `agent`), or None for none.

    The oracle needs nothing else; a command needs its folder, and a folder alone means a command (`agent` empty).
    Predictions are a CLI input (`--predictions`), never configured, so they are refused here.
    """
    if not agent:
        return AgentKind.COMMAND if has_agent_dir else None
    kind = AgentKind.parse(agent, where="SWE_FORGE_AGENT", allowed=(AgentKind.ORACLE, AgentKind.COMMAND))
    if kind is AgentKind.COMMAND and not has_agent_dir:
        return None
    return kind
