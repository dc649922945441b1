"""SWE-bench's `hints_text`: what the closing issues' threads said before the PR's first commit.

The rule is SWE-bench's collector (`swebench/collect/utils.py`, `extract_problem_statement_and_hints`
and `_extract_hints`), reproduced exactly so our instances read like theirs:

* the cut-off is the author date of the PR's first commit (`commits[0].commit.author.date`);
* an issue's comments are walked oldest first and kept while their `updated_at` is strictly
  before the cut-off; the walk stops at the first one that is not (so a comment edited after the
  first commit drops itself and every later comment: SWE-bench's "use updated_at" choice);
* the kept bodies of one issue are joined with "\\n", and the issues' texts are joined with "\\n",
  an issue with no hints contributing an empty string (two issues, no hints: "\\n");
* a PR that closes no issue has "".

Deviations, both forced by what we know: with no cut-off (a PR enriched before first commits
were fetched) the hints are "" rather than SWE-bench's per-issue empty strings; and the issues are
GitHub's `closingIssuesReferences` (the ones the problem statement is made of), where SWE-bench
parses closing keywords itself. `tests/test_hints.py` checks this against swebench's own code.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any


def _utc(value: dt.datetime | str | None) -> dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


def issue_hints(comments: Iterable[Mapping[str, Any]], first_commit_at: dt.datetime | str) -> list[str]:
    """The bodies of an issue's comments (oldest first) that SWE-bench keeps as hints."""
    cut_off = _utc(first_commit_at)
    kept = []
    for comment in comments:
        updated = _utc(comment.get("updated_at") or comment.get("created_at"))
        if updated is None or cut_off is None or not updated < cut_off:
            break
        kept.append(comment.get("body") or "")
    return kept


def hints_text(issues: Iterable[Mapping[str, Any]], first_commit_at: dt.datetime | str | None) -> str:
    """`hints_text` from closing issues (each with `comments`: body, created_at, updated_at) and the cut-off."""
    if first_commit_at is None:
        return ""
    texts = ["\n".join(issue_hints(issue.get("comments") or (), first_commit_at)) for issue in issues]
    return "\n".join(texts)
