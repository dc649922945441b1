"""The red-team corpora's classes (`tests/support/red_team.py`) hold every cheating agent exactly once, and CI's
bounded share keeps the agents a test asserts on by name and one of each class.

Why: the Docker tests replay only that share (`tests/test_toolchain_red_team.py`, the gym's cheating agents, and the
real rows' corpora of `tests/support/real_red_team.py` in the real-repository tier); a new
agent left out of every class would never run in CI, and a class's defence would go untested if its members were all
dropped. The full corpora run in `benchmarks/red_team.py`.
"""

from __future__ import annotations

from collections import Counter

import pytest

from tests.support.hacks import HACKS, SNEAKY
from tests.support.real_red_team import CORPORA as REAL_CORPORA
from tests.support.red_team import CARGO_CLASSES, JEST_CLASSES, PYTHON_CLASSES, bounded
from tests.support.toolchain_hacks import CARGO_HACKS, JEST_HACKS

CORPORA = {
    "jest": (JEST_HACKS, JEST_CLASSES),
    "cargo": (CARGO_HACKS, CARGO_CLASSES),
    "python": ({**HACKS, **SNEAKY}, PYTHON_CLASSES),
    **{name: (hacks, classes) for name, (_, _, _, classes, hacks) in REAL_CORPORA.items()},
}


@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_every_cheating_agent_is_in_exactly_one_class(corpus: str) -> None:
    hacks, classes = CORPORA[corpus]
    placed = Counter(name for members in classes.values() for name in members)
    assert {name for name, n in placed.items() if n > 1} == set()
    assert set(placed) == set(hacks)
    assert all(classes.values())  # no empty class


def test_the_bounded_share_is_the_asserted_agents_and_the_first_of_each_class() -> None:
    corpus = {name: f"script {name}" for name in ("a1", "a2", "a3", "b1", "b2", "c1")}
    classes = {"a": ["a1", "a2", "a3"], "b": ["b1", "b2"], "c": ["c1"]}
    share = bounded(corpus, classes, ["a3", "b1"])
    assert share == {"a1": "script a1", "a3": "script a3", "b1": "script b1", "c1": "script c1"}  # corpus order
    with pytest.raises(AssertionError, match="zz"):
        bounded(corpus, classes, ["zz"])  # a name asserted on must be replayed, never quietly missing


@pytest.mark.parametrize("corpus", sorted(CORPORA))
def test_ci_replays_a_part_of_each_corpus_with_every_class(corpus: str) -> None:
    hacks, classes = CORPORA[corpus]
    share = bounded(hacks, classes, [])
    assert len(share) == len(classes) < len(hacks)
    assert all(any(name in share for name in members) for members in classes.values())
