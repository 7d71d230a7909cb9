"""Reading ``tusk.yml`` safely, and saying what is wrong with it in plain words.

The YAML is read by a loader stricter than ``yaml.safe_load``: a file over
``MAX_CONFIG_BYTES`` is refused unread, an anchor or alias (``&name``,
``*name``, also behind ``<<:`` merges) is refused before anything is built
(an alias bomb would expand without bound), and a key given twice in one
mapping is refused instead of the last one silently winning.

``plain_problems`` turns pydantic's validation errors into one line per
problem: the key path (``limits.max_turns``, ``allowed_users[1]``), what the
value must be in words, what was given, and an example line to copy; never
pydantic's internal wording or a raw regular expression.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from tusk.contracts.models import LOGIN_PATTERN, REPO_PATTERN

MAX_CONFIG_BYTES = 256 * 1024


class YamlProblem(ValueError):
    """The file is not YAML Tusk accepts; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None) -> None:
        self.message = message
        self.line = line
        super().__init__(message)

    def __str__(self) -> str:
        where = f"(YAML) line {self.line}" if self.line else "(YAML)"
        return f"{where}: {self.message}"


def _line(mark: Any) -> int | None:
    """The 1-based line of a parser mark (events read from a file always have one)."""
    return mark.line + 1 if mark is not None else None


class _StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` without anchors, aliases or duplicate keys."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped in types-PyYAML
        if isinstance(event, yaml.AliasEvent):
            raise YamlProblem(
                f"the alias *{event.anchor} repeats another part of the file; tusk.yml allows "
                "no anchors or aliases: write the value out where it is needed",
                _line(event.start_mark),
            )
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise YamlProblem(
                f"the anchor &{anchor} is not allowed in tusk.yml (nor aliases that use it): "
                "write each value out where it is needed",
                event.start_mark.line + 1,
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: let SafeLoader say so
                break
            if first is not None:
                raise YamlProblem(
                    f"the key {key!r} is given twice in one block (first on line {first}); "
                    "keep one of them",
                    line,
                )
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """Parse ``text`` with the strict loader; raises ``YamlProblem``."""
    try:
        return yaml.load(text, Loader=_StrictLoader)
    except YamlProblem:
        raise
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        raise YamlProblem(
            f"this is not valid YAML: {problem}", mark.line + 1 if mark else None
        ) from None


# --------------------------------------------------------------------------- plain words

_PATTERNS = {
    LOGIN_PATTERN: "a GitHub login (letters, digits and single hyphens, e.g. octocat)",
    REPO_PATTERN: "a repository as owner/name (e.g. my-org/tusk-control)",
}
_TYPES = {
    "int_parsing": "a whole number",
    "int_type": "a whole number",
    "int_from_float": "a whole number",
    "float_parsing": "a number",
    "float_type": "a number",
    "bool_parsing": "true or false",
    "bool_type": "true or false",
    "string_type": "text",
    "tuple_type": "a list",
    "list_type": "a list",
    "set_type": "a list",
    "dict_type": "a block of keys",
    "model_type": "a block of keys",
    "model_attributes_type": "a block of keys",
}


def _keys(loc: Iterable[Any]) -> tuple[Any, ...]:
    """The location without pydantic's union-member tags (``literal['open']``, ``Network``)."""
    return tuple(
        part
        for part in loc
        if isinstance(part, int) or ("[" not in str(part) and not str(part)[:1].isupper())
    )


def _path(loc: Iterable[Any]) -> str:
    out = ""
    for part in _keys(loc):
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _field(model: type[BaseModel], loc: Iterable[Any]) -> tuple[FieldInfo | None, str | None]:
    """The field a location names, and its key (for the example line)."""
    current: Any = model
    info: FieldInfo | None = None
    key: str | None = None
    for part in loc:
        if isinstance(part, int):
            continue
        fields = getattr(current, "model_fields", None)
        if not fields or part not in fields:
            return None, None
        info, key = fields[part], str(part)
        annotation = info.annotation
        current = annotation if isinstance(annotation, type) else None
    return info, key


def example_line(model: type[BaseModel], loc: Iterable[Any]) -> str:
    """``max_turns: 60``: the key with its example (or default) value, as YAML."""
    info, key = _field(model, tuple(loc))
    if info is None or key is None:
        return ""
    value: Any = PydanticUndefined
    if info.examples:
        value = info.examples[0]
    elif info.default is not PydanticUndefined and not isinstance(info.default, BaseModel):
        value = info.default
    if value is PydanticUndefined:
        return ""
    if isinstance(value, tuple):
        value = list(value)
    rendered = yaml.safe_dump({key: value}, default_flow_style=True, width=200).strip()
    return rendered[1:-1] if rendered.startswith("{") else rendered


# pydantic's error type -> (what the value must be, the ctx key holding the limit)
_LIMITS = {
    "greater_than_equal": ("must be at least {}", "ge"),
    "greater_than": ("must be more than {}", "gt"),
    "less_than_equal": ("must be at most {}", "le"),
    "less_than": ("must be less than {}", "lt"),
    "string_too_short": ("must have at least {} character(s)", "min_length"),
    "too_short": ("must list at least {} item(s)", "min_length"),
    "too_long": ("may list at most {} item(s)", "max_length"),
    "literal_error": ("must be one of {}", "expected"),
}


def _words(item: Mapping[str, Any], known: Iterable[str]) -> str:
    kind = item["type"]
    ctx = item.get("ctx") or {}
    loc = item["loc"]
    if kind == "missing":
        return "is required but missing"
    if kind == "extra_forbidden":
        name = str(loc[-1]) if loc else ""
        close = difflib.get_close_matches(name, list(known), n=1)
        if close:
            return f"is not a key Tusk knows; did you mean `{close[0]}`?"
        return "is not a key Tusk knows; `tusk config schema` lists every key"
    if kind in _TYPES:
        return f"must be {_TYPES[kind]}"
    if kind in _LIMITS:
        words, key = _LIMITS[kind]
        return words.format(ctx.get(key))
    if kind == "string_pattern_mismatch":
        return f"must be {_PATTERNS.get(str(ctx.get('pattern')), 'in the documented form')}"
    if kind in ("value_error", "assertion_error"):
        message = str(item.get("msg", ""))
        for prefix in ("Value error, ", "Assertion failed, "):
            message = message.removeprefix(prefix)
        return message
    return str(item.get("msg", "is not valid"))


def plain_problems(error: ValidationError, model: type[BaseModel]) -> list[str]:
    """One line per problem: key path, what it must be, what was given, an example."""
    problems = []
    for item in error.errors():
        loc = _keys(item["loc"])
        parent, _ = _field(model, loc[:-1]) if len(loc) > 1 else (None, None)
        known: Iterable[str] = model.model_fields
        if parent is not None and isinstance(parent.annotation, type):
            known = getattr(parent.annotation, "model_fields", {})
        line = f"{_path(loc)}: {_words(item, known)}"
        if item["type"] not in ("missing", "extra_forbidden") and "input" in item:
            line += f" (got {_shown(item['input'])})"
        example = "" if item["type"] == "extra_forbidden" else example_line(model, loc)
        if example:
            line += f"; for example `{example}`"
        problems.append(line)
    return problems
