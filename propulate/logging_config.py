"""Logging set-up for the ``propulate`` logger (Propulate 1.2's ``set_logger_config``)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path


def set_logger_config(
    level: int = logging.INFO,
    log_file: str | Path | None = None,
    log_to_stdout: bool = True,
    log_rank: bool = False,
    colors: bool = True,
) -> None:
    """Configure the ``propulate`` logger (call once per process).

    Parameters
    ----------
    level : int
        Logging level, e.g. ``logging.INFO``.
    log_file : path, optional
        Also write the log to this file (its folder is created).
    log_to_stdout : bool
        Write the log to standard output.
    log_rank : bool
        Prefix every line with the MPI rank.
    colors : bool
        Colour the level names on a terminal.
    """
    from mpi4py import MPI

    prefix = f"{MPI.COMM_WORLD.Get_rank()}:" if log_rank else ""
    fmt = f"{prefix}[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"
    logger = logging.getLogger("propulate")
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
        handler.close()
    if log_to_stdout:
        handler = logging.StreamHandler(sys.stdout)
        use_colors = colors and sys.stdout.isatty()
        handler.setFormatter(_ColorFormatter(fmt) if use_colors else logging.Formatter(fmt))
        logger.addHandler(handler)
    if log_file is not None:
        path = Path(log_file)
        path.parent.mkdir(parents=True, exist_ok=True)
        file_handler = logging.FileHandler(path)
        file_handler.setFormatter(logging.Formatter(fmt))
        logger.addHandler(file_handler)
    logger.setLevel(level)
    logger.propagate = False


class _ColorFormatter(logging.Formatter):
    COLORS = {"DEBUG": 36, "INFO": 32, "WARNING": 33, "ERROR": 31, "CRITICAL": 41}

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        code = self.COLORS.get(record.levelname)
        return (
            text.replace(record.levelname, f"\033[{code}m{record.levelname}\033[0m", 1)
            if code
            else text
        )
