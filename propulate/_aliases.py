"""Old import paths of the package's modules, kept working after they moved.

Users' scripts import ``propulate.islands`` or ``propulate.utils.benchmark_functions`` and their
campaign configs name objectives as ``propulate.problems.demo:demo_loss``. Those modules now
live in rooms named by what they hold; :data:`ALIASES` maps each old dotted name to its new
one, and :class:`AliasFinder` (installed first on :data:`sys.meta_path` by ``import propulate``)
answers an import of an old name, or of anything below it, with the module of the new name:
the very same module object, imported on first use, so ``propulate.problems.demo.demo_loss
is propulate.problems.demo.demo_loss``. Nothing is imported before it is asked for.

Inside the repository every reference uses the new names; the table is for users only.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["ALIASES", "AliasFinder", "install", "new_name"]

#: Old dotted module name -> the module's name now. An old package name covers its submodules
#: too (``propulate.problems.demo`` -> ``propulate.problems.demo``).
ALIASES: dict[str, str] = {
    # Propulate 1.2's front ends, in the compatibility room
    "propulate.history": "propulate.compat.history",
    "propulate.islands": "propulate.compat.islands",
    "propulate.legacy_checkpoint": "propulate.compat.legacy_checkpoint",
    "propulate.migrator": "propulate.compat.migrator",
    "propulate.pollinator": "propulate.compat.pollinator",
    "propulate.propulator": "propulate.compat.propulator",
    "propulate.surrogate": "propulate.compat.surrogate",
    "propulate.utils": "propulate.compat.utils",
    # modules renamed to say what they hold
    "propulate.engine.progress": "propulate.engine.progress_thread",
    "propulate.basin": "propulate.transfer.optimum",
    "propulate.objective": "propulate.user_objective",
    "propulate.objective.command_details": "propulate.user_objective.command",
    "propulate.objectives": "propulate.problems",
    "propulate.joint_posterior": "propulate.transfer.joint_posterior",
    "propulate.paired": "propulate.remeasure.paired",
    "propulate.paired_verdict": "propulate.remeasure.verdict",
    "propulate.pareto": "propulate.runs.dominance",
    "propulate.propagators.pareto": "propulate.propagators.pareto_selection",
    "propulate.report.objectives": "propulate.report.pareto_section",
    "propulate.runs.objectives": "propulate.runs.declared_objectives",
    "propulate.tuningdb.pareto": "propulate.tuningdb.pareto_set",
    "propulate.cli.live": "propulate.cli.dashboard_state",
    "propulate.engine.seen": "propulate.engine.breeder",
}


def new_name(fullname: str) -> str | None:
    """The current name of the module an old dotted name meant, ``None`` if ``fullname`` is no
    old name (nor below one)."""
    parts = fullname.split(".")
    for i in range(len(parts), 0, -1):
        target = ALIASES.get(".".join(parts[:i]))
        if target is not None:
            return ".".join([target, *parts[i:]])
    return None


class _AliasLoader(importlib.abc.Loader):
    """Hands out the already imported module of the new name for the old one."""

    def __init__(self, target: str) -> None:
        self.target = target
        self._spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # The import system stamped the alias's spec on the module: it keeps its own.
        module.__spec__ = self._spec


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds old module names (:data:`ALIASES`) and loads them as their new modules."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("propulate."):
            return None  # every other import passes through at the cost of this test
        new = new_name(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def install() -> None:
    """Put one :class:`AliasFinder` first on :data:`sys.meta_path` (once), before the path
    finder would look for an old name's submodules in the new package's folder."""
    if not any(isinstance(finder, AliasFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder())
