"""A campaign config, checked and resolved: task ids, spaces, suite functions, settings, paths.

:meth:`Campaign.from_config` takes the config mapping (``config/*.yaml``, documented in
``config/README.md``) and raises :class:`CampaignError`, whose message names the config key, on
anything the workflow could not run: an objective that does not import, an empty or inverted
space, a task outside the task space, an unknown benchmark function, a campaign without a
stopping criterion. The Snakemake workflow only validates the schema and reads the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from propulate.campaign.baselines import BaselineError, Baselines
from propulate.campaign.checks import (
    CampaignError,
    benchmark_files,
    check_command,
    check_cores,
    check_importable,
    check_objective_stages,
    check_objectives,
    check_plugins,
    check_propagator,
    check_pruner,
    check_suite,
    check_tasks,
    read_file_tasks,
    settings_of,
    space_of,
)
from propulate.campaign.files import campaign_spec, suite_objective, suite_spec
from propulate.campaign.paths import CampaignPaths
from propulate.campaign.spacefile import read_space_file
from propulate.settings import (
    EvolveSettings,
    LCMSettings,
    MLASettings,
    RevalidateSettings,
    TransferSettings,
)


@dataclass(frozen=True)
class Campaign(CampaignPaths):
    """One campaign: what to tune, on which tasks, with which settings, written where.

    Attributes
    ----------
    name : str
        Campaign name: report title, run id of a campaign without tasks, and its results folder
        ``results/<name>/``.
    objective : str or None
        The loss ``"module:function"`` (``None`` for a suite: each function is its own loss).
    constraint : str or None
        Feasibility test ``"module:function"``.
    parameters : dict or None
        The parameter space as given (``None`` for a suite).
    task_space : dict or None
        The task space as given (``None`` for an objective without tasks).
    suite : tuple of str
        Benchmark functions (names of ``propulate.problems.benchmark.FUNCTIONS``).
    lhs_ids : tuple of str
        Ids of the training tasks drawn by Latin hypercube.
    lhs_seed : int
        Seed of that design.
    lhs_prefix : str
        Id prefix of the sampled tasks.
    listed_training, new_tasks : dict
        Task id to task values (sorted by name) of listed training tasks and of new tasks.
    methods : tuple of str
        Optimizers run per training task.
    seeds : tuple of int
        One evolve run per seed (and method and task).
    evolve, lcm, transfer : settings
        Stage settings; keys missing in the config take the dataclass defaults.
    mla : MLASettings or None
        The MLA stage's settings; ``None`` when the config has no ``mla`` section (stage off).
    evolve_given : frozenset of str
        The ``evolve`` keys the config gives explicitly.
    mla_given : frozenset of str
        The ``mla`` keys the config gives explicitly.
    new_tasks_file : str or None
        The file of new tasks an application appends to (CSV or YAML); a scheduled run
        transfers to its tasks with TLA2.
    file_tasks : dict
        Task id to task values of the tasks that file lists (read when the config is).
    revalidate : RevalidateSettings
        Re-validation of the tuning database on a changed machine.
    report_benchmarks : tuple of str
        Benchmark files (JSON tables) the report shows (config ``report.benchmarks``).
    evaluation_cores : int
        Cores one evaluation occupies (an MPI program's largest process count): the threads of
        the jobs that measure (MLA, transfer, baselines), so that no two measurements share a
        core.
    """

    name: str
    objective: str | dict[str, Any] | None
    constraint: str | None
    parameters: dict[str, Any] | None
    task_space: dict[str, Any] | None
    suite: tuple[str, ...]
    lhs_ids: tuple[str, ...]
    lhs_seed: int
    lhs_prefix: str
    listed_training: dict[str, dict[str, Any]]
    new_tasks: dict[str, dict[str, Any]]
    methods: tuple[str, ...]
    seeds: tuple[int, ...]
    evolve: EvolveSettings
    lcm: LCMSettings
    mla: MLASettings | None
    transfer: TransferSettings
    evolve_given: frozenset[str] = field(default_factory=frozenset)
    mla_given: frozenset[str] = field(default_factory=frozenset)
    evolve_ranks: int | None = None
    baselines: Baselines = field(default_factory=Baselines)
    new_tasks_file: str | None = None
    file_tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    forbidden: tuple[str, ...] = ()
    revalidate: RevalidateSettings = field(default_factory=RevalidateSettings)
    evaluation_cores: int = 1
    report_benchmarks: tuple[str, ...] = ()

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Campaign:
        """Check a config mapping and resolve it.

        Raises
        ------
        CampaignError
            With a message naming the config key that cannot be used.
        """
        name = config.get("name")
        if not isinstance(name, str) or not name:
            raise CampaignError("name", "give the campaign a name")
        suite = tuple(config.get("suite") or ())
        training = dict(config.get("training_tasks") or {})
        lhs = training.get("latin_hypercube")
        listed = {str(k): dict(v) for k, v in (training.get("listed") or {}).items()}
        new = {str(k): dict(v) for k, v in (config.get("new_tasks") or {}).items()}
        if "suite" in config:
            check_suite(config, suite, bool(lhs or listed), bool(new))
            parameters = task_space = constraint = forbidden = None
        else:
            if "objective" not in config or "parameters" not in config:
                raise CampaignError(
                    "objective",
                    "give an objective with its parameter space ('parameters'), or a 'suite' "
                    "of benchmark functions",
                )
            constraint = config.get("constraint")
            forbidden = config.get("forbidden")
            parameters = config["parameters"]
            if isinstance(parameters, str):  # a space file (propulate.campaign.spacefile)
                parameters, constraint, forbidden = read_space_file(
                    parameters, constraint, forbidden
                )
            check_importable("constraint", constraint)
            parameters = dict(parameters or {})
            forbidden = list(forbidden) if forbidden else None
            space_of("parameters", parameters)
            space_of("forbidden", parameters, forbidden=forbidden)
            task_space = dict(config["task_space"]) if "task_space" in config else None
            if isinstance(config["objective"], Mapping):
                check_command(config["objective"], list(parameters), list(task_space or {}))
            else:
                check_importable("objective", config["objective"])
        tspace = space_of("task_space", task_space) if task_space is not None else None
        for key, tasks in (("training_tasks.listed", listed), ("new_tasks", new)):
            check_tasks(key, tasks, tspace)
        if lhs and tspace is None:
            raise CampaignError("training_tasks.latin_hypercube", "sampling needs a 'task_space'")
        prefix = (lhs or {}).get("prefix", "train")
        lhs_ids = tuple(f"{prefix}{i:02d}" for i in range(lhs["n"])) if lhs else ()
        if tspace is not None and not (lhs_ids or listed):
            raise CampaignError("training_tasks", "give 'latin_hypercube' or 'listed' tasks")
        clash = (set(lhs_ids) & (set(listed) | set(new))) | (set(listed) & set(new))
        if clash:
            raise CampaignError(
                "training_tasks", f"task ids {sorted(clash)} are used twice (with 'new_tasks')"
            )
        file_tasks = read_file_tasks(config.get("new_tasks_file"), tspace)
        reused = set(file_tasks) & (set(lhs_ids) | set(listed) | set(new))
        if reused:
            raise CampaignError(
                "new_tasks_file", f"task ids {sorted(reused)} are the config's tasks already"
            )
        evolve_cfg = dict(config.get("evolve") or {})
        methods = tuple(evolve_cfg.pop("methods", None) or (EvolveSettings.method,))
        ranks = evolve_cfg.pop("ranks", None)
        seeds = tuple(evolve_cfg.pop("seeds", None) or (EvolveSettings.seed,))
        if evolve_cfg.get("propagator") is not None:
            evolve_cfg["propagator"] = check_propagator(evolve_cfg["propagator"])
        if evolve_cfg.get("pruner") is not None:
            evolve_cfg["pruner"] = check_pruner(evolve_cfg["pruner"], methods)
        if evolve_cfg.get("objectives") is not None:
            evolve_cfg["objectives"] = check_objectives(evolve_cfg, methods)
            evolve_cfg.pop("weights", None)  # merged into the objectives' canonical form
        elif evolve_cfg.get("weights") is not None:
            raise CampaignError("evolve.weights", "weights combine evolve.objectives: give both")
        evolve = settings_of("evolve", EvolveSettings, evolve_cfg)
        check_plugins(evolve, methods)
        if (
            evolve.max_evaluations is None
            and evolve.generations is None
            and evolve.time_limit is None
        ):
            raise CampaignError(
                "evolve", "give a stopping criterion: max_evaluations, generations or time_limit"
            )
        mla = settings_of("mla", MLASettings, config["mla"]) if "mla" in config else None
        space = None if suite else space_of("parameters", parameters, constraint, forbidden)
        known = {t: None for t in lhs_ids} | {**listed, **new}
        section = dict(config.get("baselines") or {})
        if config.get("default") is not None:  # the untuned configuration, at the top level
            if "default" in section:
                raise CampaignError("default", "give it once: here or as baselines.default")
            section["default"] = config["default"]
        try:
            baselines = Baselines.from_config(section or None, space, known, list(new))
        except BaselineError as err:
            raise CampaignError(f"baselines.{err.key}", str(err).split(": ", 1)[1]) from None
        one_loss = {
            "mla": "mla" in config and tspace is not None,
            "new_tasks (TLA1, TLA2)": bool(new or file_tasks) and tspace is not None,
            "baselines/default": bool(section),
        }
        check_objective_stages(evolve.objectives, [k for k, on in one_loss.items() if on])
        return cls(
            name=name,
            objective=None if suite else config["objective"],
            constraint=constraint,
            forbidden=tuple(forbidden or ()),
            parameters=parameters,
            task_space=task_space,
            suite=suite,
            lhs_ids=lhs_ids,
            lhs_seed=int((lhs or {}).get("seed", 0)),
            lhs_prefix=prefix,
            listed_training={k: dict(sorted(v.items())) for k, v in listed.items()},
            new_tasks={k: dict(sorted(v.items())) for k, v in new.items()},
            methods=methods,
            seeds=seeds,
            evolve=evolve,
            lcm=settings_of("lcm", LCMSettings, config.get("lcm")),
            mla=mla,
            transfer=settings_of("transfer", TransferSettings, config.get("transfer")),
            evolve_given=frozenset(evolve_cfg),
            mla_given=frozenset(config.get("mla") or {}),
            evolve_ranks=None if ranks is None else int(ranks),
            baselines=baselines,
            new_tasks_file=config.get("new_tasks_file"),
            file_tasks=file_tasks,
            revalidate=settings_of("revalidate", RevalidateSettings, config.get("revalidate")),
            evaluation_cores=check_cores(config.get("evaluation_cores", 1)),
            report_benchmarks=benchmark_files((config.get("report") or {}).get("benchmarks")),
        )

    # ----------------------------------------------------------------- tasks and stages
    @property
    def taskless(self) -> bool:
        """True for an objective without tasks (or a suite): no LCM or transfer stage."""
        return self.task_space is None

    @property
    def training_ids(self) -> list[str]:
        """Ids of the training tasks (a suite's functions; the campaign name without tasks)."""
        if self.suite:
            return list(self.suite)
        if self.taskless:
            return [self.name]
        return list(self.lhs_ids) + list(self.listed_training)

    @property
    def new_ids(self) -> list[str]:
        """Ids of the new tasks transfer goes to."""
        return list(self.new_tasks)

    @property
    def file_ids(self) -> list[str]:
        """Ids of the new-tasks file's tasks (TLA2 only, in scheduled runs)."""
        return list(self.file_tasks)

    @property
    def listed(self) -> dict[str, dict[str, Any]]:
        """Every task given by its values (listed training, new and file tasks)."""
        return {**self.listed_training, **self.new_tasks, **self.file_tasks}

    @property
    def task_ids(self) -> list[str]:
        """Ids of every task spec file (none without tasks)."""
        return [] if self.taskless else self.training_ids + self.new_ids + self.file_ids

    @property
    def mla_on(self) -> bool:
        """Whether the MLA stage runs (an ``mla`` section and tasks)."""
        return self.mla is not None and not self.taskless

    @property
    def transfer_on(self) -> bool:
        """Whether transfer runs (new tasks and a task space)."""
        return bool(self.new_tasks) and not self.taskless

    def objective_of(self, task: str) -> str:
        """The loss of a job on ``task``: the config's, a suite function's, or the file of a
        command objective (:attr:`objective_file`)."""
        if self.suite:
            return suite_objective(task)
        return self.objective_file if self.is_command else str(self.objective)

    @property
    def is_command(self) -> bool:
        """Whether the objective is a program run per evaluation (a mapping in the config)."""
        return isinstance(self.objective, Mapping)

    @property
    def objective_file(self) -> str:
        """Where the workflow writes a command objective's mapping for the jobs."""
        return self.path("objective.yaml")

    def spec(self) -> dict[str, Any]:
        """The campaign file's content (``docs/contracts.md``); a suite has none."""
        if self.suite:
            raise ValueError("a suite has one space file per function (space_spec)")
        objective = self.objective if self.is_command else str(self.objective)
        return campaign_spec(
            self.name,
            objective,
            self.parameters or {},
            self.constraint,
            self.task_space,
            list(self.forbidden),
            self.evolve.objectives,
        )

    def space_spec(self, task: str) -> dict[str, Any]:
        """The space file an evolve job of ``task`` reads (suite function or campaign)."""
        return suite_spec(task) if self.suite else self.spec()
