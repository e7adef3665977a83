"""The campaign workflow as package data: Snakefile, rules, schema, report captions, profiles.

In a clone of the repository this folder links to the top-level ``Snakefile``, ``workflow/``,
``config/`` and ``profiles/`` (and the example campaigns' files); a wheel or an sdist holds
copies of them at the same places. A campaign anywhere uses them as a Snakemake module::

    from propulate.pipeline import snakefile

    module propulate:
        snakefile: snakefile()
        config: config

    use rule * from propulate

(``propulate init DIR`` writes such a ``Snakefile``). The rules import :mod:`propulate` and run
``python -m propulate`` from the environment that runs Snakemake, whether the package is
installed from a wheel or in editable mode.
"""

from __future__ import annotations

from pathlib import Path

#: The folder of the packaged workflow (the repository's top level in an editable install).
ROOT = Path(__file__).resolve().parent

__all__ = ["ROOT", "profile", "snakefile"]


def snakefile() -> str:
    """The workflow's ``Snakefile``, as an absolute path (what a ``module`` directive takes)."""
    return str(ROOT / "Snakefile")


def profile(name: str) -> Path:
    """The folder of a shipped Snakemake profile (``slurm`` or ``default``).

    Raises
    ------
    FileNotFoundError
        When the package ships no profile of that name.
    """
    path = ROOT / "profiles" / name
    if not (path / "config.yaml").is_file():
        raise FileNotFoundError(f"propulate ships no Snakemake profile {name!r} ({path})")
    return path
