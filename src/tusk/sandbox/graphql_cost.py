"""What a GraphQL call costs on GitHub, computed before it runs.

Source: docs.github.com/en/graphql/overview/rate-limits-and-query-limits-for-the-graphql-api

- Node limit: "the maximum number of nodes a call can request is 500,000";
  nodes are counted per connection as its ``first``/``last`` times the page
  sizes of the connections around it. A call over the limit is refused
  before it runs, with an error of type ``MAX_NODE_LIMIT_EXCEEDED``.
- Primary cost: "add up the number of requests needed to fulfill each unique
  connection in the call. Assume every request will reach the first or last
  argument limits. Divide the number by 100 and round the result to get the
  final aggregate cost", at least 1; 5,000 points an hour for a user.
- Secondary points: a query costs 1 point, a mutation 5 (see ``secondary``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

NODE_LIMIT = 500_000


@dataclass(frozen=True)
class Measure:
    requests: int
    nodes: int
    mutation: bool

    @property
    def cost(self) -> int:
        return max(1, math.floor(self.requests / 100 + 0.5))

    @property
    def too_many_nodes(self) -> bool:
        return self.nodes > NODE_LIMIT

    def node_limit_error(self) -> dict[str, Any]:
        return {
            "type": "MAX_NODE_LIMIT_EXCEEDED",
            "message": f"This query requests up to {self.nodes:,} possible nodes which "
            f"exceeds the maximum of {NODE_LIMIT:,}.",
        }


def measure(query: str, variables: dict[str, Any], operation: str | None) -> Measure | None:
    """The call's connection requests and nodes; None when it does not even parse
    (execution then reports the error)."""
    from graphql import (
        FieldNode,
        FragmentDefinitionNode,
        FragmentSpreadNode,
        GraphQLError,
        InlineFragmentNode,
        OperationType,
        SelectionSetNode,
        get_operation_ast,
        parse,
        value_from_ast_untyped,
    )

    try:
        document = parse(query)
    except GraphQLError:
        return None
    op = get_operation_ast(document, operation)
    if op is None:
        return None
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    values: dict[str, Any] = {
        v.variable.name.value: value_from_ast_untyped(v.default_value)
        for v in op.variable_definitions or ()
        if v.default_value is not None
    }
    values.update(variables or {})
    totals = {"requests": 0, "nodes": 0}

    def page_size(field: FieldNode) -> int | None:
        for argument in field.arguments or ():
            if argument.name.value in ("first", "last"):
                value = value_from_ast_untyped(argument.value, values)
                if isinstance(value, int) and not isinstance(value, bool):
                    return value
        return None

    def walk(selections: SelectionSetNode, around: int, seen: frozenset[str]) -> None:
        for selection in selections.selections:
            if isinstance(selection, FieldNode):
                size = page_size(selection)
                inner = around
                if size is not None:
                    totals["requests"] += around
                    totals["nodes"] += around * size
                    inner = around * size
                if selection.selection_set is not None:
                    walk(selection.selection_set, inner, seen)
            elif isinstance(selection, InlineFragmentNode):
                walk(selection.selection_set, around, seen)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                if name in fragments and name not in seen:
                    walk(fragments[name].selection_set, around, seen | {name})

    walk(op.selection_set, 1, frozenset())
    return Measure(
        requests=totals["requests"],
        nodes=totals["nodes"],
        mutation=op.operation == OperationType.MUTATION,
    )
