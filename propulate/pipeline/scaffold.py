"""A campaign directory of one's own: what ``propulate init DIR`` writes there.

Every campaign directory gets a ``Snakefile`` that uses the installed workflow as a Snakemake
module, ``config/config.yaml``, the key reference ``config/README.md``, copies of the Slurm and
default profiles to adapt (``profiles/``) and a ``.gitignore``. The starter (no example) adds a
space file and an objective to replace; an example adds the files its config names, at the same
paths relative to the directory as in the package (a C driver, a program, benchmark tables).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import yaml

from propulate.pipeline import ROOT, templates


@dataclass(frozen=True)
class Example:
    """An example campaign shipped with the package.

    Attributes
    ----------
    config : str
        Its config file, relative to the packaged workflow (:data:`propulate.pipeline.ROOT`).
    files : tuple of str
        The files its config uses, relative to the same folder; copied to the same relative
        paths in the campaign directory.
    about : str
        One line for ``--help``.
    """

    config: str
    files: tuple[str, ...]
    about: str


#: The examples of ``propulate init --example``.
EXAMPLES = {
    "demo": Example(
        "config/demo.yaml",
        ("benchmarks/results/mla_demo_sets_4_8.json", "benchmarks/results/mla_demo_set_10.json"),
        "the GPTune demo function: MLA, TLA1/TLA2, a minute on 2 cores",
    ),
    "command": Example(
        "examples/command/campaign.yaml",
        ("examples/command/Makefile", "examples/command/matmul.c", "examples/command/README.md"),
        "a C program (blocked matrix multiply) tuned with no Python written; needs make and cc",
    ),
    "command_two_objectives": Example(
        "examples/command/two_objectives.yaml",
        ("examples/command/Makefile", "examples/command/matmul.c", "examples/command/README.md"),
        "the same program, threaded, tuned for wall time and CPU-seconds at once (a Pareto "
        "set per task; weights for transfer); needs make and cc",
    ),
    "pdgeqrf": Example(
        "config/pdgeqrf.yaml",
        (
            "apps/pdgeqrf/Makefile",
            "apps/pdgeqrf/README.md",
            "apps/pdgeqrf/install-deps.sh",
            "apps/pdgeqrf/pdgeqrf_driver.c",
        ),
        "ScaLAPACK's PDGEQRF across matrix shapes; its setup installs MPICH and ScaLAPACK",
    ),
    "digits_optimizers": Example(
        "config/digits_optimizers.yaml",
        ("examples/digits_optimizers/space.yaml",),
        "a conditional space (optimizers and schedules with their own parameters) on a small "
        "network trained with early stopping; needs the extra 'examples' (scikit-learn)",
    ),
    "digits_paper": Example(
        "config/digits_paper.yaml",
        ("examples/digits_optimizers/paper_space.yaml",),
        "the first Propulate paper's search space (its ResNet table: 27 parameters, 15 "
        "conditional) on the same network, TPE under ASHA; needs the extra 'examples'",
    ),
}

#: Files of the packaged workflow every campaign directory gets a copy of.
COMMON = (
    "config/README.md",
    "profiles/slurm/config.yaml",
    "profiles/slurm/README.md",
    "profiles/default/config.yaml",
)


def campaign_name(directory: Path) -> str:
    """A campaign name (``[A-Za-z][A-Za-z0-9_]*``) from a directory's name."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", directory.resolve().name).strip("_")
    return name if re.match(r"[A-Za-z]", name) else f"campaign_{name}".rstrip("_")


def plan(directory: Path, example: str | None, name: str | None = None) -> dict[str, str | Path]:
    """The files of a new campaign directory: relative path to text, or to a file to copy.

    Parameters
    ----------
    directory : Path
        The campaign directory (its name names the starter campaign).
    example : str or None
        A key of :data:`EXAMPLES`, or ``None`` for the starter campaign.
    name : str, optional
        The starter campaign's name (default: from the directory's name); an example keeps the
        name of its config.
    """
    from propulate import __version__

    files: dict[str, str | Path] = {
        "Snakefile": templates.SNAKEFILE.format(version=__version__),
        ".gitignore": templates.GITIGNORE,
    }
    files.update({rel: ROOT / rel for rel in COMMON})
    if example is None:
        name = name or campaign_name(directory)
        fill = {"name": name, "version": __version__}
        files["config/config.yaml"] = templates.CONFIG.format(**fill)
        files["space.yaml"] = templates.SPACE.format(**fill)
        files["objective.py"] = templates.OBJECTIVE
        return files
    spec = EXAMPLES[example]
    text = (ROOT / spec.config).read_text()
    config = yaml.safe_load(text)
    header = templates.EXAMPLE_HEADER.format(
        name=config["name"],
        example=example,
        version=__version__,
        source=spec.config,
        setup=templates.SETUP_LINE if has_setup(example) else "",
    )
    files["config/config.yaml"] = header + text
    files.update({rel: ROOT / rel for rel in spec.files})
    return files


def has_setup(example: str) -> bool:
    """Whether an example's config has ``setup`` commands (build what it needs first)."""
    return bool(yaml.safe_load((ROOT / EXAMPLES[example].config).read_text()).get("setup"))


def existing(directory: Path, files: dict[str, str | Path]) -> list[str]:
    """The planned files that are already in ``directory``."""
    return [rel for rel in files if (directory / rel).exists()]


def write(directory: Path, files: dict[str, str | Path]) -> list[Path]:
    """Write the planned files (copies keep their mode, e.g. a script's execute bit)."""
    written = []
    for rel, content in files.items():
        path = directory / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Path):
            shutil.copyfile(content, path)
            shutil.copymode(content, path)
        else:
            path.write_text(content)
        written.append(path)
    return written
