"""Argument types of the command line: numbers checked when they are parsed."""

from __future__ import annotations

import argparse
import math
from typing import Any


def whole(minimum: int) -> Any:
    """An argparse type: a whole number ``>= minimum``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    return parse


def real(low: float, high: float = math.inf, low_open: bool = False) -> Any:
    """An argparse type: a finite number in ``[low, high]`` (``(low, high]`` if ``low_open``)."""
    where = (
        (f"> {low:g}" if low_open else f">= {low:g}")
        if high == math.inf
        else f"in [{low:g}, {high:g}]"
    )

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or not low <= value <= high or (low_open and value == low):
            raise argparse.ArgumentTypeError(f"must be a finite number {where}, got {text}")
        return value

    return parse


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's layout and appends every option's default to its help."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "%(default)" in text or action.default in (None, argparse.SUPPRESS) or action.required:
            return text
        return f"{text} (default: %(default)s)"
