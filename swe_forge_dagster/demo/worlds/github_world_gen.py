"""World generation for the GitHub twin: a consistent `GithubWorld` from `gharchive_pr_events` rows.

Values the events carry win, and everything the trimmed 2025 payload leaves NULL is invented
deterministically per (seed, repo, number), with enough variety (tiny repos, forks, docs-only PRs,
bots, huge diffs...) that a local filter has real work to do. The dataclasses it fills live in
`github_world`.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from swe_forge_dagster.demo.worlds.github_world import (
    ChangedFile,
    GithubWorld,
    Issue,
    PullRequest,
    Repo,
    closing_numbers,
    iso,
    parse_iso,
)


def _present(value: Any) -> bool:
    return value is not None and value == value  # NaN from pandas-ish rows counts as missing


def _merge_rows(rows: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Fold the events of one PR (in arrival order) into its latest known values."""
    merged: dict[str, Any] = {}
    for row in rows:
        for key, value in row.items():
            if _present(value):
                merged[key] = value
    merged["first_created_at"] = next((r["created_at"] for r in rows if _present(r.get("created_at"))), None)
    merged["first_action"] = next((r["action"] for r in rows if _present(r.get("action"))), None)
    if any(r.get("merged") is True for r in rows):
        merged["merged"] = True
    return merged


def _to_iso(value: Any) -> str | None:
    if not _present(value):
        return None
    return iso(value) if isinstance(value, datetime) else iso(parse_iso(str(value)))


# --- invention: realistic, seeded variety for whatever the events leave NULL ------------------

_MAIN_LANGS = (("Python", 35), ("TypeScript", 20), ("Go", 14), ("JavaScript", 14), ("Rust", 9), ("Java", 8))
_OTHER_LANGS = ("Haskell", "Elixir", "OCaml", "Perl", "Clojure", "Erlang")
_LICENSES = (("MIT", 45), ("Apache-2.0", 25), ("GPL-3.0", 8), ("BSD-3-Clause", 7), ("NOASSERTION", 5), (None, 10))
_LAYOUT = {  # (source, test) path templates, so a filter on "has tests" / "is Python" sees real shapes
    "Python": ("src/{pkg}/{mod}.py", "tests/test_{mod}.py"),
    "TypeScript": ("src/{pkg}/{mod}.ts", "src/{pkg}/__tests__/{mod}.test.ts"),
    "JavaScript": ("lib/{pkg}/{mod}.js", "test/{mod}.test.js"),
    "Go": ("pkg/{pkg}/{mod}.go", "pkg/{pkg}/{mod}_test.go"),
    "Rust": ("src/{pkg}/{mod}.rs", "tests/{mod}.rs"),
    "Java": ("src/main/java/com/{pkg}/{Mod}.java", "src/test/java/com/{pkg}/{Mod}Test.java"),
    "Haskell": ("src/{Mod}.hs", "test/{Mod}Spec.hs"),
}
_STAR_BANDS = (((0, 19), 20), ((20, 299), 40), ((300, 2999), 28), ((3000, 90_000), 12))
_MANIFESTS = {  # what a dependency bot touches, per language
    "Python": ("requirements.txt", "requirements-dev.txt"),
    "Go": ("go.mod", "go.sum"),
    "Rust": ("Cargo.toml", "Cargo.lock"),
    "Java": ("pom.xml", "build.gradle"),
}
_MODULES = ("parser", "client", "config", "cache", "utils", "models", "server", "auth", "cli", "storage", "render")
_PKGS = ("core", "api", "engine", "io", "plugins")
_USERS = ("alice-dev", "bob42", "carol-k", "dmitri", "eve-h", "fatima-z", "gopher-jo", "hiro-t", "ines", "jkl")
_VERBS = ("Fix", "Add", "Improve", "Refactor", "Handle", "Support", "Remove")
_PHRASES = ("timeout handling", "empty input", "unicode paths", "retry logic", "config loading", "error messages")
_SENTENCES = (
    "The current behaviour breaks when the input is empty.",
    "I traced it to an off-by-one error in the loop that walks the entries.",
    "This change adds a guard and a regression test.",
    "Steps to reproduce: run the command with a fresh checkout and an empty config file.",
    "Expected the call to succeed, but it raised an exception instead.",
    "The fix keeps the public API unchanged.",
    "Performance is unaffected according to the existing benchmarks.",
    "It also happens on the latest release, so it is not a regression from the last change.",
)
_SHORT_BODIES = ("", "wip", "Fixes typo.", "See title.", "fix", "Small cleanup.", "lgtm?")
_LABELS = ("bug", "enhancement", "documentation", "tests", "refactor")


def _weighted(rng: random.Random, table: tuple[tuple[Any, int], ...]) -> Any:
    return rng.choices([v for v, _ in table], weights=[w for _, w in table])[0]


def _invent_repo(full_name: str, rng: random.Random, has_org: bool | None = None) -> Repo:
    """A repo with the spread a filter meets in GH Archive: ~20% under 20 stars, some in thousands.

    `has_org` is what GH Archive said (an `org` on the event means an organization owns the repo);
    only when it is unknown is the owner type invented.
    """
    owner, _, name = full_name.partition("/")
    low, high = _weighted(rng, _STAR_BANDS)
    stars = rng.randint(low, high)
    r = rng.random()
    language = None if r < 0.03 else rng.choice(_OTHER_LANGS) if r < 0.13 else _weighted(rng, _MAIN_LANGS)
    return Repo(
        owner=owner,
        name=name,
        stars=stars,
        language=language,
        is_fork=rng.random() < 0.03,
        is_archived=rng.random() < 0.02,
        license_spdx=_weighted(rng, _LICENSES),
        owner_type=(
            ("Organization" if has_org else "User")
            if has_org is not None
            else ("Organization" if rng.random() < 0.85 else "User")
        ),
        default_branch="main" if rng.random() < 0.8 else "master",
    )


def _split(total: int, parts: int, rng: random.Random) -> list[int]:
    """`total` cut into `parts` non-negative pieces, each at least 1 when there is enough to go round."""
    if parts <= 0:
        return []
    floor = 1 if total >= parts else 0
    rest = total - floor * parts
    cuts = sorted(rng.randint(0, rest) for _ in range(parts - 1))
    return [floor + b - a for a, b in zip([0, *cuts], [*cuts, rest], strict=True)]


def _paths(kind: str, count: int, language: str | None, rng: random.Random) -> list[str]:
    src, test = _LAYOUT.get(language or "", ("src/{mod}.c", "tests/test_{mod}.c"))
    paths: list[str] = []
    while len(paths) < count:
        i = len(paths)
        mod = rng.choice(_MODULES) if count <= 8 else f"{rng.choice(_MODULES)}_{i}"
        values = {"pkg": rng.choice(_PKGS), "mod": mod, "Mod": mod.title().replace("_", "")}
        if kind == "docs":
            template = "README.md" if i == 0 else "docs/{mod}.md"
        elif kind == "tests":
            template = test
        elif kind == "bot":
            template = _MANIFESTS.get(language or "", ("package.json", "package-lock.json"))[min(i, 1)]
        else:
            template = src if i == 0 or rng.random() < 0.55 else test if rng.random() < 0.85 else "README.md"
        path = template.format(**values)
        if path not in paths:
            paths.append(path)
        elif kind == "bot":
            paths.append(f"deps/{i}.lock")
    return paths


def _invent_files(kind: str, facts: Mapping[str, Any], language: str | None, rng: random.Random) -> list[ChangedFile]:
    """Files whose totals are the event's line counts when known, else one of the size classes."""
    s = rng.random()
    if kind == "huge":
        count, adds = rng.randint(60, 220), rng.randint(60, 900)
    else:
        count = (
            rng.randint(1, 2)
            if kind == "bot"
            else rng.randint(1, 3)
            if kind in ("docs", "tests")
            else rng.randint(1, 8)
        )
        adds = (
            rng.randint(1001, 4000)
            if s < 0.05
            else rng.randint(0, 2)
            if s < 0.10
            else min(3 + int(rng.lognormvariate(3.3, 1.0)), 1000)
        )
    if _present(facts.get("changed_files")):
        count = max(1, min(int(facts["changed_files"]), 300))
    adds = int(facts["additions"]) if _present(facts.get("additions")) else adds
    count = 1 if adds < 3 and not _present(facts.get("changed_files")) else count
    dels = int(facts["deletions"]) if _present(facts.get("deletions")) else int(adds * rng.uniform(0, 0.6))
    paths = _paths(kind, count, language, rng)
    types = ["ADDED" if kind == "tests" or rng.random() < 0.25 else "MODIFIED" for _ in paths]
    types[0] = "MODIFIED" if dels and "MODIFIED" not in types else types[0]
    modified = [i for i, t in enumerate(types) if t == "MODIFIED"]
    add_parts = _split(adds, len(paths), rng)
    del_parts = dict(zip(modified, _split(dels, len(modified), rng), strict=True))
    files = [ChangedFile(p, add_parts[i], del_parts.get(i, 0), types[i]) for i, p in enumerate(paths)]
    if len(files) > 1 and rng.random() < 0.04:  # an occasional rename, with its old path
        old = files[-1]
        files[-1] = ChangedFile(old.path, old.additions, old.deletions, "RENAMED", previous_path=f"old/{old.path}")
    return files


def _invent_pull(
    repo: Repo, number: int, facts: Mapping[str, Any], rng: random.Random, pr_numbers: set[int]
) -> tuple[PullRequest, list[Issue]]:
    """One PR (and the issues it closes) from folded event values, inventing what is missing."""
    author_type = facts.get("author_type")
    login = facts.get("author_login")
    is_bot = author_type == "Bot" if author_type else (login.endswith("[bot]") if login else rng.random() < 0.05)
    login = login or ("dependabot[bot]" if is_bot else rng.choice(_USERS))
    r = rng.random()
    kind = "bot" if is_bot else "docs" if r < 0.08 else "tests" if r < 0.13 else "huge" if r < 0.16 else "normal"
    mod = rng.choice(_MODULES)
    dep, minor = rng.choice(("requests", "lodash", "serde", "golang.org/x/net")), rng.randint(1, 30)
    if is_bot:
        title, head_ref = f"Bump {dep} from 2.{minor}.0 to 2.{minor}.1", f"dependabot/deps/{dep}-2.{minor}.1"
    else:
        title, head_ref = f"{rng.choice(_VERBS)} {rng.choice(_PHRASES)} in {mod}", f"fix/{mod}-{number}"

    issues: list[Issue] = []
    if _present(facts.get("body")):
        body = str(facts["body"])
        closing = [n for n in closing_numbers(body) if n not in pr_numbers]
    else:
        b = rng.random()
        prose = " ".join(rng.sample(_SENTENCES, rng.randint(2, 4)))
        closing = []
        if is_bot:
            body = (
                f"Bumps {dep} from 2.{minor}.0 to 2.{minor}.1.\n\nDependabot will resolve any conflicts with this PR."
            )
        elif b < 0.40:
            issue_no = next(
                (k for k in (rng.randint(1, number + 200) for _ in range(10)) if k not in pr_numbers), number + 10_000
            )
            closing, body = [issue_no], f"Fixes #{issue_no}.\n\n{prose}"
        elif b < 0.55:
            body = rng.choice(_SHORT_BODIES)
        else:
            body = prose
    for k in closing:
        symptom = rng.choice(("crashes on empty input", "returns wrong result", "hangs forever", "leaks memory"))
        text = " ".join(rng.sample(_SENTENCES, rng.randint(3, 5)))
        issues.append(Issue(number=k, title=f"{mod} {symptom}", body=text, author_login=rng.choice(_USERS)))

    action = facts.get("action")
    closed = action in ("closed", "merged") or facts.get("merged") is True
    merged = bool(facts["merged"]) if _present(facts.get("merged")) else closed and rng.random() < 0.8
    last_seen = facts.get("created_at")
    created = facts.get("first_created_at")
    if created is None:
        created = iso(datetime(2025, 10, 8, tzinfo=UTC) + timedelta(minutes=rng.randint(0, 60 * 24 * 30)))
    elif facts.get("first_action") != "opened":
        created = iso(parse_iso(created) - timedelta(hours=rng.randint(1, 240)))
    merged_at = facts.get("merged_at") or (last_seen if merged and action in ("closed", "merged") else None)
    labels = (
        ["dependencies"] if is_bot else sorted(rng.sample(_LABELS, rng.randint(1, 2))) if rng.random() < 0.2 else []
    )
    pull = PullRequest(
        repo=repo.full_name,
        number=number,
        title=str(facts.get("title") or title),
        body=body,
        author_login=str(login),
        author_is_bot=is_bot,
        merged=merged,
        merged_at=merged_at if merged else None,
        merge_commit_sha=facts.get("merge_commit_sha") or (f"{rng.getrandbits(160):040x}" if merged else None),
        base_ref=str(facts.get("base_ref") or repo.default_branch),
        base_sha=str(facts.get("base_sha") or f"{rng.getrandbits(160):040x}"),
        head_ref=str(facts.get("head_ref") or head_ref),
        head_sha=str(facts.get("head_sha") or f"{rng.getrandbits(160):040x}"),
        created_at=created,
        files=_invent_files(kind, facts, repo.language, rng),
        labels=labels,
        closing_issues=closing,
        state="closed" if closed or merged else "open",
    )
    return pull, issues


def world_from_pr_events(rows: Iterable[Mapping[str, Any]], seed: int = 0) -> GithubWorld:
    """A world with one repo per distinct `repo_name` and one PR per distinct (repo, number).

    Event values win (title, body, merged, shas, refs, author, timestamps, line counts); NULLs are
    invented from `random.Random(f"{seed}-{repo}-{number}")` so a world is reproducible per seed.
    A closed PR whose `merged` is NULL (trimmed payload) is merged with probability 0.8; a PR whose
    last action is not close/merge stays open.
    """
    groups: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((str(row["repo_name"]), int(row["number"])), []).append(row)
    numbers_by_repo: dict[str, set[int]] = {}
    for repo_name, number in groups:
        numbers_by_repo.setdefault(repo_name, set()).add(number)

    world = GithubWorld()
    for (repo_name, number), events in groups.items():
        has_org = bool(events[0].get("org_login")) if "org_login" in events[0] else None
        repo = world.get_repo(repo_name) or world.add_repo(
            _invent_repo(repo_name, random.Random(f"{seed}-{repo_name}"), has_org)
        )
        facts = _merge_rows(events)
        for key in ("created_at", "first_created_at", "merged_at"):
            facts[key] = _to_iso(facts.get(key))
        rng = random.Random(f"{seed}-{repo_name}-{number}")
        pull, issues = _invent_pull(repo, number, facts, rng, numbers_by_repo[repo_name])
        world.add_pull(pull)
        for issue in issues:
            world.add_issue(repo.full_name, issue)
    return world
