"""GitHub's own API descriptions, loaded once per process, and the checks made with them.

The REST description is ``@octokit/openapi``'s ``generated/api.github.com.json``
(OpenAPI 3.0.3) and the GraphQL one is ``@octokit/graphql-schema``'s
``schema.graphql``. Both come from ``node_modules``; they are located by
walking up from this package and from the working directory, or from
``TUSK_NODE_MODULES``.

Everything here is pure once the documents are loaded: ``match`` finds the
operation for a method and path, ``check_request`` and ``check_response``
return a list of human-readable problems (empty when conforming), and
``complete`` fills the required fields a handler left out with neutral values
so that the sandbox only has to spell out the fields that carry meaning.
"""

from __future__ import annotations

import functools
import json
import os
import re
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

OPENAPI_FILE = Path("@octokit/openapi/generated/api.github.com.json")
GRAPHQL_FILE = Path("@octokit/graphql-schema/schema.graphql")
PLACEHOLDER_TIME = "1970-01-01T00:00:00Z"
# Path parameters GitHub lets hold a slash unescaped (branch and ref names, file paths).
SLASHED_PARAMETERS = frozenset({"branch", "ref", "path", "basehead"})


class SpecNotFound(RuntimeError):
    """The npm packages holding GitHub's descriptions are not installed."""


def find_node_modules(start_points: Iterable[Path] | None = None) -> Path:
    """The ``node_modules`` that holds ``@octokit/openapi``."""
    env = os.environ.get("TUSK_NODE_MODULES")
    if env:
        candidate = Path(env)
        if (candidate / OPENAPI_FILE).is_file():
            return candidate
        raise SpecNotFound(f"TUSK_NODE_MODULES={env} holds no {OPENAPI_FILE}")
    starts = list(start_points or (Path(__file__).resolve().parent, Path.cwd().resolve()))
    for start in starts:
        for folder in (start, *start.parents):
            candidate = folder / "node_modules"
            if (candidate / OPENAPI_FILE).is_file():
                return candidate
    raise SpecNotFound(
        "GitHub's API descriptions were not found: run `npm ci` in the project "
        "(it installs @octokit/openapi and @octokit/graphql-schema) or set TUSK_NODE_MODULES"
    )


# --------------------------------------------------------------------------- REST


@dataclass(frozen=True)
class Operation:
    method: str
    template: str
    operation_id: str
    spec: Mapping[str, Any]
    path_params: Mapping[str, str]


@dataclass
class _Template:
    template: str
    segments: tuple[str, ...]
    literal_count: int
    methods: dict[str, Mapping[str, Any]]
    shared_params: list[Any]


@dataclass
class OpenApi:
    """The loaded REST description with a path index."""

    document: Mapping[str, Any]
    load_seconds: float
    _by_length: dict[int, list[_Template]] = field(default_factory=dict)
    _validators: dict[str | int, Any] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        for template, item in self.document["paths"].items():
            segments = tuple(s for s in template.split("/") if s)
            methods = {m.upper(): op for m, op in item.items() if m != "parameters"}
            entry = _Template(
                template=template,
                segments=segments,
                literal_count=sum(1 for s in segments if not s.startswith("{")),
                methods=methods,
                shared_params=list(item.get("parameters", [])),
            )
            self._by_length.setdefault(len(segments), []).append(entry)
        for entries in self._by_length.values():
            entries.sort(key=lambda e: -e.literal_count)

    @property
    def components(self) -> Mapping[str, Any]:
        components: Mapping[str, Any] = self.document["components"]
        return components

    # -- lookup

    def match(self, method: str, path: str) -> Operation | None:
        """The documented operation for ``method path``, or None.

        Templates with more literal segments win (``/user/repos`` before
        ``/users/{username}``). A path longer than every template of its length
        may still match when its last parameter holds slashes (branch names).
        """
        segments = tuple(s for s in path.split("/") if s)
        method = method.upper()
        for entry in self._by_length.get(len(segments), []):
            params = _bind(entry.segments, segments)
            if params is not None and method in entry.methods:
                return self._operation(entry, method, params)
        if path.endswith("/") and len(segments) > 1:
            # ".../contents/" names the root: an empty slashed parameter, as GitHub accepts.
            for entry in self._by_length.get(len(segments) + 1, []):
                last = entry.segments[-1]
                if method in entry.methods and last[1:-1] in SLASHED_PARAMETERS:
                    params = _bind(entry.segments[:-1], segments)
                    if params is not None:
                        return self._operation(entry, method, {**params, last[1:-1]: ""})
        best: tuple[int, _Template, dict[str, str]] | None = None
        for length, entries in self._by_length.items():
            if length == 0 or length >= len(segments):
                continue
            for entry in entries:
                if method not in entry.methods:
                    continue
                params = _bind_greedy(entry.segments, segments)
                if params is not None and (best is None or entry.literal_count > best[0]):
                    best = (entry.literal_count, entry, params)
        if best is not None:
            return self._operation(best[1], method, best[2])
        return None

    def _operation(self, entry: _Template, method: str, params: dict[str, str]) -> Operation:
        op = dict(entry.methods[method])
        op["parameters"] = [*entry.shared_params, *op.get("parameters", [])]
        return Operation(method, entry.template, op["operationId"], op, params)

    # -- $ref resolution

    def resolve(self, node: Any) -> Any:
        while isinstance(node, Mapping) and "$ref" in node:
            node = self._pointer(node["$ref"])
        return node

    def _pointer(self, ref: str) -> Any:
        node: Any = self.document
        for part in ref.removeprefix("#/").split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    # -- validation

    def validator(self, schema: Mapping[str, Any]) -> Any:
        """An OAS 3.0 validator (handles ``nullable``) whose ``$ref``s resolve in the document."""
        # Schemas are objects inside the loaded document, which lives as long as the process.
        key = schema["$ref"] if "$ref" in schema else id(schema)
        with self._lock:
            cached = self._validators.get(key)
        if cached is not None:
            return cached
        made = _validator_class()({**schema, "components": self.components})
        with self._lock:
            self._validators[key] = made
        return made

    def schema_errors(self, schema: Mapping[str, Any], value: Any, where: str) -> list[str]:
        errors = sorted(self.validator(schema).iter_errors(value), key=lambda e: list(e.path))
        return [f"{where}{_json_path(e.absolute_path)}: {e.message[:300]}" for e in errors[:5]]

    def parameters(self, op: Operation) -> dict[tuple[str, str], Mapping[str, Any]]:
        out: dict[tuple[str, str], Mapping[str, Any]] = {}
        for param in op.spec.get("parameters", []):
            resolved = self.resolve(param)
            out[(resolved["in"], resolved["name"])] = resolved
        return out

    def check_request(
        self, op: Operation, query: Mapping[str, list[str]], body: Any, has_body: bool
    ) -> list[str]:
        """Problems with the query parameters and the JSON body of a request."""
        problems: list[str] = []
        params = self.parameters(op)
        for (where, name), param in params.items():
            if where == "path":
                problems += self._check_value(
                    param, op.path_params.get(name), f"path parameter {name}"
                )
            elif where == "query" and name not in query and param.get("required"):
                problems.append(f"query parameter {name} is required")
        for name, values in query.items():
            documented = params.get(("query", name))
            if documented is None:
                problems.append(f"query parameter {name!r} is not documented for {op.operation_id}")
                continue
            array = documented.get("schema", _ANY_SCHEMA).get("type") == "array"
            value: Any = values if array else values[-1]
            problems += self._check_value(documented, value, f"query parameter {name}")
        request_body = op.spec.get("requestBody")
        if request_body is None:
            if has_body and body not in (None, {}, ""):
                problems.append(f"{op.operation_id} takes no request body")
            return problems
        request_body = self.resolve(request_body)
        if not has_body:
            if request_body.get("required"):
                problems.append(f"{op.operation_id} requires a JSON body")
            return problems
        schema = _json_schema(request_body.get("content", {}))
        if schema is None:
            return problems
        problems += self.schema_errors(schema, body, "body")
        problems += self._undocumented_fields(schema, body)
        return problems

    def _undocumented_fields(self, schema: Mapping[str, Any], body: Any) -> list[str]:
        # GitHub ignores unknown fields; we refuse them so a misspelt field fails a test.
        schema = self.resolve(schema)
        if not isinstance(body, Mapping) or "properties" not in schema:
            return []
        if schema.get("additionalProperties") not in (None, False):
            return []
        known = set(schema["properties"])
        return [f"body field {key!r} is not documented" for key in body if key not in known]

    def _check_value(self, param: Mapping[str, Any], raw: Any, where: str) -> list[str]:
        schema = self.resolve(param.get("schema", _ANY_SCHEMA))
        if raw is None:
            return []
        value = _coerce(schema, raw)
        if value is _INVALID:
            return [f"{where}: {raw!r} is not a valid {schema.get('type')}"]
        return self.schema_errors(schema, value, where)

    def response_schema(self, op: Operation, status: int) -> tuple[bool, Mapping[str, Any] | None]:
        """(documented, JSON schema or None) of the response ``op`` answers with ``status``."""
        responses = op.spec.get("responses", {})
        response = responses.get(str(status)) or responses.get(f"{str(status)[0]}XX")
        if response is None:
            return False, None
        response = self.resolve(response)
        return True, _json_schema(response.get("content", {}))

    def check_response(self, op: Operation, status: int, body: Any, is_json: bool) -> list[str]:
        documented, schema = self.response_schema(op, status)
        if not documented:
            if status in ANY_REDIRECT:
                return []
            if status < 400:
                return [f"status {status} is not documented for {op.operation_id}"]
            return []  # GitHub answers undocumented errors (401, 5xx) on every route
        if schema is None or not is_json:
            return []
        return self.schema_errors(schema, body, "response")

    # -- completion

    def complete(self, op: Operation, status: int, body: Any) -> Any:
        """``body`` with every required field it lacks filled with a neutral value."""
        _, schema = self.response_schema(op, status)
        if schema is None:
            return body
        return self.fill(schema, body, depth=0)

    def fill(self, schema: Any, value: Any, depth: int) -> Any:
        schema = self.resolve(schema)
        if depth > 12 or not isinstance(schema, Mapping):
            return value
        for sub in schema.get("allOf", []):
            value = self.fill(sub, value, depth + 1)
        choices = schema.get("oneOf") or schema.get("anyOf")
        if choices and value is not None:
            chosen = self._discriminated(schema, value) or self._pick(choices, value)
            return self.fill(chosen, value, depth + 1)
        if isinstance(value, dict):
            properties = schema.get("properties", {})
            for name in schema.get("required", []):
                if name not in value:
                    value[name] = self.default(properties.get(name, {}), depth + 1)
            for name, sub_value in value.items():
                if name in properties and isinstance(sub_value, dict | list):
                    value[name] = self.fill(properties[name], sub_value, depth + 1)
        elif isinstance(value, list) and "items" in schema:
            return [self.fill(schema["items"], item, depth + 1) for item in value]
        return value

    def _discriminated(self, schema: Mapping[str, Any], value: Any) -> Any:
        discriminator = schema.get("discriminator")
        if not discriminator or not isinstance(value, dict):
            return None
        ref = discriminator.get("mapping", {}).get(value.get(discriminator["propertyName"]))
        return {"$ref": ref} if ref else None

    def _pick(self, choices: list[Any], value: Any) -> Any:
        # Prefer the alternative whose declared properties overlap the value most.
        if not isinstance(value, dict):
            for choice in choices:
                resolved = self.resolve(choice)
                if resolved.get("type") == _json_type(value):
                    return choice
            return choices[0]
        scored = []
        for index, choice in enumerate(choices):
            resolved = self.resolve(choice)
            props = set(resolved.get("properties", {}))
            for sub in resolved.get("allOf", []):
                props |= set(self.resolve(sub).get("properties", {}))
            scored.append((len(props & set(value)), -index, choice))
        return max(scored, key=lambda item: (item[0], item[1]))[2]

    def default(self, schema: Any, depth: int) -> Any:
        schema = self.resolve(schema)
        if not isinstance(schema, Mapping):
            return None
        if schema.get("nullable"):
            return None
        if "enum" in schema:
            return schema["enum"][0]
        choices = schema.get("oneOf") or schema.get("anyOf")
        if choices:
            return self.default(choices[0], depth + 1)
        if "allOf" in schema:
            return self.fill(schema, {}, depth + 1)
        kind = schema.get("type")
        if kind == "string":
            return PLACEHOLDER_TIME if schema.get("format") == "date-time" else ""
        if kind in ("integer", "number"):
            return 0
        if kind == "boolean":
            return False
        if kind == "array":
            return []
        if kind == "object" or "properties" in schema:
            return self.fill(schema, {}, depth + 1)
        return None


@functools.cache
def _validator_class() -> Any:
    """OAS 3.0 validation where ``nullable: true`` also admits null past an ``enum``.

    GitHub's description marks fields such as ``state_reason`` nullable with an
    enum that lacks null, and GitHub does answer null; OpenAPI 3.0.3's strict
    reading would reject every open issue.
    """
    from jsonschema import _keywords, validators
    from openapi_schema_validator import OAS30Validator
    from openapi_schema_validator import _keywords as oas_keywords

    # jsonschema's keyword functions are generators of errors; its stubs (types-jsonschema)
    # say they return None, and leave validators.extend unannotated.
    keywords: Any = _keywords
    extend: Any = validators.extend

    def enum(validator: Any, enums: Any, instance: Any, schema: Mapping[str, Any]) -> Any:
        if instance is None and schema.get("nullable"):
            return
        yield from keywords.enum(validator, enums, instance, schema)

    def one_of(validator: Any, choices: Any, instance: Any, schema: Mapping[str, Any]) -> Any:
        # get-content's oneOf maps a discriminator onto an array alternative; a
        # list has no property to discriminate on, so plain oneOf decides.
        if "discriminator" in schema and not isinstance(instance, dict):
            yield from keywords.oneOf(validator, choices, instance, schema)
            return
        # A 409 of "Create or update file contents" is `oneOf` basic-error and
        # repository-rule-violation-error, two open objects every error body matches:
        # read as `anyOf`, or no answer GitHub sends could conform.
        refs = [str(choice.get("$ref", "")) for choice in choices]
        if refs and all(ref.endswith("-error") for ref in refs):
            yield from keywords.anyOf(validator, choices, instance, schema)
            return
        yield from oas_keywords.oneOf(validator, choices, instance, schema)

    return extend(OAS30Validator, {"enum": enum, "oneOf": one_of})


_INVALID = object()
_ANY_SCHEMA: Mapping[str, Any] = {}  # one object, so validator caching by id() stays sound


def _coerce(schema: Mapping[str, Any], raw: Any) -> Any:
    kind = schema.get("type")
    try:
        if isinstance(raw, list):
            items = schema.get("items", {})
            return [_coerce(items, item) for item in raw]
        if kind == "integer":
            return int(raw)
        if kind == "number":
            return float(raw)
        if kind == "boolean":
            if raw not in ("true", "false"):
                return _INVALID
            return raw == "true"
    except ValueError:
        return _INVALID
    return raw


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _json_schema(content: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for media_type, entry in content.items():
        if "json" in media_type and "schema" in entry:
            schema: Mapping[str, Any] = entry["schema"]
            return schema
    return None


def _json_path(path: Iterable[Any]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _bind_greedy(template: tuple[str, ...], segments: tuple[str, ...]) -> dict[str, str] | None:
    """Bind a shorter template by letting one parameter span several segments (``feat/x``)."""
    extra = len(segments) - len(template)
    for index, pattern in enumerate(template):
        if pattern[1:-1] not in SLASHED_PARAMETERS:
            continue
        head = _bind(template[:index], segments[:index])
        tail = _bind(template[index + 1 :], segments[index + extra + 1 :])
        if head is not None and tail is not None:
            return {**head, **tail, pattern[1:-1]: "/".join(segments[index : index + extra + 1])}
    return None


def _bind(template: tuple[str, ...], segments: tuple[str, ...]) -> dict[str, str] | None:
    if len(template) != len(segments):
        return None
    params: dict[str, str] = {}
    for pattern, segment in zip(template, segments, strict=True):
        if pattern.startswith("{") and pattern.endswith("}"):
            params[pattern[1:-1]] = segment
        elif "{" in pattern:  # e.g. "{owner}.git" style mixed segments
            regex = re.sub(r"\\\{(\w+)\\\}", r"(?P<\1>[^/]+)", re.escape(pattern))
            found = re.fullmatch(regex, segment)
            if not found:
                return None
            params.update(found.groupdict())
        elif pattern != segment:
            return None
    return params


# Where GitHub is observed to answer outside its own description, the sandbox
# widens the description instead of lying about GitHub. Each entry: the JSON
# pointer of a property schema that may also be null, and the evidence.
OBSERVED_NULLABLE: tuple[tuple[str, str], ...] = (
    (
        "/components/schemas/thread/properties/subject/properties/url",
        "Discussion notifications carry no REST URL (gitify-app/gitify#521)",
    ),
    (
        "/components/schemas/thread/properties/subject/properties/latest_comment_url",
        "Discussion notifications carry no REST URL (gitify-app/gitify#521)",
    ),
    (
        "/components/schemas/pull-request/properties/head/properties/repo",
        "a PR whose head repository was deleted shows it as unknown (isaacs/github#168)",
    ),
    (
        "/components/schemas/pull-request-simple/properties/head/properties/repo",
        "a PR whose head repository was deleted shows it as unknown (isaacs/github#168)",
    ),
)


# "Clients should assume that any request may result in a redirection" (docs.github.com/
# en/rest/using-the-rest-api/troubleshooting-the-rest-api, "HTTP redirects"): a renamed
# or transferred repository redirects every operation, documented there or not.
ANY_REDIRECT = (301, 302, 307)


def apply_observed_behaviour(document: dict[str, Any]) -> None:
    for pointer, _evidence in OBSERVED_NULLABLE:
        *parents, last = pointer.strip("/").split("/")
        node: Any = document
        for part in parents:
            node = node[part]
        schema = node[last]
        if "$ref" in schema or "allOf" in schema or "oneOf" in schema or "anyOf" in schema:
            node[last] = {"anyOf": [schema, {"nullable": True, "enum": [None]}]}
        else:
            node[last] = {**schema, "nullable": True}


@functools.cache
def load_openapi() -> OpenApi:
    """Parse ``api.github.com.json`` once per process (13 MB, well under a second)."""
    path = find_node_modules() / OPENAPI_FILE
    started = time.perf_counter()
    with path.open("rb") as handle:
        document = json.load(handle)
    apply_observed_behaviour(document)
    loaded = OpenApi(document=document, load_seconds=0.0)
    loaded.load_seconds = time.perf_counter() - started
    return loaded


# --------------------------------------------------------------------------- GraphQL


@dataclass(frozen=True)
class GraphQLSchema:
    schema: Any
    load_seconds: float


_GRAPHQL_LOCK = threading.Lock()


def load_graphql_schema() -> GraphQLSchema:
    """GitHub's GraphQL schema, built once per process (threads wait for the first build)."""
    with _GRAPHQL_LOCK:
        return _build_graphql_schema()


@functools.cache
def _build_graphql_schema() -> GraphQLSchema:
    """Build GitHub's GraphQL schema once per process.

    The published SDL repeats some ``EnterpriseOwnerInfo`` fields, so it is
    built with ``assume_valid_sdl=True`` as graphql-core would otherwise refuse it.
    """
    from graphql import build_ast_schema, parse

    path = find_node_modules() / GRAPHQL_FILE
    started = time.perf_counter()
    schema = build_ast_schema(parse(path.read_text(encoding="utf-8")), assume_valid_sdl=True)
    # GitHub deprecates some interface implementations (Project.id ...), which
    # graphql-core's schema check rejects; GitHub serves the schema anyway.
    schema._validation_errors = []
    return GraphQLSchema(schema=schema, load_seconds=time.perf_counter() - started)
