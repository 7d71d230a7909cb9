"""Bot commands: a short message addressed to the bot that asks it for one thing (P5).

A command is one line of prose (code, quotes and HTML comments never count, as
for mentions), or a whole message of at most ``MAX_MESSAGE_CHARS`` characters
of prose, read as words: letters, digits, ``'`` and ``-``; punctuation and
emoji are no words. Grammar (case-insensitive)::

    command = *polite mention *polite verb *polite
            / *polite verb *polite mention *polite
    mention = "@" bot                      ; one or more, anywhere among the words
    polite  = "please" / "pls" / "plz" / "kindly" / "now" / "just" / "thanks"
            / "thank" / "you" / "u" / "can" / "could" / "would" / "will"
            / "hey" / "hi" / "hello" / "ok" / "okay" / "dear"
    verb    = the words of one entry of ``VERBS``

So ``@bot please go away``, ``@bot, go away please``, ``please go away @bot``,
``Go away, @bot!`` and ``@bot could you go away?`` are ``go_away``, while
``@bot don't go away`` and ``@bot go and look away`` are not commands.

A verb marked ``leading`` also counts wherever a mention is directly followed
by its words, whatever comes after (``@bot go away, and take the PR with
you``): a request to leave must never become an agent task.

Adding a verb is one entry in ``VERBS``, one command job that it asks for
(``tusk.contracts.commands``) and that job's step. ``docs/bot-commands.md`` is the
user-facing description.

The approval verbs (``approval_command``) carry an argument, a staged set's
digest, so they are read by a pattern of their own after a prose mention:
``@bot apply``, ``@bot apply <digest>`` (backticks allowed) and ``@bot discard``,
with nothing else on the line, so a task worded "@bot apply the patch" stays a task.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from tusk.text.markdown import shown_prose
from tusk.text.mentions import mention_pattern, mentions_bot, prose

MAX_MESSAGE_CHARS = 280  # a whole message this short is read as one command
POLITE = frozenset(
    {
        "please", "pls", "plz", "kindly", "now", "just", "thanks", "thank", "you", "u",
        "can", "could", "would", "will", "hey", "hi", "hello", "ok", "okay", "dear",
    }
)  # fmt: skip
_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*|_+", re.UNICODE)
_MENTION = "\0mention\0"


@dataclass(frozen=True)
class Verb:
    """One command: ``name`` in code and logs, the ``words`` that say it, and whether a
    mention directly followed by them counts whatever follows (``leading``)."""

    name: str
    words: str
    leading: bool = False


VERBS: tuple[Verb, ...] = (
    Verb("go_away", "go away", leading=True),
    Verb("undo", "undo"),  # take back the latest run on this thread (tusk.steps.undo)
    Verb("stop", "stop"),  # end the run in flight on this thread (tusk.steps.stop)
)


@dataclass(frozen=True)
class Command:
    verb: str  # the ``Verb.name``
    text: str  # the line (or message) that said it, as prose


def command_words(text: str) -> list[str]:
    """The lowercased words of ``text``; punctuation and emoji are dropped."""
    return [match.group(0).lower().replace("’", "'") for match in _WORD.finditer(text)]


def _tokens(text: str, bot: str) -> list[str]:
    """Words of ``text`` with every mention of the bot as one ``_MENTION`` token."""
    out: list[str] = []
    position = 0
    for match in mention_pattern(bot).finditer(text):
        out += command_words(text[position : match.start()])
        out.append(_MENTION)
        position = match.end()
    return out + command_words(text[position:])


def _matches(tokens: Sequence[str], verb_words: Sequence[str]) -> bool:
    """The tokens are mentions, polite words and the verb's words once, in order."""
    if _MENTION not in tokens:
        return False
    rest = [t for t in tokens if t != _MENTION]
    for start in range(len(rest) - len(verb_words) + 1):
        if list(rest[start : start + len(verb_words)]) != list(verb_words):
            continue
        others = rest[:start] + rest[start + len(verb_words) :]
        if all(word in POLITE for word in others):
            return True
    return False


def _leading(tokens: Sequence[str], verb_words: Sequence[str]) -> bool:
    """A mention directly followed by the verb's words (polite words between allowed)."""
    for index, token in enumerate(tokens):
        if token != _MENTION:
            continue
        after = [t for t in tokens[index + 1 :] if t != _MENTION]
        while after and after[0] in POLITE and after[0] != verb_words[0]:
            after.pop(0)
        if after[: len(verb_words)] == list(verb_words):
            return True
    return False


def _candidates(text: str) -> Iterable[str]:
    lines = [line for line in text.split("\n") if line.strip()]
    yield from lines
    whole = " ".join(line.strip() for line in lines)
    if len(lines) > 1 and len(whole) <= MAX_MESSAGE_CHARS:
        yield whole


def parse_command(
    markdown: str | None, *, bot: str, verbs: Sequence[Verb] | None = None
) -> Command | None:
    """The first command ``markdown`` gives the bot, or None (pure). ``verbs``: ``VERBS``
    unless given."""
    if not markdown:
        return None
    verbs = VERBS if verbs is None else verbs
    text = prose(markdown)
    if mention_pattern(bot).search(text) is None:
        return None
    for candidate in _candidates(text):
        tokens = _tokens(candidate, bot)
        for verb in verbs:
            wanted = command_words(verb.words)
            if _matches(tokens, wanted) or (verb.leading and _leading(tokens, wanted)):
                return Command(verb.name, candidate.strip())
    return None


def with_phrases(
    phrases: Mapping[str, str], verbs: Sequence[Verb] | None = None
) -> tuple[Verb, ...]:
    """``verbs`` (``VERBS`` unless given) with the configured words of some (e.g.
    ``go_away.phrase``)."""
    return tuple(
        Verb(v.name, phrases.get(v.name, v.words), v.leading)
        for v in (VERBS if verbs is None else verbs)
    )


def asks_to_leave(markdown: str | None, *, bot: str, phrase: str = "go away") -> bool:
    """Does ``markdown`` ask the bot to go away (``phrase``: ``go_away.phrase``)?"""
    command = parse_command(markdown, bot=bot, verbs=with_phrases({"go_away": phrase}))
    return command is not None and command.verb == "go_away"


def asks_to_undo(markdown: str | None, *, bot: str) -> bool:
    """Does ``markdown`` ask the bot to undo its latest run on the thread?"""
    command = parse_command(markdown, bot=bot)
    return command is not None and command.verb == "undo"


def asks_to_stop(markdown: str | None, *, bot: str) -> bool:
    """Does ``markdown`` ask the bot to stop the run in flight on the thread?"""
    command = parse_command(markdown, bot=bot)
    return command is not None and command.verb == "stop"


# --------------------------------------------------------------------------- approval verbs

ApprovalVerb = Literal["apply", "discard"]
# ``@bot apply``, ``@bot apply sha256:<64 hex>`` (or the 64 hex alone), ``@bot discard``:
# the verb as a whole word with nothing but the digest and closing punctuation after it,
# so that a task worded like "@bot apply the patch from #3" stays a task.
_APPROVAL = re.compile(
    r"^[\s:,]*(?P<verb>apply|discard)"
    r"(?:\s+`?(?P<digest>(?:sha256:)?[0-9A-Fa-f]{64})`?)?"
    r"[\s.!]*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ApprovalCommand:
    """``@bot apply [<digest>]`` or ``@bot discard``: an answer to a staged set's preview."""

    verb: ApprovalVerb
    digest: str | None = None  # as typed; ``tusk.approval.staged_set.normal_digest`` reads it


def approval_command(markdown: str | None, *, bot: str) -> ApprovalCommand | None:
    """The first prose mention that is an approval verb, or None. A discard never
    carries a digest (it drops the set pending on the thread)."""
    if not markdown:
        return None
    # The mention must be prose; what follows it is read as typed, since a digest
    # copied from the preview comes in backticks (prose() blanks code spans in place).
    source = markdown.replace("\r\n", "\n")
    cleaned = prose(source)
    for found in mention_pattern(bot).finditer(cleaned):
        end = source.find("\n", found.end())
        match = _APPROVAL.match(source[found.end() : end if end != -1 else len(source)])
        if match is None:
            continue
        verb: ApprovalVerb = "apply" if match.group("verb").lower() == "apply" else "discard"
        digest = match.group("digest")
        if verb == "discard" and digest is not None:
            continue
        return ApprovalCommand(verb, digest)
    return None


def is_go_away(markdown: str | None, *, bot: str, phrase: str) -> bool:
    """True when ``markdown`` asks the bot to go away: the bot-command grammar
    ("@bot go away", "@bot, please go away", "go away @bot"), on
    the source or on what GitHub shows of it (``&#64;bot go away`` mentions the bot, so
    it must leave rather than become a task)."""
    if asks_to_leave(markdown, bot=bot, phrase=phrase):
        return True
    return mentions_bot(markdown, bot) and asks_to_leave(
        shown_prose(markdown), bot=bot, phrase=phrase
    )
