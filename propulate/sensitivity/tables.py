"""Plain-text tables of sensitivity results (the command line and the report job's log)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from propulate.sensitivity.model import TaskSensitivity
    from propulate.sensitivity.records import TaskImportance


def columns(rows: Sequence[Sequence[str]], header: Sequence[str]) -> str:
    """Rows as left-aligned columns under a header."""
    widths = [max(len(str(r[k])) for r in [header, *rows]) for k in range(len(header))]
    lines = [
        "  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *rows]
    ]
    return "\n".join(line.rstrip() for line in lines)


def _pm(value: float, conf: float) -> str:
    return f"{value:6.3f} ± {conf:.3f}"


def sobol_table(results: Sequence[TaskSensitivity]) -> str:
    """Per task and parameter S1 and ST with their confidence half-widths (and S2 when
    estimated), parameters by decreasing ST; a new task is marked ``predicted``."""
    if not results:
        return "no tasks"
    first = results[0].indices
    level = round(100 * first.conf_level)
    head = (
        f"Sobol indices of the model's posterior mean (output: {results[0].output}; "
        f"N = {first.samples}, {first.evaluations} model evaluations per task; "
        f"± half-width of the {level} % bootstrap interval)"
    )
    rows = []
    for r in results:
        ind = r.indices
        kind = "trained" if r.trained else "predicted"
        for k, name in enumerate(ind.ranking()):
            i = ind.names.index(name)
            label = (r.id, kind) if k == 0 else ("", "")
            rows.append(
                [*label, name, _pm(ind.S1[i], ind.S1_conf[i]), _pm(ind.ST[i], ind.ST_conf[i])]
            )
        if ind.S2 is not None:
            d = len(ind.names)
            for i in range(d):
                for j in range(i + 1, d):
                    pair = f"{ind.names[i]} x {ind.names[j]}"
                    rows.append(["", "", pair, "S2 " + _pm(ind.S2[i, j], ind.S2_conf[i, j]), ""])
    return head + "\n" + columns(rows, ["task", "model", "parameter", "S1", "ST"])


def importance_table(results: Sequence[TaskImportance]) -> str:
    """Per task the parameters by decreasing importance, with the evaluations used."""
    if not results:
        return "no tasks"
    head = (
        f"Parameter importance from the records (Optuna's {results[0].evaluator} evaluator on "
        f"{results[0].target}; each task's importances sum to 1)"
    )
    rows = []
    for r in results:
        for k, name in enumerate(r.ranking()):
            label = (r.id, str(r.evaluations), ",".join(r.methods)) if k == 0 else ("", "", "")
            rows.append([*label, name, f"{r.importance[name]:.3f}"])
    return (
        head + "\n" + columns(rows, ["task", "evaluations", "methods", "parameter", "importance"])
    )
