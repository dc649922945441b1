"""SWE-bench's own collector (`swebench.collect.utils`) run against the GitHub twin, as the reference for hints.

`swebench.collect.utils.Repo.__init__` fetches the repository from api.github.com at once, so the
object is made without it and given a `GhApi` aimed at the twin; everything after that is
SWE-bench's code talking REST to the twin over HTTP: `/issues/{n}`, `/pulls/{n}/commits`,
`/issues/{n}/comments`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ghapi.core import GhApi
from swebench.collect.utils import Repo, extract_problem_statement_and_hints


def swebench_hints(api_url: str, token: str, repo: str, number: int, resolved_issues: Sequence[int]) -> str:
    """The `hints_text` SWE-bench's collector computes for PR `repo#number` resolving `resolved_issues`."""
    owner, _, name = repo.partition("/")
    collector = Repo.__new__(Repo)
    collector.owner, collector.name, collector.token = owner, name, token
    collector.api = GhApi(token=token, gh_host=api_url)
    _statement, hints = extract_problem_statement_and_hints(
        {"number": number, "resolved_issues": list(resolved_issues)}, collector
    )
    return hints
