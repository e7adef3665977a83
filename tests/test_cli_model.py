"""The model stages' command line: sample-tasks, fit-lcm, mla, transfer tla1|tla2."""

from __future__ import annotations

import json
import sys
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from propulate.cli import main
from propulate.compat.history import read_history
from propulate.models.joint_gp import JointGP
from propulate.models.lcm import LCM
from propulate.runs.summary import RunSummary
from propulate.settings import LCMSettings, MLASettings, TransferSettings
from propulate.user_objective import read_task

DEMO = "propulate.problems.demo:demo_loss"
CAMPAIGN = f"""
objective: {DEMO}
parameters:
  x: {{type: float, low: 0, high: 1}}
task_space:
  t: {{type: float, low: 0, high: 1.5}}
"""
SUMMARY_KEYS = {f.name for f in fields(RunSummary)} - {"objectives", "pareto", "bred"}  # not here


@pytest.fixture()
def campaign(tmp_path: Path) -> Path:
    path = tmp_path / "campaign.yaml"
    path.write_text(CAMPAIGN)
    return path


def test_sample_tasks_by_latin_hypercube(campaign: Path, tmp_path: Path) -> None:
    out = tmp_path / "tasks"
    args = [
        "sample-tasks",
        "--space",
        str(campaign),
        "--n",
        "4",
        "--seed",
        "3",
        "--prefix",
        "train",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    files = sorted(out.glob("*.json"))
    assert [f.name for f in files] == [f"train{i:02d}.json" for i in range(4)]
    specs = [read_task(f) for f in files]
    assert [s["id"] for s in specs] == ["train00", "train01", "train02", "train03"]
    ts = sorted(s["task"]["t"] for s in specs)
    assert all(0 <= t <= 1.5 for t in ts)
    assert all(int(t / 0.375) == i for i, t in enumerate(ts))  # one per stratum
    first = [f.read_text() for f in files]
    assert main(args) == 0 and [f.read_text() for f in files] == first  # seeded


def test_sample_tasks_listed_and_errors(campaign: Path, tmp_path: Path, capsys) -> None:
    listed = tmp_path / "new.yaml"
    listed.write_text("- {t: 0.4}\n- {t: 1.1}\n")
    out = tmp_path / "tasks"
    assert (
        main(
            [
                "sample-tasks",
                "--space",
                str(campaign),
                "--listed",
                str(listed),
                "--prefix",
                "new",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert read_task(out / "new01.json") == {"id": "new01", "task": {"t": 1.1}}
    listed.write_text("- {t: 4.0}\n")
    assert (
        main(["sample-tasks", "--space", str(campaign), "--listed", str(listed), "--out", str(out)])
        == 2
    )
    assert "outside the task space" in capsys.readouterr().err
    bare = tmp_path / "bare.yaml"
    bare.write_text("parameters:\n  x: {type: float, low: 0, high: 1}\n")
    assert main(["sample-tasks", "--space", str(bare), "--n", "2", "--out", str(out)]) == 2


def test_pipeline_mla_fit_lcm_tla1_tla2(campaign: Path, tmp_path: Path, capsys) -> None:
    tasks = tmp_path / "tasks"
    main(["sample-tasks", "--space", str(campaign), "--n", "3", "--seed", "0", "--out", str(tasks)])
    mla = tmp_path / "mla"
    assert (
        main(
            [
                "mla",
                "--space",
                str(campaign),
                "--objective",
                DEMO,
                "--tasks",
                *map(str, sorted(tasks.glob("*.json"))),
                "--out",
                str(mla),
                "--budget",
                "6",
                "--initial",
                "4",
                "--seed",
                "0",
                "--latent",
                "2",
                "--restarts",
                "1",
            ]
        )
        == 0
    )
    for i in range(3):
        run = mla / f"train{i:02d}"
        summary = json.loads((run / "summary.json").read_text())
        assert set(summary) == SUMMARY_KEYS and summary["evaluations"] == 6
        assert summary["method"] == "mla" and summary["ranks"] == 1
        assert (summary["run"], summary["seed"], summary["parameters"]) == ("seed0", 0, ["x"])
        assert read_task(run / "task.json")["id"] == f"train{i:02d}"
        assert len(read_history(run)) == 6
    # with a task space and several tasks MLA's default model is the joint GP
    assert JointGP.load(mla / "model.json").n_tasks == 3

    model = tmp_path / "model.json"
    assert (
        main(
            [
                "fit-lcm",
                "--space",
                str(campaign),
                "--runs",
                *map(str, sorted(mla.glob("train*"))),
                "--out",
                str(model),
                "--latent",
                "2",
                "--restarts",
                "1",
                "--max-points",
                "12",
                "--log-output",
            ]
        )
        == 0
    )
    lcm = LCM.load(model)
    assert lcm.n_tasks == 3 and len(lcm.y) == 12 and lcm.log_output
    assert [t["id"] for t in lcm.info["tasks"]] == ["train00", "train01", "train02"]

    new = tmp_path / "new.json"
    new.write_text(json.dumps({"id": "new00", "task": {"t": 0.6}}))
    capsys.readouterr()
    out1 = tmp_path / "tla1"
    assert (
        main(
            [
                "transfer",
                "tla1",
                "--model",
                str(model),
                "--space",
                str(campaign),
                "--task",
                str(new),
                "--out",
                str(out1),
                "--objective",
                DEMO,
            ]
        )
        == 0
    )
    pred = json.loads((out1 / "prediction.json").read_text())
    assert pred["task"] == "new00" and set(pred["params"]) == {"x"} and set(pred["std"]) == {"x"}
    assert 0 <= pred["params"]["x"] <= 1
    s1 = json.loads((out1 / "summary.json").read_text())
    assert s1["method"] == "tla1" and s1["evaluations"] == 1
    assert s1["best_params"] == pred["params"]

    out2 = tmp_path / "tla2"
    assert (
        main(
            [
                "transfer",
                "tla2",
                "--model",
                str(model),
                "--space",
                str(campaign),
                "--task",
                str(new),
                "--objective",
                DEMO,
                "--budget",
                "3",
                "--seed",
                "0",
                "--basin",
                "0.15",
                "--out",
                str(out2),
            ]
        )
        == 0
    )
    s2 = json.loads((out2 / "summary.json").read_text())
    assert set(s2) == SUMMARY_KEYS and s2["method"] == "tla2" and s2["evaluations"] == 3
    df = read_history(out2)
    # TLA2 starts from the TLA1 prediction of the same basin size (tla1's default here)
    assert df.iloc[0]["x"] == pred["params"]["x"]
    assert set(df["task"]) == {"new00"}


def test_mla_runs_a_command_objective_file(tmp_path: Path) -> None:
    """As the campaign's MLA job runs it: ``--objective results/<name>/objective.yaml``."""
    (tmp_path / "c.yaml").write_text(CAMPAIGN.replace(DEMO, "objective.yaml"))
    program = "import sys; print('time:', (float(sys.argv[1]) - float(sys.argv[2]) / 2) ** 2)"
    objective = {"command": f'{sys.executable} -c "{program}" {{x}} {{t}}', "result": "time: (.+)"}
    (tmp_path / "objective.yaml").write_text(json.dumps(objective))
    tasks = []
    for i, t in enumerate((0.2, 1.0)):
        tasks.append(tmp_path / f"t{i}.json")
        tasks[-1].write_text(json.dumps({"id": f"t{i}", "task": {"t": t}}))
    argv = [
        "mla",
        "--space",
        str(tmp_path / "c.yaml"),
        "--objective",
        str(tmp_path / "objective.yaml"),
    ]
    argv += ["--tasks", *map(str, tasks), "--out", str(tmp_path / "mla"), "--budget", "4"]
    assert main([*argv, "--initial", "3", "--latent", "1", "--restarts", "1"]) == 0
    for i, t in enumerate((0.2, 1.0)):
        df = read_history(tmp_path / "mla" / f"t{i}")
        assert len(df) == 4 and (df["status"] == "ok").all()
        assert np.allclose(df["loss"], (df["x"] - t / 2) ** 2, atol=1e-5)


def test_mla_rejects_bad_budgets(campaign: Path, tmp_path: Path, capsys) -> None:
    task = tmp_path / "t.json"
    task.write_text('{"id": "a", "task": {"t": 0.5}}')
    assert (
        main(
            [
                "mla",
                "--space",
                str(campaign),
                "--objective",
                DEMO,
                "--tasks",
                str(task),
                "--out",
                str(tmp_path / "o"),
                "--budget",
                "3",
                "--initial",
                "5",
            ]
        )
        == 2
    )
    assert "--initial" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["fit-lcm"],
            {
                "--latent": LCMSettings.latent,
                "--restarts": LCMSettings.restarts,
                "--max-points": LCMSettings.max_points,
                "--seed": LCMSettings.seed,
                "--log-output": LCMSettings.log_output,
            },
        ),
        (
            ["mla"],
            {
                "--budget": MLASettings.budget,
                "--initial": MLASettings.initial,
                "--seed": MLASettings.seed,
                "--latent": LCMSettings.latent,
            },
        ),
        (
            ["transfer", "tla2"],
            {"--budget": TransferSettings.tla2_budget, "--seed": TransferSettings.seed},
        ),
        (["transfer", "tla1"], {"--seed": TransferSettings.seed}),
    ],
)
def test_help_shows_the_settings_defaults(argv: list[str], expected: dict, capsys) -> None:
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    text = " ".join(capsys.readouterr().out.split()).split("options:", 1)[1]
    for option, value in expected.items():
        after = (
            text.split(f"{option} ", 1)[1]
            if option != "--log-output"
            else text.split("--no-log-output", 1)[1]
        )
        shown = after.split("(default: ", 1)[1].split(")", 1)[0]
        assert shown == str(value), (option, shown)
