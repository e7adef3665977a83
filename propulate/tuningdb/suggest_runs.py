"""``suggest`` for a campaign without tasks: the best configuration of its runs.

A campaign whose objective takes no task (``tasks`` absent) has no task space, no model and
therefore no tuning database; its advice is the best configuration its tuning runs found.
:func:`suggest_from_runs` reads it from the run directories under the campaign's results
folder (every ``summary.json``), with the same ``why`` and ``paired`` as a database answer
when a paired re-measurement of the campaign is there (``paired/*.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from propulate.methods import is_search
from propulate.remeasure.verdict import explain, verdict
from propulate.runs.summary import SUMMARY_FILE, RunSummary, read_summary


def tuning_runs(root: Path) -> list[tuple[Path, RunSummary]]:
    """Every tuning run (a search method with a best loss) under ``root``, by path."""
    out = []
    for path in sorted(root.rglob(SUMMARY_FILE)):
        summary = read_summary(path.parent)
        if summary is None or summary.best_params is None or summary.best_loss is None:
            continue
        if is_search(summary.method):
            out.append((path.parent, summary))
    return out


def suggest_from_runs(campaign: str | Path) -> dict[str, Any]:
    """The best configuration of a campaign's tuning runs, as ``suggest`` answers.

    Returns
    -------
    dict
        ``task`` (the task id, the campaign's name without tasks), ``params``, ``loss``,
        ``source`` (``runs``), ``why``, ``method``, ``run`` (the run directory),
        ``evaluations``; ``objectives`` with several objectives; ``paired`` when a paired
        re-measurement overruled or confirmed the best run's configuration.

    Raises
    ------
    FileNotFoundError
        When ``campaign`` holds neither a tuning database nor a tuning run.
    """
    root = Path(campaign)
    runs = tuning_runs(root) if root.is_dir() else []
    if not runs:
        raise FileNotFoundError(
            f"{root}: no tuning database and no tuning run (summary.json) below it; give the "
            "campaign's results folder (results/<name>)"
        )
    directory, best = min(runs, key=lambda item: float(item[1].best_loss or 0.0))
    assert best.best_params is not None
    answer: dict[str, Any] = {
        "task": best.task,
        "params": best.best_params,
        "loss": best.best_loss,
        "source": "runs",
        "why": f"least tuning loss over the campaign's {len(runs)} tuning runs "
        f"({best.method}, {directory.name})",
        "method": best.method,
        "run": str(directory),
        "evaluations": best.evaluations,
    }
    if best.pareto:
        same = [p for p in best.pareto if p["params"] == best.best_params]
        answer["objectives"] = same[0]["objectives"] if same else None
        answer["pareto_size"] = len(best.pareto)
    for path in sorted((root / "paired").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("task") not in (None, best.task):
            continue
        evidence = verdict(data, best.best_params)
        if evidence is None:
            continue
        answer["why"] = explain(evidence)
        answer["paired"] = {k: evidence[k] for k in ("rounds", "winner", "chosen", "speedup")}
        if evidence["overruled"]:
            answer.update(
                params=evidence["params"],
                loss=evidence["loss"],
                method=evidence["method"],
                run=evidence["run"],
                objectives=None,
            )
    return answer
