"""Which of the Python pack's runners a repository's own files say its tests run with.

A repository that ships its own test runner is tested with it, as its developers and SWE-bench test it:
Django's `tests/runtests.py` beside the `django` package (the suite needs its settings module, which
pytest never loads), SymPy's `bin/test` beside `sympy/utilities/runtests.py`, or its runner module alone where the
tree has no `bin/` (a release sdist: `sympy.SYMPY_RUNTESTS_TEST`, the same runner and log). Decided from the tree, never
from the repository's name, so a fork or a renamed mirror is tested the same way; every other repository
gets pytest. Pack-private (`languages.python` is the pack).
"""

from __future__ import annotations

from collections.abc import Callable

from swe_forge_dagster.languages.python.django import DJANGO_TEST, RUNTESTS, description_setup
from swe_forge_dagster.languages.python.sympy import BIN_TEST, RUNTESTS_MODULES, SYMPY_RUNTESTS_TEST, SYMPY_TEST

OWN_RUNNERS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({RUNTESTS, "django/__init__.py"}), DJANGO_TEST),
    (frozenset({BIN_TEST, "sympy/utilities/runtests.py"}), SYMPY_TEST),
    *((frozenset({module}), SYMPY_RUNTESTS_TEST) for module in RUNTESTS_MODULES),
)
"""(files that must all be in the tree, the command its tests run with), first match wins."""


def own_runner_command(tree: set[str]) -> str | None:
    """The test command of the runner the repository ships (`{tests}`, `{report}` to fill), or None: pytest."""
    return next((command for needed, command in OWN_RUNNERS if needed <= tree), None)


RUNNER_SETUP: dict[str, Callable[[tuple[int, int] | None], tuple[str, ...]]] = {DJANGO_TEST: description_setup}
"""Per own runner's command: the install steps its ids need, from the project's oldest declared Python."""


def own_runner_setup(command: str, oldest_python: tuple[int, int] | None) -> tuple[str, ...]:
    """The install steps after the project's install that `command`'s runner needs so that its ids are those of the
    project's oldest Python (Django's unittest descriptions); none for the others."""
    setup = RUNNER_SETUP.get(command)
    return setup(oldest_python) if setup is not None else ()
