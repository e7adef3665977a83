"""The settings of every stage, each one described once (:func:`~propulate.settings.spec.setting`).

One dataclass per stage (evolve, LCM, MLA, transfer, re-validation). Each field declares its
default, help and range; the command line, the campaign's job options, the config schema and the
config documentation are derived from these declarations (:mod:`propulate.settings.spec`).
"""

from __future__ import annotations

from dataclasses import dataclass

from propulate.settings.spec import setting, string_or_mapping

_PROPULATE_ONLY = " (method propulate only)"


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
        "ga",
        "the island model's search method per island: a propagator of "
        "propulate.propagators.registry.PROPAGATORS (ga, cma, pso, nm, tpe, bo, portfolio, random)"
        + _PROPULATE_ONLY,
        metavar="NAME",
        passed="given",
    )
    pruner: str | None = setting(
        None,
        "early stopping of evaluations from the values they report per step: "
        "TYPE[:KEY=VALUE,...], e.g. asha:min_steps=1,eta=3 (types and options in "
        "propulate.pruners.registry.PRUNERS; config: a mapping {type: asha, ...})",
        metavar="SPEC",
        schema={
            "oneOf": [
                {"type": "string", "minLength": 1},
                {
                    "type": "object",
                    "required": ["type"],
                    "properties": {
                        "type": {"enum": ["asha", "median", "patience", "static", "dynamic"]}
                    },
                    "additionalProperties": {"type": "number"},
                },
            ]
        },
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
class LCMSettings:
    """The multitask Gaussian-process model (``fit-lcm``, the ``lcm`` config section)."""

    latent: int = setting(2, "number Q of latent functions of the LCM", low=1, metavar="Q")
    restarts: int = setting(2, "L-BFGS starts of the hyperparameter fit", low=1, metavar="N")
    max_points: int | None = setting(
        50,
        "cap of the LCM's training set (each task's history subsampled to its share: the best "
        "points plus a spread)",
        low=2,
        metavar="N",
    )
    log_output: bool = setting(
        False, "model log(loss) instead of the loss (runtimes); also used by MLA"
    )
    seed: int = setting(0, "seed of the fit's restarts and of the subsampling", low=0)


@dataclass(frozen=True)
class MLASettings:
    """Model-guided refinement (``mla``, the ``mla`` config section).

    ``initial`` is half the default budget: on the GPTune demo function's two-task case (t = 0
    and 0.5, budget 20, seeds 0-4) 10 + 10 never left a task in a local minimum, 8 + 12 neither
    but beat single-task GP-EI less often, and 5 + 15 left one task in five in one
    (``benchmarks/mla_demo.py --fixed 0 0.5 --initial N``). ``share`` is off: with local rounds
    on, these evaluations only take rounds from the joint model (GPTune demo function, dev seeds
    5-14, budget 10 + 10, 4 / 8 training tasks: MLA beat single-task GP-EI on 48 / 59 % of pairs
    with share 4, 57 / 59 % with 1 and 62 / 62 % with 0, and was left in a local minimum on
    28 / 22, 20 / 30 and 20 / 21 %). ``model``: measured in docs/mla-paper.md (the joint GP).
    """

    budget: int = setting(
        20, "evaluations per training task of MLA, initial design included", low=1, metavar="N"
    )
    initial: int = setting(
        10, "initial Latin-hypercube samples per task of MLA", low=1, metavar="N"
    )
    share: int = setting(
        0,
        "each task first tries the best configurations of this many nearest tasks (in the "
        "task space), once per basin; 0: off",
        low=0,
        metavar="N",
    )
    radius: float = setting(
        0.02,
        "unit-cube distance within which a task counts a neighbour's best as already tried "
        "(with share)",
        low=0.0,
        low_open=True,
        metavar="R",
        passed="given",
    )
    local_every: int = setting(
        2,
        "every this many guided evaluations of a task, one is a local round: a one-task GP of "
        "the task's own data proposes, searched only within local_radius of the other tasks' "
        "best configurations; 0: never",
        low=0,
        metavar="N",
    )
    local_radius: float = setting(
        0.05,
        "radius (unit cube) of a local round's search around each other task's best",
        low=0.0,
        low_open=True,
        metavar="R",
    )
    model: str = setting(
        "auto",
        "MLA's model: joint (one GP over task values and parameters; needs the task space), "
        "lcm (the lcm section's LCM) or auto (joint given a task space and several tasks)",
        choices=("auto", "joint", "lcm"),
    )
    seed: int = setting(0, "seed of MLA's designs, proposals and fits", low=0)


@dataclass(frozen=True)
class TransferSettings:
    """Transfer to new tasks (``transfer``, the ``transfer`` config section).

    ``tla2_basin`` is 0: TLA2 tries the nearest tasks' optima next anyway (``tla2_share``),
    which is where the basin line lands, so the regression's trend across basins adds a point
    they do not cover. On the GPTune demo function (dev seeds 0-4, 4/8/10 training tasks)
    starting from the basin line won fewer pairs against random (5): 80/88/76 % against
    80/92/80 %.
    """

    tla2_budget: int = setting(
        5, "evaluations TLA2 spends on a new task", low=1, flag="--budget", metavar="N"
    )
    tla2_share: int = setting(
        2,
        "of those, how many go to the best configurations of the nearest training tasks "
        "(after the TLA1 prediction, before the model's proposals)",
        low=0,
        flag="--share",
        metavar="N",
    )
    tla1_basin: float = setting(
        0.15,
        "TLA1 moves the nearest training task's optimum along the line to the nearest other "
        "training optimum within this unit-cube distance of it (one basin); 0: per-parameter "
        "GP regression of the optima over the task space",
        low=0.0,
        flag="--basin",
        metavar="D",
    )
    tla2_basin: float = setting(
        0.0,
        "the basin size of the TLA1 prediction TLA2 evaluates first (as tla1_basin); 0 starts "
        "from the regression",
        low=0.0,
        flag="--basin",
        metavar="D",
    )
    model: str = setting(
        "auto",
        "the model TLA1, TLA2 and suggest transfer with: joint (one GP over task values and "
        "parameters, fitted on the model file's training points), lcm (the LCM itself) or auto "
        "(the LCM, which transferred better on held-out demo seeds; joint for a joint model file)",
        choices=("auto", "joint", "lcm"),
        flag="--transfer-model",
    )
    measure_tla1: bool = setting(
        True, "evaluate the TLA1 prediction once, so the report compares it with TLA2", cli=False
    )
    seed: int = setting(
        0, "seed of TLA1's fits and of TLA2's designs and acquisition search", low=0, metavar="N"
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
