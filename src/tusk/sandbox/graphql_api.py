"""GraphQL at ``/graphql``, executed by graphql-core against GitHub's published schema.

Documents are validated against ``@octokit/graphql-schema``'s SDL (strict mode:
a document GitHub would refuse is a spec violation, answered 500 and recorded).
This module is the pipeline (parse, validate, refuse a read-only token's
mutations, execute); the resolvers are ``graphql_resolvers`` and the modules it
names, their connections ``graphql_paging``. A field that exists in
GitHub's schema but has no resolver here resolves to null and is recorded as
a ``sandbox-unimplemented`` note, so gaps are visible rather than silent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tusk.sandbox.graphql_resolvers import Resolver
from tusk.sandbox.world import SandboxError
from tusk.sandbox.world_records import Token

if TYPE_CHECKING:
    from tusk.sandbox.app_view import AppView
    from tusk.sandbox.graphql_cost import Measure


def _selection_name(selection: Any) -> str | None:
    """A field's or fragment spread's name; None for an inline fragment (it has none)."""
    name = getattr(selection, "name", None)
    return name.value if name else None


def execute(
    app: AppView,
    token: Token,
    query: str,
    variables: dict[str, Any],
    operation: str | None,
    *,
    measured: Measure | None = None,
) -> dict[str, Any]:
    from graphql import (
        GraphQLError,
        OperationType,
        get_operation_ast,
        parse,
        validate,
    )
    from graphql import (
        execute_sync as run,  # every resolver here is synchronous
    )

    from tusk.sandbox.spec import load_graphql_schema

    schema = load_graphql_schema().schema
    try:
        document = parse(query)
    except GraphQLError as error:
        return _refuse(app, [error.message])
    errors = validate(schema, document)
    if errors:
        return _refuse(app, [e.message for e in errors])
    op = get_operation_ast(document, operation)
    resolver = Resolver(app, token, measured)
    if op is not None and op.operation == OperationType.MUTATION:
        fields = {_selection_name(s) for s in op.selection_set.selections}
        # See READ_ONLY_REACTIONS and LIMIT_ANSWER_OPENING in github_access.
        body = str((variables or {}).get("body") or "")
        limit_answer = fields == {"addDiscussionComment"} and body.startswith("<!-- tusk:limit ")
        if token.read_only and fields != {"addReaction"} and not limit_answer:
            return {
                "errors": [
                    {
                        "type": "FORBIDDEN",
                        "message": "Resource not accessible by personal access token",
                    }
                ]
            }
        root = resolver.mutation_root()
    else:
        root = resolver.query_root()
    result = run(
        schema,
        document,
        root_value=root,
        variable_values=variables,
        operation_name=operation,
        field_resolver=resolver.resolve_field,
    )
    out: dict[str, Any] = {"data": result.data}
    if result.errors:
        out["errors"] = [
            {"message": e.message, "path": e.path, "type": _error_type(e)} for e in result.errors
        ]
    return out


def _error_type(error: Any) -> str:
    original = getattr(error, "original_error", None)
    if isinstance(original, SandboxError):
        return {404: "NOT_FOUND", 403: "FORBIDDEN", 422: "UNPROCESSABLE"}.get(
            original.status, "INTERNAL"
        )
    return "INTERNAL"


def _refuse(app: AppView, messages: list[str]) -> dict[str, Any]:
    message = app.record_violation("POST", "/graphql", messages, "graphql")
    if app.strict:
        raise GraphQLViolation(message)
    return {"errors": [{"message": m} for m in messages]}


class GraphQLViolation(Exception):
    """A document that does not validate against GitHub's schema (strict mode)."""
