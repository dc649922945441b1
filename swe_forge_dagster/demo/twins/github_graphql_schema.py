"""The GraphQL half of the GitHub twin: a GitHub-named SDL subset, its static cost and request handling.

Queries run for real through graphql-core, so aliases, fragments, variables and validation behave
as on api.github.com. What graphql-core does not do the GitHub way is added here and in
`github_graphql_resolvers` (what each field returns, GitHub-typed errors, `first`-only paging):

* errors carry GitHub's top-level `type` (`NOT_FOUND`, `EXCESSIVE_PAGINATION`, ...) next to
  `path`/`locations`/`message`, and no `extensions`, because that is what clients match on;
* `query_cost` is GitHub's documented static rate-limit cost: every connection in the query adds
  the number of parent nodes it is fetched for (the product of the `first` of the enclosing
  connections), the sum is divided by 100 and rounded, minimum 1. `nodeCount` is the sum of the
  nodes each connection may return; GitHub refuses queries over 500,000 nodes, and so does this.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
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

from swe_forge_dagster.demo.twins.github_graphql_resolvers import RESOLVERS, QueryContext
from swe_forge_dagster.demo.worlds.github_world import GithubWorld

MAX_NODES = 500_000
GRAPHQL_DOCS = "https://docs.github.com/graphql"
RATE_LIMITED = "API rate limit exceeded for user ID 1."

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
type Commit { oid: GitObjectID!, authoredDate: DateTime!, committedDate: DateTime!, message: String! }
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
  commits(first: Int, after: String): PullRequestCommitConnection!
  url: URI!
}
type PullRequestChangedFile { path: String!, additions: Int!, deletions: Int!, changeType: PatchStatus! }
type PullRequestCommit { id: ID!, commit: Commit!, url: URI! }
type Issue {
  id: ID!, number: Int!, title: String!, body: String!, url: URI!, repository: Repository!
  comments(first: Int, after: String): IssueCommentConnection!
}
type IssueComment {
  id: ID!, body: String!, createdAt: DateTime!, updatedAt: DateTime!, lastEditedAt: DateTime, author: Actor, url: URI!
}

type PageInfo { hasNextPage: Boolean!, hasPreviousPage: Boolean!, endCursor: String, startCursor: String }
type PullRequestChangedFileConnection {
  totalCount: Int!, pageInfo: PageInfo!, nodes: [PullRequestChangedFile], edges: [PullRequestChangedFileEdge]
}
type PullRequestChangedFileEdge { cursor: String!, node: PullRequestChangedFile }
type IssueConnection { totalCount: Int!, pageInfo: PageInfo!, nodes: [Issue], edges: [IssueEdge] }
type IssueEdge { cursor: String!, node: Issue }
type LabelConnection { totalCount: Int!, pageInfo: PageInfo!, nodes: [Label], edges: [LabelEdge] }
type LabelEdge { cursor: String!, node: Label }
type PullRequestCommitConnection {
  totalCount: Int!, pageInfo: PageInfo!, nodes: [PullRequestCommit], edges: [PullRequestCommitEdge]
}
type PullRequestCommitEdge { cursor: String!, node: PullRequestCommit }
type IssueCommentConnection { totalCount: Int!, pageInfo: PageInfo!, nodes: [IssueComment], edges: [IssueCommentEdge] }
type IssueCommentEdge { cursor: String!, node: IssueComment }
"""


def _build() -> Any:
    schema = build_schema(SDL)
    for type_name, resolvers in RESOLVERS.items():
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
