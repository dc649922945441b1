"""Synthetic GH Archive hours in the real record format, for the demo and the tests.

Written by this project (never copied from fixtures): events carry the real top-level keys
(id, type, actor, repo, payload, public, created_at, org) and a realistic mix of event types.
PullRequestEvents use the classic full `pull_request` object for hours before 2025-10-07 and
the trimmed object GitHub ships since. Everything is deterministic for a given seed.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import random
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from swe_forge_dagster.gharchive.hours import archive_file_name

TRIMMED_SINCE = dt.datetime(2025, 10, 7, tzinfo=dt.UTC)

# Roughly the type mix of a real hour (PushEvent dominates; ~4% are PullRequestEvents).
EVENT_MIX = {
    "PushEvent": 55,
    "CreateEvent": 11,
    "IssueCommentEvent": 8,
    "WatchEvent": 8,
    "IssuesEvent": 5,
    "PullRequestEvent": 4,
    "ForkEvent": 3,
    "DeleteEvent": 2,
    "PullRequestReviewCommentEvent": 2,
    "ReleaseEvent": 1,
    "GollumEvent": 1,
}
ORGS = ["acme-labs", "northwind", "globex-oss", "initech", "umbrella-dev"]
# Personal accounts also own repositories; GH Archive gives their events no `org`.
PERSONAL_OWNERS = ["ada-lab", "tinkerer42"]
REPOS = ["tinycalc", "fastqueue", "datekit", "yaml-lite", "httpmock", "shapes", "textwrap2", "ledger"]
USERS = ["ada", "grace", "linus", "guido", "barbara", "ken", "margaret", "dennis", "frances", "donald"]
BOTS = ["dependabot[bot]", "renovate[bot]", "github-actions[bot]"]


@dataclass
class HourTruth:
    """What a generated hour contains, for tests that compare against an independent count."""

    events: int = 0
    by_type: Counter[str] = field(default_factory=Counter)
    pr_by_action: Counter[str] = field(default_factory=Counter)
    merged: int = 0


def _stable_id(name: str) -> int:
    """A process-independent id (`hash()` is salted per process)."""
    return zlib.crc32(name.encode()) % 10**7


def _sha(rng: random.Random) -> str:
    return f"{rng.getrandbits(160):040x}"


def _pull_request(rng: random.Random, repo: str, number: int, action: str, trimmed: bool, when: str) -> dict:
    repo_id = _stable_id(repo)
    base = {
        "ref": "main",
        "sha": _sha(rng),
        "repo": {"id": repo_id, "url": f"https://api.github.com/repos/{repo}", "name": repo.split("/")[1]},
    }
    head = {"ref": f"fix-{number}", "sha": _sha(rng), "repo": dict(base["repo"])}
    pr: dict = {
        "url": f"https://api.github.com/repos/{repo}/pulls/{number}",
        "id": rng.randrange(10**8, 10**9),
        "number": number,
        "head": head,
        "base": base,
    }
    if trimmed:
        return pr
    merged = action == "closed" and rng.random() < 0.8
    user = rng.choice(USERS + BOTS[:1])
    topic = rng.choice(["parsing", "rounding", "timeout", "unicode", "overflow"])
    pr.update(
        {
            "html_url": f"https://github.com/{repo}/pull/{number}",
            "state": "closed" if action == "closed" else "open",
            "title": f"Fix {topic} bug in {repo.split('/')[1]}",
            "user": {"login": user, "id": rng.randrange(10**6), "type": "Bot" if user.endswith("[bot]") else "User"},
            "body": f"Fixes #{number - 1}.\n\nThe `{repo}` path mishandled empty input; adds a regression test.",
            "created_at": when,
            "updated_at": when,
            "closed_at": when if action == "closed" else None,
            "merged_at": when if merged else None,
            "merge_commit_sha": _sha(rng) if merged else None,
            "merged": merged,
            "mergeable": None,
            "comments": rng.randrange(5),
            "commits": rng.randrange(1, 6),
            "additions": rng.randrange(1, 400),
            "deletions": rng.randrange(0, 200),
            "changed_files": rng.randrange(1, 12),
        }
    )
    return pr


def make_event(rng: random.Random, event_id: int, kind: str, when: dt.datetime) -> dict:
    """One event of type `kind` at `when`, in GH Archive's record format."""
    owner = rng.choices([*ORGS, *PERSONAL_OWNERS], weights=[14] * len(ORGS) + [15] * len(PERSONAL_OWNERS))[0]
    repo = f"{owner}/{rng.choice(REPOS)}"
    login = rng.choice(USERS)
    stamp = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    event: dict = {
        "id": str(event_id),
        "type": kind,
        "actor": {
            "id": _stable_id(login),
            "login": login,
            "gravatar_id": "",
            "url": f"https://api.github.com/users/{login}",
        },
        "repo": {"id": _stable_id(repo), "name": repo, "url": f"https://api.github.com/repos/{repo}"},
        "payload": {},
        "public": True,
        "created_at": stamp,
    }
    if owner in ORGS:  # a property of the owner, as on GitHub: every event of an org's repo carries it
        event["org"] = {"id": _stable_id(owner), "login": owner, "url": f"https://api.github.com/orgs/{owner}"}
    if kind == "PullRequestEvent":
        action = rng.choices(["opened", "closed", "reopened"], weights=[50, 48, 2])[0]
        number = rng.randrange(2, 5000)
        trimmed = when >= TRIMMED_SINCE
        event["payload"] = {
            "action": action,
            "number": number,
            "pull_request": _pull_request(rng, repo, number, action, trimmed, stamp),
        }
    elif kind == "PushEvent":
        event["payload"] = {
            "push_id": rng.randrange(10**9),
            "ref": "refs/heads/main",
            "head": _sha(rng),
            "before": _sha(rng),
        }
    elif kind == "IssueCommentEvent":
        # Mentions the PR event type in text: the parser must not count it as one.
        event["payload"] = {"action": "created", "comment": {"body": "see the webhook docs for PullRequestEvent"}}
    return event


def write_hour(
    mirror: Path,
    hour: dt.datetime,
    events: int,
    seed: int = 0,
    extra_lines: list[bytes] | None = None,
    mix: dict[str, int] | None = None,
) -> tuple[Path, HourTruth]:
    """Write `<mirror>/<YYYY-MM-DD-H>.json.gz` with `events` events (type weights `mix`, default a real
    hour's) and then `extra_lines`; returns the path and the truth of the generated events."""
    rng = random.Random(f"{seed}-{hour.isoformat()}")
    truth = HourTruth()
    kinds = list(mix or EVENT_MIX)
    weights = list((mix or EVENT_MIX).values())
    mirror.mkdir(parents=True, exist_ok=True)
    path = mirror / archive_file_name(hour)
    base_id = int(hour.timestamp()) * 1000
    with gzip.open(path, "wb", compresslevel=6) as out:
        for index in range(events):
            kind = rng.choices(kinds, weights)[0]
            when = hour + dt.timedelta(seconds=int(index * 3600 / max(events, 1)))
            event = make_event(rng, base_id + index, kind, when)
            out.write(json.dumps(event, separators=(",", ":")).encode() + b"\n")
            truth.events += 1
            truth.by_type[kind] += 1
            if kind == "PullRequestEvent":
                truth.pr_by_action[event["payload"]["action"]] += 1
                truth.merged += bool(event["payload"]["pull_request"].get("merged"))
        for line in extra_lines or []:
            out.write(line if line.endswith(b"\n") else line + b"\n")
    return path, truth
