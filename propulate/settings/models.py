"""The settings of the multitask model stages: the LCM fit, MLA and transfer (TLA1, TLA2).

Declared like every stage's (:func:`~propulate.settings.spec.setting`); :mod:`propulate.settings`
re-exports them with the others.
"""

from __future__ import annotations

from dataclasses import dataclass

from propulate.settings.spec import setting


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
