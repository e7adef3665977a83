"""``python -m propulate evolve``: the help and its defaults, bad option values (one error line,
exit status 2) and options a method does not use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from propulate.cli import build_parser, main
from propulate.cli.evolve_args import evolve_settings as settings_from_args
from propulate.methods import METHODS, SEARCH_METHODS
from propulate.settings import EvolveSettings, defaults, described
from tests.evolve_utils import cli, evolve_args, one_error_line

USED_BY = {name: METHODS[name].settings for name in SEARCH_METHODS}


def _flag(name: str) -> str:
    return described(EvolveSettings, name).flag


# ------------------------------------------------------------------ help and defaults


def test_help_shows_every_option_with_its_default() -> None:
    parser = build_parser("evolve")
    sub = next(a for a in parser._actions if a.dest == "command").choices["evolve"]
    helps = {a.dest: " ".join((a.help or "").split()) for a in sub._actions}
    for name, value in defaults(EvolveSettings).items():
        shown = "pollination" if name == "pollination" else ("none" if value is None else value)
        assert f"(default: {shown})" in helps[name], name
    text = " ".join(cli("evolve", "--help").stdout.split())
    for flag in (
        "--eval-timeout SECONDS",
        "--failure-limit N",
        "(default: 20)",
        "0: never",
        "--method {propulate,optuna,random}",
    ):
        assert flag in text


def test_defaults_come_from_the_settings_and_every_option_sets_its_field(space: Path) -> None:
    parse = build_parser("evolve").parse_args
    base = evolve_args(space, Path("out"), "--max-evaluations", "5")
    assert settings_from_args(parse(base)) == EvolveSettings(max_evaluations=5)
    given = {
        "seed": 3,
        "generations": 4,
        "time_limit": 9.5,
        "eval_timeout": 2.5,
        "failure_limit": 0,
        "islands": 2,
        "pop_size": 5,
        "migration_probability": 0.3,
        "crossover_prob": 0.2,
        "mutation_prob": 0.1,
        "random_init_prob": 0.05,
        "pruned_random_init_prob": 0.25,
        "sigma_factor": 0.2,
        "ranks_per_worker": 2,
        "progress_interval": 1.5,
    }
    argv = base + [x for k, v in given.items() for x in (_flag(k), str(v))] + ["--migration"]
    got = settings_from_args(parse(argv))
    assert got == EvolveSettings(max_evaluations=5, pollination=False, **given)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--max-evaluations", "0"], "argument --max-evaluations: must be at least 1, got 0"),
        (["--max-evaluations", "-4"], "--max-evaluations: must be at least 1"),
        (["--max-evaluations", "2.5"], "--max-evaluations: expected a whole number"),
        (["--time-limit", "nan"], "--time-limit: must be a finite number > 0, got nan"),
        (["--time-limit", "inf"], "--time-limit: must be a finite number > 0"),
        (["--time-limit", "0"], "--time-limit: must be a finite number > 0"),
        (["--time-limit", "-1"], "--time-limit: must be a finite number > 0"),
        (["--max-evaluations", "9", "--eval-timeout", "0"], "--eval-timeout: must be a finite"),
        (["--max-evaluations", "9", "--eval-timeout", "nan"], "--eval-timeout: must be a finite"),
        (
            ["--max-evaluations", "9", "--failure-limit", "-1"],
            "--failure-limit: must be at least 0",
        ),
        (["--max-evaluations", "9", "--migration-probability", "1.5"], "in [0, 1]"),
        (
            ["--max-evaluations", "9", "--method", "optuna", "--islands", "2"],
            "--islands is not used by --method optuna",
        ),
        (
            ["--max-evaluations", "9", "--method", "optuna", "--eval-timeout", "5"],
            "--eval-timeout is not used by --method optuna",
        ),
        (
            ["--max-evaluations", "9", "--method", "optuna", "--ranks-per-worker", "2"],
            "--ranks-per-worker is not used by --method optuna",
        ),
        (
            ["--max-evaluations", "9", "--method", "random", "--pop-size", "4"],
            "--pop-size is not used by --method random",
        ),
        (
            ["--max-evaluations", "9", "--method", "random", "--migration"],
            "--migration is not used by --method random",
        ),
        ([], "give a stopping criterion"),
        (["--max-evaluations", "9", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(
    tmp_path: Path, space: Path, capsys: Any, extra: list[str], message: str
) -> None:
    assert main(evolve_args(space, tmp_path / "out", *extra)) == 2
    captured = capsys.readouterr()
    line = one_error_line(captured.err)
    assert line.startswith("propulate evolve: error: ") and message in line
    assert captured.out == ""
    assert not (tmp_path / "out").exists()


def test_every_option_unused_by_a_method_is_refused(
    tmp_path: Path, space: Path, capsys: Any
) -> None:
    values = {
        "seed": "1",
        "generations": "3",
        "time_limit": "5",
        "eval_timeout": "3",
        "failure_limit": "3",
        "islands": "2",
        "pop_size": "3",
        "migration_probability": "0.1",
        "crossover_prob": "0.1",
        "mutation_prob": "0.1",
        "random_init_prob": "0.2",
        "pruned_random_init_prob": "0.2",
        "sigma_factor": "0.1",
        "ranks_per_worker": "2",
        "progress_interval": "3",
    }
    for method, used in USED_BY.items():
        for name, value in values.items():
            argv = evolve_args(
                space,
                tmp_path / "out",
                "--max-evaluations",
                "5",
                "--method",
                method,
                _flag(name),
                value,
            )
            if name in used:
                assert settings_from_args(build_parser("evolve").parse_args(argv)).method == method
            else:
                assert main(argv) == 2, (method, name)
                assert f"{_flag(name)} is not used by --method {method}" in capsys.readouterr().err
