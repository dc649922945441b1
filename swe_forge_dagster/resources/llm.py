"""The LLM endpoint as a resource. The key is read from the environment when a run starts.

The answer cache, the call ledger and the request slots are files under the home, or the shared
database when `SWE_FORGE_POSTGRES_URL` is set (`wiring.shared_state`)."""

from __future__ import annotations

from typing import Literal

import dagster as dg
from pydantic import Field

from swe_forge_dagster.common.dagster_names import LLM_API_POOL
from swe_forge_dagster.common.home import HomeLayout
from swe_forge_dagster.common.secrets import secret_from_env
from swe_forge_dagster.llm.client import LLMClient, Prices
from swe_forge_dagster.wiring.shared_state import answer_cache, call_ledger, request_slots


class LLMResource(dg.ConfigurableResource):
    base_url: str = Field(description="any OpenAI-compatible endpoint (OpenRouter, vLLM, Ollama, ...)")
    model: str
    home: str = Field(
        description="SWE_FORGE_HOME: answer cache under cache/llm, call ledger under lake/llm_calls "
        "(both in the shared database when SWE_FORGE_POSTGRES_URL is set)"
    )
    key_envs: list[str] = Field(default_factory=lambda: ["SWE_FORGE_LLM_API_KEY", "OPENROUTER_API_KEY"])
    max_in_flight: int = Field(default=10, ge=1, le=64, description="calls at once, machine-wide")
    max_repairs: int = Field(default=2, ge=0, le=5)
    timeout_seconds: float = Field(default=120, gt=0)
    tool_choice: Literal["function", "required"] = Field(
        default="function", description="function (by name) or required: how calls are forced"
    )
    max_output_tokens: int | None = Field(default=None, ge=16, description="tokens one answer may have")
    price_input_per_mtok: float | None = Field(default=None, description="USD/1M tokens when the provider is silent")
    price_output_per_mtok: float | None = None

    def client(self) -> LLMClient:
        home = HomeLayout.of(self.home)
        key = secret_from_env(self.key_envs)
        return LLMClient(
            self.base_url,
            key,
            self.model,
            cache=answer_cache(home),
            ledger=call_ledger(home),
            slots=request_slots(home, LLM_API_POOL, self.max_in_flight),
            max_in_flight=self.max_in_flight,
            max_repairs=self.max_repairs,
            timeout=self.timeout_seconds,
            forced_choice=self.tool_choice,
            max_output_tokens=self.max_output_tokens,
            prices=Prices(self.price_input_per_mtok, self.price_output_per_mtok),
        )
