"""The settings of every stage, each default in one place.

One dataclass per stage (evolve, LCM, MLA, transfer). The command line (``--help`` shows these
defaults), the campaign config's schema and the library read them from here; a test checks that
the schema's defaults are the same values.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any


@dataclass(frozen=True)
class EvolveSettings:
    """One optimization run (``python -m propulate evolve``, the ``evolve`` config section).

    Attributes
    ----------
    method : str
        ``"propulate"`` (the island model), ``"random"`` or ``"optuna"``.
    seed : int
        Random seed; every rank's stream derives from it.
    max_evaluations : int or None
        Evaluations over all ranks, resumed ones included.
    generations : int or None
        Generations per worker.
    time_limit : float or None
        Wall-clock seconds after which no evaluation starts (running ones are interrupted).
    eval_timeout : float or None
        Seconds one evaluation may take; a longer one is recorded as failed and the run goes on.
    failure_limit : int
        The run stops with an error when a worker's last ``failure_limit`` evaluations all
        failed (0: never).
    islands : int
        Number of islands.
    pop_size : int
        Breeding-pool size per island.
    migration_probability : float
        Probability per generation that a worker sends emigrants (with more than one island).
    pollination : bool
        Send copies (pollination) instead of moving individuals (migration).
    crossover_prob, mutation_prob, random_init_prob, sigma_factor : float
        The default propagator's breeding settings (see ``get_default_propagator``).
    ranks_per_worker : int
        MPI ranks per evaluation.
    progress_interval : float
        Seconds between progress lines.
    """

    method: str = "propulate"
    seed: int = 0
    max_evaluations: int | None = None
    generations: int | None = None
    time_limit: float | None = None
    eval_timeout: float | None = None
    failure_limit: int = 20
    islands: int = 1
    pop_size: int = 8
    migration_probability: float = 0.7
    pollination: bool = True
    crossover_prob: float = 0.7
    mutation_prob: float = 0.4
    random_init_prob: float = 0.1
    sigma_factor: float = 0.05
    ranks_per_worker: int = 1
    progress_interval: float = 10.0


#: The evolve settings every method uses.
_COMMON = frozenset(
    {
        "method",
        "seed",
        "max_evaluations",
        "generations",
        "time_limit",
        "failure_limit",
        "progress_interval",
    }
)

#: The evolve settings each method uses (``EvolveSettings.method``); setting another one is an
#: error on the command line, and a campaign passes a run only the ones its method uses.
EVOLVE_USED_BY: dict[str, frozenset[str]] = {
    "propulate": frozenset(f.name for f in fields(EvolveSettings)),
    "random": _COMMON | {"eval_timeout", "ranks_per_worker"},
    "optuna": _COMMON,
}


@dataclass(frozen=True)
class LCMSettings:
    """The multitask Gaussian-process model (``fit-lcm``, the ``lcm`` config section).

    Attributes
    ----------
    latent : int
        Number Q of latent functions.
    restarts : int
        L-BFGS starts of the hyperparameter fit.
    max_points : int
        Cap of the whole training set; each task keeps its share (the best points plus a spread).
    log_output : bool
        Model log(loss) instead of the loss (runtimes).
    seed : int
        Seed of the fit's restarts and of the subsampling.
    """

    latent: int = 2
    restarts: int = 2
    max_points: int = 50
    log_output: bool = False
    seed: int = 0


@dataclass(frozen=True)
class MLASettings:
    """Model-guided refinement (``mla``, the ``mla`` config section).

    Attributes
    ----------
    budget : int
        Evaluations per task, initial design included (a campaign runs the MLA stage when its
        config has an ``mla`` section).
    initial : int
        Initial Latin-hypercube samples per task. Half the default budget: on the GPTune demo
        function's two-task case (t = 0 and 0.5, budget 20, seeds 0-4) 10 + 10 never left a task
        in a local minimum, 8 + 12 neither but beat single-task GP-EI less often, and 5 + 15 left
        one task in five in one (``benchmarks/mla_demo.py --fixed 0 0.5 --initial N``).
    seed : int
        Seed of the designs and the acquisition search.
    share : int
        Each task tries the best configurations of this many nearest tasks (in the task space)
        before the model's proposal, once per basin (0: off, the default). With local rounds
        on, these evaluations only take rounds from the joint model: on the GPTune demo
        function (dev seeds 5-14, budget 10 + 10, 4 / 8 training tasks) MLA beat single-task
        GP-EI on 48 / 59 % of pairs with ``share`` 4, 57 / 59 % with 1 and 62 / 62 % with 0, and
        was left in a local minimum on 28 / 22, 20 / 30 and 20 / 21 %.
    radius : float
        Unit-cube distance within which a task counts a neighbour's best as already tried.
    local_every : int
        Every this many guided evaluations of a task, one is a local round (0: none): the
        task's own one-task GP proposes, searching only within ``local_radius`` of the other
        tasks' best configurations.
    local_radius : float
        Unit-cube radius of a local round's search around each other task's best.
    """

    budget: int = 20
    initial: int = 10
    seed: int = 0
    share: int = 0
    radius: float = 0.02
    local_every: int = 2
    local_radius: float = 0.05


@dataclass(frozen=True)
class TransferSettings:
    """Transfer to new tasks (``transfer``, the ``transfer`` config section).

    Attributes
    ----------
    tla2_budget : int
        Evaluations TLA2 spends on a new task.
    tla2_share : int
        Of those, how many go to the best configurations of the nearest training tasks (after
        the TLA1 prediction, before the model's proposals).
    tla1_basin : float
        TLA1 moves the nearest training task's optimum along the line to the optimum of the
        nearest other task within this unit-cube distance of it (one basin); 0: per-parameter
        GP regression of the optima over the task space.
    tla2_basin : float
        The basin size of the prediction TLA2 evaluates first (as ``tla1_basin``); 0, the
        default, starts from the per-parameter regression: TLA2 tries the nearest tasks' optima
        next anyway (``tla2_share``), which is where the basin line lands, so the regression's
        trend across basins adds a point they do not cover. On the GPTune demo function (dev
        seeds 0-4, 4/8/10 training tasks) starting from the basin line won fewer pairs against
        random (5): 80/88/76 % against 80/92/80 %.
    measure_tla1 : bool
        Evaluate TLA1's prediction once.
    seed : int
        Seed of TLA2's designs and acquisition search.
    """

    tla2_budget: int = 5
    tla2_share: int = 2
    tla1_basin: float = 0.15
    tla2_basin: float = 0.0
    measure_tla1: bool = True
    seed: int = 0


@dataclass(frozen=True)
class CommandSettings:
    """A program run as the objective (the ``objective:`` mapping, ``--objective-command``).

    Attributes
    ----------
    timeout : float or None
        Seconds one run of the program may take; then its whole process group is killed and
        the evaluation fails (``None``: no limit).
    repeats : int
        Runs per evaluation; the loss is the median of their results.
    confirm_repeats : int or None
        Extra runs when an evaluation would become an island's new best (``None``: ``repeats``,
        at least 2).
    workdir : str
        Directory the program runs in.
    kill_grace : float
        Seconds between SIGTERM and SIGKILL when a run's process group is killed.
    """

    timeout: float | None = None
    repeats: int = 1
    confirm_repeats: int | None = None
    workdir: str = "."
    kill_grace: float = 2.0


@dataclass(frozen=True)
class RevalidateSettings:
    """Re-validation of the tuning database on a changed machine (``tuningdb revalidate``,
    the ``revalidate`` config section).

    Attributes
    ----------
    repeats : int
        Measurements of each stored configuration.
    threshold : float
        Relative change of the loss, ``|new - stored| / |stored|``, above which a task counts
        as drifted and is re-tuned with TLA2 (0.2 = 20 %).
    """

    repeats: int = 3
    threshold: float = 0.2


def defaults(settings: type) -> dict[str, Any]:
    """The defaults of a settings class as a plain dict (for schemas, docs and tests)."""
    return {f.name: f.default for f in fields(settings)}


def from_mapping(settings: type, values: dict[str, Any] | None) -> Any:
    """Build ``settings`` from a config section; unknown keys raise ``ValueError``."""
    values = dict(values or {})
    known = {f.name for f in fields(settings)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown {settings.__name__} key(s): {', '.join(unknown)}")
    return settings(**values)


__all__ = [
    "CommandSettings",
    "EVOLVE_USED_BY",
    "EvolveSettings",
    "LCMSettings",
    "MLASettings",
    "RevalidateSettings",
    "TransferSettings",
    "asdict",
    "defaults",
    "from_mapping",
]
