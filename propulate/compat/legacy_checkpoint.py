"""Propulate 1.2's pickle checkpoints in a run directory: found and reported, not read.

Propulate 1.2 kept each island's population in ``island_<i>_ckpt.pickle`` (and the previous one
in ``island_<i>_ckpt.bkp``) in its ``checkpoint_path``. This version resumes from its own
evaluation logs (``evals/*.jsonl``, :mod:`propulate.runs.log`) and does not unpickle 1.2's
files (unpickling runs code stored in the file, and 1.2's individuals are another class). A
run started on a directory holding them warns with :class:`LegacyCheckpointWarning`, naming
the files, so a 1.2 user does not mistake the fresh start for a resume.
"""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

log = logging.getLogger("propulate")

#: File-name patterns of Propulate 1.2's checkpoints.
PATTERNS: tuple[str, ...] = ("island_*_ckpt.pickle", "island_*_ckpt.bkp")


class LegacyCheckpointWarning(UserWarning):
    """A Propulate 1.2 checkpoint lies in the run directory and is not read."""


def find_legacy_checkpoints(directory: str | Path) -> list[Path]:
    """Propulate 1.2's checkpoint files in ``directory`` (sorted; empty if it does not exist)."""
    root = Path(directory)
    if not root.is_dir():
        return []
    return sorted({p for pattern in PATTERNS for p in root.glob(pattern) if p.is_file()})


def warn_legacy_checkpoints(directory: str | Path) -> list[Path]:
    """Warn (and log on the ``propulate`` logger) when ``directory`` holds 1.2 checkpoints.

    Returns
    -------
    list of Path
        The files found.
    """
    found = find_legacy_checkpoints(directory)
    if found:
        names = ", ".join(p.name for p in found)
        message = (
            f"{directory} holds Propulate 1.2 checkpoint(s) ({names}), which this version "
            "does not read: it resumes only from its own evaluation logs (evals/*.jsonl), so "
            "this run starts without the individuals stored in them"
        )
        log.warning(message)
        warnings.warn(message, LegacyCheckpointWarning, stacklevel=3)
    return found
