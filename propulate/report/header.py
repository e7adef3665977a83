"""The report's first lines: what was tuned. The objective, the search space (each parameter's
type, range, scale and condition), the budget, the methods and the machine, from the runs'
``run.json`` and summaries (:mod:`propulate.report.runspec`), as a definition list: no table
comes before the paired rounds' flag (:mod:`propulate.report.paired_flag`)."""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from propulate.report.collect import Campaign, Run
from propulate.report.runspec import parameter_specs, run_metadata
from propulate.runs.metadata import describe_dimension


def _count(n: int, noun: str) -> str:
    """``n`` and the noun, plural unless ``n`` is 1 (``"1 run"``, ``"3 searches"``)."""
    plural = noun + ("es" if noun.endswith(("s", "ch")) else "s")
    return f"{n} {noun if n == 1 else plural}"


def _join(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "not recorded"


def describe_parameter(name: str, spec: Mapping[str, Any]) -> str:
    """One parameter in words, e.g. ``lr: float in [1e-05, 0.1] (log)``, with its condition."""
    kind = spec.get("type", "float")
    text = f"{name}: {kind} {describe_dimension(dict(spec)).replace(' (integer)', '')}"
    when = spec.get("when")
    if isinstance(when, Mapping) and when:
        text += ", active when " + " and ".join(f"{k} {v}" for k, v in when.items())
    return text


def _budget(runs: Sequence[Run]) -> str:
    """The budget per run (as each was started) and how many runs over how many tasks."""
    limits: Counter[str] = Counter()
    for run in runs:
        meta = run_metadata(run)
        if meta is None:
            continue
        parts = []
        if meta.max_evaluations is not None:
            parts.append(f"{meta.max_evaluations:,} evaluations")
        if meta.generations is not None:
            parts.append(f"{meta.generations:,} generations per worker")
        if meta.time_limit is not None:
            parts.append(f"{meta.time_limit:g} s")
        limits[" or ".join(parts) or "no limit"] += 1
    tasks = len({run.task for run in runs})
    done = sum(run.summary.evaluations for run in runs)
    per_run = "; ".join(f"{_count(n, 'run')} of at most {limit}" for limit, n in limits.items())
    head = f"{_count(len(runs), 'search')} over {_count(tasks, 'task')}"
    return f"{head}: {per_run or 'limits not recorded'} ({done:,} evaluations done)"


def _machines(runs: Sequence[Run]) -> list[str]:
    """The machines the runs measured on, each once, as CPU, cores, BLAS, MPI and host."""
    seen: list[str] = []
    for run in runs:
        machine = run.summary.machine or {}
        fields = [
            str(machine["cpu_model"]) if machine.get("cpu_model") else "",
            f"{machine['cores']} cores" if machine.get("cores") else "",
            f"BLAS {machine['blas']}" if machine.get("blas") else "",
            str(machine["mpi"]) if machine.get("mpi") else "",
            f"host {machine['hostname']}" if machine.get("hostname") else "",
        ]
        text = ", ".join(f for f in fields if f)
        if text and text not in seen:
            seen.append(text)
    return seen


def _propagators(runs: Sequence[Run]) -> list[str]:
    """The island model's propagators of the runs: ``auto``'s choice and reason, or the spec,
    each with its count of runs; for ``auto``, how many of the runs' records each of its members
    bred (their summaries' ``bred``: a probe, a race's switch or a polish shows there)."""
    found: Counter[str] = Counter()
    bred: dict[str, Counter[str]] = {}
    for run in runs:
        meta = run_metadata(run)
        prop = (meta.propagator if meta is not None else None) or {}
        text = prop.get("reason") or prop.get("spec")
        if not text:
            continue
        text = str(text)
        found[text] += 1
        if prop.get("first"):
            bred.setdefault(text, Counter()).update(run.summary.bred or {})
    out = []
    for text, n in found.items():
        members = bred.get(text)
        who = "; bred: " + ", ".join(f"{m} {c:,}" for m, c in members.items()) if members else ""
        out.append(f"{text} ({_count(n, 'run')}{who})")
    return out


def header_html(campaign: Campaign) -> str:
    """The first lines of the report: objective, space, budget, methods and machine of the
    campaign's searches (all its runs when it has none)."""
    runs = campaign.searches or campaign.runs
    metas = [m for m in (run_metadata(r) for r in runs) if m is not None]
    objectives = list(dict.fromkeys(m.objective for m in metas))
    declared = list(dict.fromkeys(m.objectives for m in metas if m.objectives))
    objective = _join(objectives) + (f" (objectives {_join(declared)})" if declared else "")
    space = [describe_parameter(n, s) for n, s in parameter_specs(runs).items()]
    methods = Counter(run.method for run in runs)
    rows = [
        ("Objective", objective),
        ("Space", "; ".join(space) if space else "not recorded"),
        ("Budget", _budget(runs)),
        ("Methods", _join([f"{m} ({_count(n, 'run')})" for m, n in methods.items()])),
        ("Machine", _join(_machines(runs))),
    ]
    chosen = _propagators(runs)
    if chosen:  # runs from before run.json named the propagator have none
        rows.insert(4, ("Propagator", "; ".join(chosen)))
    items = "".join(f"<dt>{k}</dt><dd>{html.escape(v)}</dd>" for k, v in rows)
    return f'<dl class="tuned" id="what-was-tuned">{items}</dl>'
