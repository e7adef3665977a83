"""What ``make run`` prints when a campaign is done: the commands to try next, for this
campaign (its results folder, a task of its task space)."""

from __future__ import annotations

from typing import Any

from propulate.campaign.config import Campaign


def _middle(spec: Any) -> Any:
    """A value in the middle of one task-space dimension (as the config gives it)."""
    if isinstance(spec, dict):
        if "choices" in spec:
            return spec["choices"][0]
        low, high = spec.get("low"), spec.get("high")
    elif isinstance(spec, list | tuple) and len(spec) == 2:
        low, high = spec
    else:
        return None
    if isinstance(low, int) and isinstance(high, int):
        return (low + high) // 2
    if isinstance(low, int | float) and isinstance(high, int | float):
        return float(f"{(low + high) / 2:.3g}")
    return None


def next_steps(campaign: Campaign, config_path: str) -> str:
    """The lines ``make run`` ends with."""
    root = campaign.root
    rows = [
        ("source .venv/bin/activate", "the project's environment: propulate, snakemake, mpiexec"),
        (campaign.path("report.html"), "the report: open it in any web browser"),
        (f"propulate status {root}", "each run: evaluations, best loss, running/stopped"),
    ]
    if not campaign.taskless and campaign.task_space:
        values = {name: _middle(spec) for name, spec in campaign.task_space.items()}
        if all(v is not None for v in values.values()):
            task = ",".join(f"{k}={v}" for k, v in values.items())
            rows.append(
                (
                    f"propulate suggest --campaign {root} --task {task}",
                    "the configuration to run a task with (tuned, or predicted for a new one)",
                )
            )
    elif campaign.taskless and not campaign.suite:
        rows.append((f"propulate suggest --campaign {root}", "the best configuration found"))
    rows += [
        (f"snakemake --cores 2 --configfile {config_path} -n", "what a re-run would do (dry run)"),
        ("make run CONFIG=config/demo.yaml", "another campaign (config/README.md)"),
    ]
    width = max(len(command) for command, _ in rows)
    lines = ["next:"] + [f"  {command:<{width}}  # {why}" for command, why in rows]
    return "\n".join(lines)
