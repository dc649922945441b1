"""The GraphQL half of the GitHub twin: a GitHub-named SDL subset, its resolvers, cost and errors.

Queries run for real through graphql-core, so aliases, fragments, variables and validation behave
as on api.github.com. What graphql-core does not do the GitHub way is added here:

* errors carry GitHub's top-level `type` (`NOT_FOUND`, `EXCESSIVE_PAGINATION`, ...) next to
  `path`/`locations`/`message`, and no `extensions`, because that is what clients match on;
* connections demand `first` (<= 100) like GitHub, and page with opaque `after` cursors;
* `query_cost` is GitHub's documented static rate-limit cost: every connection in the query adds
  the number of parent nodes it is fetched for (the product of the `first` of the enclosing
  connections), the sum is divided by 100 and rounded, minimum 1. `nodeCount` is the sum of the
  nodes each connection may return; GitHub refuses queries over 500,000 nodes, and so does this.
* a Bot's GraphQL `login` has no `[bot]` suffix (`dependabot`), unlike REST's `dependabot[bot]`,
  because that is what the real API does and clients comparing the two must cope.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLBoolean,
    GraphQLError,
    GraphQLInt,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLResolveInfo,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
    build_schema,
    execute,
    get_named_type,
    parse,
    validate,
    value_from_ast,
)
from graphql.execution.values import get_variable_values

from swe_forge_dagster.testing.github_world import GithubWorld, Issue, PullRequest, Repo

MAX_FIRST = 100
MAX_NODES = 500_000
GRAPHQL_DOCS = "https://docs.github.com/graphql"
RATE_LIMITED = "API rate limit exceeded for user ID 1."
SOMETHING_WENT_WRONG = (
    "Something went wrong while executing your query. This may be the result of a timeout, or it could be a GitHub bug."
)

SDL = """
scalar DateTime
scalar GitObjectID
scalar URI

type Query {
  repository(owner: String!, name: String!, followRenames: Boolean = true): Repository
  rateLimit(dryRun: Boolean = false): RateLimit
}
type RateLimit { cost: Int!, limit: Int!, remaining: Int!, used: Int!, resetAt: DateTime!, nodeCount: Int! }

interface RepositoryOwner { login: String!, url: URI! }
interface Actor { login: String!, url: URI! }
type User implements RepositoryOwner & Actor { login: String!, url: URI! }
type Organization implements RepositoryOwner & Actor { login: String!, url: URI! }
type Bot implements Actor { login: String!, url: URI! }

type Language { name: String! }
type License { spdxId: String, name: String!, key: String! }
type Ref { name: String! }
type Commit { oid: GitObjectID! }
type Label { name: String! }

type Repository {
  id: ID!
  nameWithOwner: String!
  name: String!
  url: URI!
  stargazerCount: Int!
  primaryLanguage: Language
  isFork: Boolean!
  isArchived: Boolean!
  licenseInfo: License
  owner: RepositoryOwner!
  defaultBranchRef: Ref
  pullRequest(number: Int!): PullRequest
  issue(number: Int!): Issue
}

enum PullRequestState { OPEN CLOSED MERGED }
enum PatchStatus { ADDED DELETED RENAMED COPIED MODIFIED CHANGED }

type PullRequest {
  id: ID!
  number: Int!
  title: String!
  body: String!
  state: PullRequestState!
  isDraft: Boolean!
  merged: Boolean!
  mergedAt: DateTime
  mergeCommit: Commit
  baseRefName: String!
  baseRefOid: GitObjectID!
  headRefName: String!
  headRefOid: GitObjectID!
  createdAt: DateTime!
  additions: Int!
  deletions: Int!
  changedFiles: Int!
  author: Actor
  repository: Repository!
  files(first: Int, after: String): PullRequestChangedFileConnection
  closingIssuesReferences(first: Int, after: String): IssueConnection
  labels(first: Int, after: String): LabelConnection
  url: URI!
}
type PullRequestChangedFile { path: String!, additions: Int!, deletions: Int!, changeType: PatchStatus! }
type Issue { id: ID!, number: Int!, title: String!, body: String!, url: URI!, repository: Repository! }

type PageInfo { hasNextPage: Boolean!, hasPreviousPage: Boolean!, endCursor: String, startCursor: String }
type PullRequestChangedFileConnection {
  totalCount: Int!, pageInfo: PageInfo!, nodes: [PullRequestChangedFile], edges: [PullRequestChangedFileEdge]
}
type PullRequestChangedFileEdge { cursor: String!, node: PullRequestChangedFile }
type IssueConnection { totalCount: Int!, pageInfo: PageInfo!, nodes: [Issue], edges: [IssueEdge] }
type IssueEdge { cursor: String!, node: Issue }
type LabelConnection { totalCount: Int!, pageInfo: PageInfo!, nodes: [Label], edges: [LabelEdge] }
type LabelEdge { cursor: String!, node: Label }
"""

LICENSE_NAMES = {
    "MIT": "MIT License",
    "Apache-2.0": "Apache License 2.0",
    "GPL-3.0": "GNU General Public License v3.0",
    "BSD-3-Clause": 'BSD 3-Clause "New" or "Revised" License',
    "NOASSERTION": "Other",
}

_PARTIAL_MESSAGES = {
    "SERVICE_UNAVAILABLE": SOMETHING_WENT_WRONG,
    "TIMEOUT": "Something went wrong while executing your query. This may be the result of a timeout.",
    "FORBIDDEN": "Resource not accessible by integration",
}


@dataclass
class QueryContext:
    """What resolvers need from the twin for one execution: the data, the rate-limit view, faults."""

    world: GithubWorld
    rate: dict[str, Any]  # cost, limit, remaining, used, resetAt, nodeCount (after this query's cost)
    inject: Callable[[str, int], str | None] = lambda _repo, _number: None  # -> error type or None
    injected: dict[tuple[str, int], str] = field(default_factory=dict)


def github_error(error_type: str, message: str) -> GraphQLError:
    return GraphQLError(message, extensions={"type": error_type})


def license_info(spdx: str | None) -> dict[str, Any] | None:
    """The `license`/`licenseInfo` object, with GitHub's key/name for the SPDX ids the world uses."""
    if spdx is None:
        return None
    key = "other" if spdx == "NOASSERTION" else spdx.lower()
    return {"spdxId": spdx, "key": key, "name": LICENSE_NAMES.get(spdx, spdx)}


def _node_id(kind: str, key: str) -> str:
    return base64.b64encode(f"{kind}:{key}".encode()).decode()


def _actor(login: str, typename: str) -> dict[str, str]:
    shown = login.removesuffix("[bot]") if typename == "Bot" else login
    prefix = "apps/" if typename == "Bot" else ""
    return {"__typename": typename, "login": shown, "url": f"https://github.com/{prefix}{shown}"}


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _connection(items: list[Any], field_name: str, first: int | None, after: str | None) -> dict[str, Any]:
    """A GitHub connection page; `first` is mandatory and capped, as GitHub enforces."""
    if first is None:
        raise github_error(
            "MISSING_PAGINATION_BOUNDARIES",
            f"You must provide a `first` or `last` value to properly paginate the `{field_name}` connection.",
        )
    if first > MAX_FIRST:
        raise github_error(
            "EXCESSIVE_PAGINATION",
            f"Requesting {first} records on the `{field_name}` connection exceeds the `first` limit of 100 records.",
        )
    if first < 0:
        raise github_error("INVALID_ARGUMENTS", "`first` must be a non-negative integer.")
    start = 0
    if after is not None:
        try:
            start = int(base64.b64decode(after).decode().rsplit(":", 1)[1]) + 1
        except (ValueError, IndexError, UnicodeDecodeError) as exc:
            raise github_error("INVALID_CURSOR_ARGUMENTS", f"`{after}` does not appear to be a valid cursor.") from exc
    page = items[start : start + first]
    edges = [{"cursor": _cursor(start + i), "node": node} for i, node in enumerate(page)]
    return {
        "totalCount": len(items),
        "nodes": page,
        "edges": edges,
        "pageInfo": {
            "hasNextPage": start + len(page) < len(items),
            "hasPreviousPage": start > 0,
            "startCursor": edges[0]["cursor"] if edges else None,
            "endCursor": edges[-1]["cursor"] if edges else None,
        },
    }


@dataclass(frozen=True)
class _IssueRef:
    repo: Repo
    issue: Issue


def _ctx(info: GraphQLResolveInfo) -> QueryContext:
    return info.context


def _repository(_root: Any, info: GraphQLResolveInfo, owner: str, name: str, **_: Any) -> Repo:
    repo = _ctx(info).world.get_repo(f"{owner}/{name}")
    if repo is None:
        raise github_error("NOT_FOUND", f"Could not resolve to a Repository with the name '{owner}/{name}'.")
    return repo


def _pull_request(repo: Repo, info: GraphQLResolveInfo, number: int) -> PullRequest:
    ctx = _ctx(info)
    key = (repo.full_name, number)
    error_type = ctx.injected.get(key) or ctx.inject(*key)  # one injection fails every alias of the PR
    if error_type is not None:
        ctx.injected[key] = error_type
        raise github_error(
            error_type, _PARTIAL_MESSAGES.get(error_type, f"{error_type}: the request could not be completed.")
        )
    pull = ctx.world.get_pull(repo.full_name, number)
    if pull is None:
        raise github_error("NOT_FOUND", f"Could not resolve to a PullRequest with the number of {number}.")
    return pull


def _issue(repo: Repo, info: GraphQLResolveInfo, number: int) -> _IssueRef:
    issue = _ctx(info).world.get_issue(repo.full_name, number)
    if issue is None:
        raise github_error("NOT_FOUND", f"Could not resolve to an Issue with the number of {number}.")
    return _IssueRef(repo, issue)


def _closing(pull: PullRequest, info: GraphQLResolveInfo, first: int | None = None, after: str | None = None) -> Any:
    world = _ctx(info).world
    repo = world.get_repo(pull.repo)
    refs = [(repo, world.get_issue(pull.repo, n)) for n in pull.closing_issues]
    items = [_IssueRef(r, i) for r, i in refs if r is not None and i is not None]
    return _connection(items, "closingIssuesReferences", first, after)


def _rate_limit(_root: Any, info: GraphQLResolveInfo, dryRun: bool = False) -> dict[str, Any]:
    return dict(_ctx(info).rate)


_R = Callable[..., Any]
_RESOLVERS: dict[str, dict[str, _R]] = {
    "Query": {"repository": _repository, "rateLimit": _rate_limit},
    "Repository": {
        "id": lambda r, _i: _node_id("Repository", r.full_name),
        "nameWithOwner": lambda r, _i: r.full_name,
        "name": lambda r, _i: r.name,
        "url": lambda r, _i: f"https://github.com/{r.full_name}",
        "stargazerCount": lambda r, _i: r.stars,
        "primaryLanguage": lambda r, _i: {"name": r.language} if r.language else None,
        "isFork": lambda r, _i: r.is_fork,
        "isArchived": lambda r, _i: r.is_archived,
        "licenseInfo": lambda r, _i: license_info(r.license_spdx),
        "owner": lambda r, _i: _actor(r.owner, r.owner_type),
        "defaultBranchRef": lambda r, _i: {"name": r.default_branch},
        "pullRequest": _pull_request,
        "issue": _issue,
    },
    "PullRequest": {
        "id": lambda p, _i: _node_id("PullRequest", f"{p.repo}#{p.number}"),
        "body": lambda p, _i: p.body or "",
        "state": lambda p, _i: "MERGED" if p.merged else "CLOSED" if p.state == "closed" else "OPEN",
        "isDraft": lambda _p, _i: False,
        "mergedAt": lambda p, _i: p.merged_at if p.merged else None,
        "mergeCommit": lambda p, _i: {"oid": p.merge_commit_sha} if p.merged and p.merge_commit_sha else None,
        "baseRefName": lambda p, _i: p.base_ref,
        "baseRefOid": lambda p, _i: p.base_sha,
        "headRefName": lambda p, _i: p.head_ref,
        "headRefOid": lambda p, _i: p.head_sha,
        "createdAt": lambda p, _i: p.created_at,
        "changedFiles": lambda p, _i: p.changed_files,
        "author": lambda p, _i: _actor(p.author_login, "Bot" if p.author_is_bot else "User"),
        "repository": lambda p, i: _ctx(i).world.get_repo(p.repo),
        "files": lambda p, _i, first=None, after=None: _connection(p.files, "files", first, after),
        "closingIssuesReferences": _closing,
        "labels": lambda p, _i, first=None, after=None: _connection(
            [{"name": n} for n in p.labels], "labels", first, after
        ),
        "url": lambda p, _i: f"https://github.com/{p.repo}/pull/{p.number}",
    },
    "PullRequestChangedFile": {"changeType": lambda f, _i: f.change_type},
    "Issue": {
        "id": lambda r, _i: _node_id("Issue", f"{r.repo.full_name}#{r.issue.number}"),
        "number": lambda r, _i: r.issue.number,
        "title": lambda r, _i: r.issue.title,
        "body": lambda r, _i: r.issue.body or "",
        "url": lambda r, _i: f"https://github.com/{r.repo.full_name}/issues/{r.issue.number}",
        "repository": lambda r, _i: r.repo,
    },
}


def _build() -> Any:
    schema = build_schema(SDL)
    for type_name, resolvers in _RESOLVERS.items():
        gql_type = schema.type_map[type_name]
        assert isinstance(gql_type, GraphQLObjectType)
        for field_name, resolver in resolvers.items():
            gql_type.fields[field_name].resolve = resolver
    return schema


SCHEMA = _build()


def _operation(document: DocumentNode, operation_name: str | None) -> OperationDefinitionNode | None:
    ops = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if operation_name is not None:
        return next((o for o in ops if o.name is not None and o.name.value == operation_name), None)
    return ops[0] if len(ops) == 1 else None


@dataclass(frozen=True)
class QueryCost:
    """GitHub's static cost of a query; `dry_run` when it asks `rateLimit(dryRun: true)` (not charged)."""

    cost: int
    node_count: int
    dry_run: bool = False


def query_cost(
    document: DocumentNode, variables: dict[str, Any] | None, operation_name: str | None = None
) -> QueryCost:
    """The cost of a validated document by GitHub's static algorithm (see the module docstring)."""
    op = _operation(document, operation_name)
    if op is None:
        return QueryCost(1, 0)
    coerced = get_variable_values(SCHEMA, op.variable_definitions or (), variables or {})
    values = coerced if isinstance(coerced, dict) else {}
    fragments = {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}
    totals = [0, 0, 0]  # requests, nodes, dry-run flag

    def walk(selection_set: SelectionSetNode | None, parent: Any, multiplier: int) -> None:
        if selection_set is None:
            return
        for sel in selection_set.selections:
            if isinstance(sel, FieldNode):
                if not isinstance(parent, GraphQLObjectType | GraphQLInterfaceType):
                    continue
                field_def = parent.fields.get(sel.name.value)
                if field_def is None:
                    continue
                child_type = get_named_type(field_def.type)
                if sel.name.value == "rateLimit":
                    arg = next((a for a in sel.arguments or () if a.name.value == "dryRun"), None)
                    totals[2] |= arg is not None and value_from_ast(arg.value, GraphQLBoolean, values) is True
                child_multiplier = multiplier
                if child_type.name.endswith("Connection"):
                    arg = next((a for a in sel.arguments or () if a.name.value == "first"), None)
                    first = value_from_ast(arg.value, GraphQLInt, values) if arg is not None else None
                    first = first if isinstance(first, int) else 0
                    totals[0] += multiplier
                    totals[1] += multiplier * first
                    child_multiplier = multiplier * first
                walk(sel.selection_set, child_type, child_multiplier)
            elif isinstance(sel, InlineFragmentNode):
                cond = SCHEMA.get_type(sel.type_condition.name.value) if sel.type_condition else parent
                walk(sel.selection_set, cond, multiplier)
            elif isinstance(sel, FragmentSpreadNode) and sel.name.value in fragments:
                frag = fragments[sel.name.value]
                walk(frag.selection_set, SCHEMA.get_type(frag.type_condition.name.value), multiplier)

    walk(op.selection_set, SCHEMA.query_type, 1)
    return QueryCost(max(1, math.floor(totals[0] / 100 + 0.5)), totals[1], bool(totals[2]))


def format_error(error: GraphQLError) -> dict[str, Any]:
    """GitHub's error shape: `type` first when known, then path, locations, message."""
    formatted = error.formatted
    out: dict[str, Any] = {}
    error_type = (formatted.get("extensions") or {}).get("type")
    if error_type:
        out["type"] = error_type
    for key in ("path", "locations"):
        if formatted.get(key) is not None:
            out[key] = formatted[key]
    out["message"] = formatted["message"]
    return out


def run_query(
    document: DocumentNode, variables: dict[str, Any] | None, operation_name: str | None, context: QueryContext
) -> dict[str, Any]:
    """Execute a validated document; the JSON body GitHub would send (data + GitHub-style errors)."""
    result = execute(SCHEMA, document, variable_values=variables, operation_name=operation_name, context_value=context)
    body: dict[str, Any] = {}
    if result.errors:
        body["errors"] = [format_error(e) for e in result.errors]
    if result.data is not None or not result.errors:
        body = {"data": result.data, **body}
    return body


def handle_graphql_request(
    raw: bytes,
    world: GithubWorld,
    charge: Callable[[QueryCost], dict[str, Any] | None],
    inject: Callable[[str, int], str | None],
) -> tuple[int, dict[str, Any], bool]:
    """(HTTP status, JSON body, charged) for a `POST /graphql` body, the way GitHub answers it.

    Malformed or invalid queries get `{"errors": [...]}` with HTTP 200 and cost nothing; a valid
    one is priced statically, `charge` takes the cost from the twin's bucket (returning the
    rate-limit view, or None when it does not fit: RATE_LIMITED), then it executes for real.
    """
    try:
        request = json.loads(raw or b"null")
    except ValueError:
        request = None
    if not isinstance(request, dict):
        return 400, {"message": "Problems parsing JSON", "documentation_url": GRAPHQL_DOCS}, False
    text, variables, op_name = request.get("query"), request.get("variables") or {}, request.get("operationName")
    if isinstance(variables, str):  # GitHub also takes variables as a JSON-encoded string
        try:
            variables = json.loads(variables or "{}")
        except ValueError:
            return 400, {"message": "Problems parsing JSON", "documentation_url": GRAPHQL_DOCS}, False
    if not isinstance(text, str):
        return 200, {"errors": [{"message": "A query attribute must be specified and must be a string."}]}, False
    try:
        document = parse(text)
    except GraphQLError as exc:
        return 200, {"errors": [format_error(exc)]}, False
    errors = validate(SCHEMA, document)
    if errors:
        return 200, {"errors": [format_error(e) for e in errors]}, False
    cost = query_cost(document, variables, op_name)
    if cost.node_count > MAX_NODES:
        message = f"This query requests up to {cost.node_count:,} possible nodes which exceeds the maximum limit of "
        return 200, {"errors": [{"type": "MAX_NODE_LIMIT_EXCEEDED", "message": message + "500,000."}]}, False
    rate = charge(cost)
    if rate is None:
        return 200, {"errors": [{"type": "RATE_LIMITED", "message": RATE_LIMITED}]}, False
    context = QueryContext(world, {**rate, "cost": cost.cost, "nodeCount": cost.node_count}, inject)
    return 200, run_query(document, variables, op_name, context), not cost.dry_run
