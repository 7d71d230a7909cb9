"""The range of every numeric command-line option, checked where argparse reads it.

``int_in(1, 500)`` and ``float_in(0, 60)`` are argparse ``type=`` callables that
refuse, with the range in the message, a value outside ``low``..``high`` (and
NaN or infinity): ``merge-shards --timeout -5`` stops at the command line
instead of meaning something nobody asked for.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def _refuse(noun: str, low: float, high: float, text: str) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(f"must be {noun} from {low:g} to {high:g}, got {text!r}")


def int_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high`` inclusive."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise _refuse("a whole number", low, high, text) from None
        if not low <= value <= high:
            raise _refuse("a whole number", low, high, text)
        return value

    parse.__name__ = "int"  # argparse names the type in its own messages
    return parse


def float_in(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a finite number from ``low`` to ``high`` inclusive."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise _refuse("a number", low, high, text) from None
        if not (math.isfinite(value) and low <= value <= high):
            raise _refuse("a number", low, high, text)
        return value

    parse.__name__ = "float"
    return parse
