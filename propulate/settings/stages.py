"""The settings of every stage, each one described once (:func:`~propulate.settings.spec.setting`).

One dataclass per stage (evolve, a command objective, re-validation, sensitivity; the model
stages' are in :mod:`propulate.settings.models`). Each field declares its default, help and range; the command line, the campaign's job options, the config schema and the
config documentation are derived from these declarations (:mod:`propulate.settings.spec`).
"""

from __future__ import annotations

from dataclasses import dataclass

from propulate.settings.spec import setting, string_or_mapping

_PROPULATE_ONLY = " (method propulate only)"

#: The config schema of a plug-in spec: ``NAME[:KEY=VALUE,...]`` or ``{type: NAME, ...}`` (the
#: registered names are added when the schema is loaded, :func:`propulate.plugins.docs.add_to_schema`).
_SPEC = {
    "oneOf": [
        {"type": "string", "minLength": 1},
        {"type": "object", "required": ["type"], "properties": {"type": {"type": "string"}}},
    ]
}


@dataclass(frozen=True)
class EvolveSettings:
    """One optimization run (``python -m propulate evolve``, the ``evolve`` config section).

    The fields' declarations hold their help and ranges; :mod:`propulate.methods` says which
    method uses which setting.
    """

    method: str = setting(
        "propulate",
        "optimizer: a method of propulate.methods.METHODS (the island model, uniform random "
        "search, Optuna TPE)",
        config=False,
    )
    seed: int = setting(
        0, "random seed; every rank's stream derives from it", metavar="N", config=False
    )
    max_evaluations: int | None = setting(
        None,
        "evaluation budget of a run over all its ranks, resumed ones included (give at least "
        "one of max_evaluations, generations, time_limit)",
        low=1,
        metavar="N",
    )
    generations: int | None = setting(
        None, "generations per worker (another stop criterion)", low=1, metavar="N"
    )
    time_limit: float | None = setting(
        None,
        "wall-clock limit in seconds of each start (a resumed run has the whole limit again; "
        "max_evaluations counts earlier starts): no evaluation starts after it, running ones "
        "are interrupted; a cluster job's runtime derives from it: 60 minutes without it",
        low=0.0,
        low_open=True,
        metavar="SECONDS",
    )
    eval_timeout: float | None = setting(
        None,
        "seconds one evaluation may take; a longer one is recorded as failed (status "
        "timeout) and the run goes on",
        low=0.0,
        low_open=True,
        metavar="SECONDS",
    )
    islands: int = setting(
        1, "number of islands; must divide the workers of the job", low=1, metavar="N"
    )
    pop_size: int = setting(8, "breeding pool per island" + _PROPULATE_ONLY, low=2, metavar="N")
    migration_probability: float = setting(
        0.7,
        "probability per generation that a worker sends emigrants (islands > 1)",
        low=0.0,
        high=1.0,
        metavar="P",
    )
    ranks_per_worker: int = setting(
        1,
        "MPI ranks per evaluation; the loss gets (params, comm)",
        low=1,
        metavar="N",
    )
    crossover_prob: float = setting(
        0.7,
        "probability that a child is bred by uniform crossover" + _PROPULATE_ONLY,
        low=0.0,
        high=1.0,
        metavar="P",
    )
    mutation_prob: float = setting(
        0.4,
        "probability that a child gets a point mutation (one gene redrawn)" + _PROPULATE_ONLY,
        low=0.0,
        high=1.0,
        metavar="P",
    )
    random_init_prob: float = setting(
        0.1,
        "probability that a bred child is replaced by a random one" + _PROPULATE_ONLY,
        low=0.0,
        high=1.0,
        metavar="P",
    )
    pruned_random_init_prob: float = setting(
        0.3,
        "random_init_prob under a pruner, where a random child is cheap: most stop at the "
        "first rung (without a pruner random_init_prob applies)" + _PROPULATE_ONLY,
        low=0.0,
        high=1.0,
        metavar="P",
    )
    sigma_factor: float = setting(
        0.05,
        "std of the interval mutation as a fraction of each parameter's range" + _PROPULATE_ONLY,
        low=0.0,
        low_open=True,
        metavar="F",
    )
    failure_limit: int = setting(
        20,
        "the run stops with an error (exit status 1) when a worker's last N evaluations all "
        "failed; 0: never",
        low=0,
        metavar="N",
        passed="given",
    )
    pollination: bool = setting(
        True,
        "pollination (emigrants are copies) instead of real migration (emigrants leave home)",
        flag="--migration",
        negate=True,
        flag_help="real migration (emigrants leave home) instead of pollination (copies) "
        "(default: pollination)",
    )
    propagator: str = setting(
        "auto",
        "the island model's search method: a propagator and its options, "
        "NAME[:KEY=VALUE,...], e.g. ga:pop_size=12 (config: a mapping {type: ga, pop_size: 12}); "
        "auto chooses from the space, the budget, the workers, the objectives and a pruner "
        "(ga when a breeding option such as pop_size is set)" + _PROPULATE_ONLY,
        metavar="SPEC",
        passed="given",
        schema=_SPEC,
    )
    pruner: str | None = setting(
        None,
        "early stopping of evaluations from the values they report per step: "
        "TYPE[:KEY=VALUE,...], e.g. asha:min_steps=1,eta=3 (config: a mapping {type: asha, ...})",
        metavar="SPEC",
        schema=_SPEC,
    )
    objectives: str | None = setting(
        None,
        "several objectives, or one to maximise: NAME:min|max,... (e.g. runtime:min,"
        "accuracy:max; config: a mapping {runtime: min, accuracy: max}); the objective then "
        "returns {name: value}; default: it returns one loss to minimise",
        metavar="NAME:DIR,...",
        passed="given",
        schema=string_or_mapping({"enum": ["min", "max"]}),
    )
    weights: str | None = setting(
        None,
        "with --objectives, one loss from them: the weighted sum of the objectives (natural "
        "units, each signed for minimisation), NAME=W,... (e.g. runtime=1,energy=0.01; config: "
        "a mapping {runtime: 1, energy: 0.01}); the single-objective propagators, MLA, TLA and "
        "the baselines minimise it; default: the loss is the first objective",
        metavar="NAME=W,...",
        passed="given",
        schema=string_or_mapping({"type": "number", "minimum": 0}),
    )
    portfolio: str = setting(
        "cma,ga",
        "the portfolio propagator's plan: comma-separated propagators, island i runs the i-th "
        "(cyclically; with one island worker i does)" + _PROPULATE_ONLY,
        metavar="NAMES",
        passed="given",
    )
    progress_interval: float = setting(
        10.0,
        "seconds between progress lines on rank 0",
        low=0.0,
        low_open=True,
        metavar="SECONDS",
        config=False,
    )


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
    the ``revalidate`` config section)."""

    repeats: int = setting(
        3,
        "measurements of each stored configuration when the tuning database is re-validated "
        "on a changed machine",
        low=1,
        metavar="N",
    )
    threshold: float = setting(
        0.2,
        "drift above which a task is re-tuned with TLA2: the size of the relative change of a "
        "stored configuration's loss, (new - stored) / stored, either way (0.2 = 20 %)",
        low=0.0,
        low_open=True,
        metavar="F",
    )


@dataclass(frozen=True)
class SensitivitySettings:
    """Which parameters matter (``python -m propulate sensitivity``, the report's section).

    ``samples`` is Saltelli's base sample ``N``: the model's mean is evaluated at ``N (d + 2)``
    configurations (``N (2 d + 2)`` with ``second_order``), ``d`` the number of parameters. On
    the Ishigami function's fitted GP the 95 % half-width of S1 is about 0.02 with N = 8192
    (``benchmarks/sensitivity.py``) and shrinks as ``1 / sqrt(N)``: about 0.06 with the default.
    """

    samples: int = setting(
        1024,
        "Saltelli's base sample N (a power of two): the model is evaluated at N (d + 2) "
        "configurations per task, N (2 d + 2) with second order",
        low=16,
        metavar="N",
    )
    second_order: bool = setting(False, "also estimate the second-order indices S2")
    resamples: int = setting(
        100, "bootstrap resamples of the confidence intervals", low=10, metavar="N"
    )
    conf_level: float = setting(
        0.95, "confidence level of the intervals", low=0.5, high=0.999, metavar="P"
    )
    evaluator: str = setting(
        "fanova",
        "importance from records (--runs): Optuna's fANOVA (a random forest's functional "
        "ANOVA), PED-ANOVA (which parameters set the best quantile apart) or mean decrease in "
        "impurity",
        choices=("fanova", "ped-anova", "mdi"),
    )
    seed: int = setting(0, "seed of the Sobol sample, the bootstrap and the forest", low=0)
