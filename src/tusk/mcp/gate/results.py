"""A call's result as the model gets it, and the identities of calls and results. Pure.

A result is serialised once, compactly, and the server's secrets are redacted
on its structure, so no JSON escaping can hide one. A call is known by one
digest (the audit record's ``args_digest``, reused by loop detection), a
result by the hash of its text.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from tusk.audit.chain import digest

MIN_REDACTED_SECRET = 8  # shorter "tokens" exist only in tests; redacting them would garble text
REDACTED = "[redacted]"


def call_digest(tool: str, args: Mapping[str, Any]) -> str:
    """A call's identity: the audit record's ``args_digest`` and the loop detector's key."""
    return digest({"tool": tool, **args})


def text_digest(text: str) -> str:
    """A result's identity for loop detection: the hash of the text the model gets."""
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def escaped_forms(secrets: Sequence[str]) -> tuple[str, ...]:
    """Each secret as it reads inside a JSON string."""
    return tuple(json.dumps(secret)[1:-1] for secret in secrets)


def serialise(result: Any, secrets: Sequence[str], escaped: Sequence[str] | None = None) -> str:
    """A read's result as the model gets it: compact JSON, serialised once, ``secrets``
    redacted.

    Redaction works on the structure (``redact_value``), so no JSON escaping can
    hide a secret from it; it runs only when the text shows a secret as JSON spells
    it inside a string (``escaped``), which an ordinary call never does.
    """
    if isinstance(result, str):
        return redact_text(result, secrets)
    text = json.dumps(result, separators=(",", ":"))
    forms = escaped_forms(secrets) if escaped is None else escaped
    if any(form in text for form in forms):
        text = json.dumps(redact_value(result, secrets), separators=(",", ":"))
    return text


def redact_text(text: str, secrets: Sequence[str]) -> str:
    for secret in secrets:
        text = text.replace(secret, REDACTED)
    return text


def redact_value(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` with every secret replaced in every string, mapping keys included."""
    if isinstance(value, str):
        return redact_text(value, secrets)
    if isinstance(value, Mapping):
        return {redact_value(k, secrets): redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item, secrets) for item in value]
    return value


class Redactor:
    """This run's secrets, kept out of every text the model or the run's files get."""

    def __init__(self, secrets: Sequence[str]) -> None:
        self.secrets = tuple(s for s in secrets if len(s) >= MIN_REDACTED_SECRET)
        self._escaped = escaped_forms(self.secrets)

    def text(self, text: str) -> str:
        return redact_text(text, self.secrets)

    def result(self, result: Any) -> str:
        """``serialise`` with this run's secrets."""
        return serialise(result, self.secrets, self._escaped)
