"""An interactive environment over our tasks, SWE-Gym style: tools turn by turn, a binary reward at `answer`.

No Dagster here: `swe-forge gym serve`, the tests, the benchmark and any trainer use these.

- `Gym(GymConfig(...), lake_dir=...)`: many environments over one harness (a cap, idle and overlong episodes
  reaped); `gym.open(task, agent=...)` -> `Environment` (`service`)
- `Environment.call(tool, arguments)` -> `Observation`; `.answer()` -> `Answer(reward, result)`; `.close()`
  (`environment`): set up and graded by `Harness.evaluate` itself, with the agent's turn handed to the caller
- `TOOLS` / `tool_schemas()`: the six tools in OpenAI's function-calling format (`tools`)
- `load_task(path, task_id)`, `task_from_row(row)`: a task from our directories, the seed's, or SWE-bench
- `GymServer` (`server`), `GymClient` (`client`): the same over HTTP with a token
- `EPISODES_SCHEMA`, `read_episodes`, `reward_rows` (`episodes`): the `episodes` dataset
"""

from swe_forge_dagster.gym.config import GymConfig
from swe_forge_dagster.gym.environment import Answer, Environment, EpisodeEnded, OpenFailed
from swe_forge_dagster.gym.episodes import EPISODES_SCHEMA, read_episodes, reward_rows
from swe_forge_dagster.gym.service import CapacityError, Gym, GymStopping, load_task, task_from_row
from swe_forge_dagster.gym.toolbox import Observation
from swe_forge_dagster.gym.tools import TOOL_NAMES, TOOLS, tool_schemas

__all__ = [
    "EPISODES_SCHEMA",
    "TOOLS",
    "TOOL_NAMES",
    "Answer",
    "CapacityError",
    "Environment",
    "EpisodeEnded",
    "Gym",
    "GymConfig",
    "GymStopping",
    "Observation",
    "OpenFailed",
    "load_task",
    "read_episodes",
    "reward_rows",
    "task_from_row",
    "tool_schemas",
]
