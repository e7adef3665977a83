"""The tuning database on a small MLA-tuned campaign of the demo function: ingest with
provenance, ``suggest`` (measured, TLA1 on unseen tasks, outside the task space), re-validation
after a machine change, repeats of a command objective, and the ``tuningdb`` command line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from propulate.cli import main
from propulate.runs.fingerprint import OVERRIDE_ENV, config_hash, fingerprint_hash
from propulate.tuningdb.ingest import update
from propulate.tuningdb.revalidate import revalidate
from propulate.tuningdb.store import TuningDB
from propulate.tuningdb.suggest import parse_task, suggest
from tests.tuningdb_utils import MACHINE_A, MACHINE_B

DEMO = "propulate.problems.demo:demo_loss"
CAMPAIGN = {
    "name": "demo",
    "objective": DEMO,
    "parameters": {"x": {"type": "float", "low": 0, "high": 1}},
    "task_space": {"t": {"type": "float", "low": 0, "high": 1.5}},
}


# ---------------------------------------------------------------------------- a small campaign
@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three MLA-tuned tasks of the demo function, their model and a database."""
    root = tmp_path_factory.mktemp("campaign")
    (root / "campaign.yaml").write_text(json.dumps(CAMPAIGN))
    # the runs measure on "machine A": their summaries record it, and the rows take it from there
    mp = pytest.MonkeyPatch()
    mp.setenv(OVERRIDE_ENV, json.dumps(MACHINE_A))
    assert (
        main(
            [
                "sample-tasks",
                "--space",
                str(root / "campaign.yaml"),
                "--n",
                "3",
                "--seed",
                "0",
                "--out",
                str(root / "tasks"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "mla",
                "--space",
                str(root / "campaign.yaml"),
                "--objective",
                DEMO,
                "--tasks",
                *map(str, sorted((root / "tasks").glob("*.json"))),
                "--out",
                str(root / "mla"),
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
                "--model",
                "lcm",  # its model file stands in for the campaign's LCM below
            ]
        )
        == 0
    )
    mp.undo()
    # the update job runs elsewhere (machine B): each row keeps the machine of its run
    result = update(
        root,
        CAMPAIGN,
        sorted((root / "mla").glob("train*")),
        model=root / "mla" / "model.json",
        fingerprint=MACHINE_B,
    )
    assert result == {"added": ["train00", "train01", "train02"], "kept": [], "model": True}
    with TuningDB(root, readonly=True) as db:
        assert all(r.fingerprint == {**r.fingerprint, **MACHINE_A} for r in db.current())
    return root


def test_update_stores_best_runs_with_provenance_and_is_idempotent(campaign: Path) -> None:
    with TuningDB(campaign, readonly=True) as db:
        rows = db.current()
    summaries = {
        r.task_id: json.loads((campaign / "mla" / r.task_id / "summary.json").read_text())
        for r in rows
    }
    for r in rows:
        s = summaries[r.task_id]
        assert r.params == s["best_params"] and r.loss == pytest.approx(s["best_loss"])
        assert (r.method, r.evaluations, r.reason, r.version) == ("mla", 6, "tuned", 1)
        assert r.config_hash == config_hash(CAMPAIGN) and r.package_version
    again = update(
        campaign,
        CAMPAIGN,
        [campaign / "mla"],  # the folder of MLA's runs
        model=campaign / "mla" / "model.json",
        fingerprint=MACHINE_A,
    )
    assert again == {"added": [], "kept": ["train00", "train01", "train02"], "model": False}


def test_suggest_measured_unseen_and_outside(campaign: Path, tmp_path: Path, capsys) -> None:
    import shutil

    from propulate.models.joint_transfer import as_joint, joint_tla1
    from propulate.models.lcm import LCM
    from propulate.models.transfer import tla1
    from propulate.space import SearchSpace
    from propulate.tuningdb.suggest import JOINT_META

    with TuningDB(campaign, readonly=True) as db:
        tuned = db.current()[0]
    import propulate

    assert propulate.suggest is suggest  # the package's function
    got = propulate.suggest(campaign, f"t={tuned.task['t']!r}")
    assert (got["source"], got["params"], got["loss"]) == ("measured", tuned.params, tuned.loss)

    # an unseen task: TLA1 of the LCM (transfer.model auto), with its expected loss
    space, task_space = SearchSpace(CAMPAIGN["parameters"]), SearchSpace(CAMPAIGN["task_space"])
    lcm_db = campaign / "tuning.sqlite"
    base = LCM.load(campaign / "mla" / "model.json")
    unseen = suggest(lcm_db, {"t": 0.9})
    params, std = tla1(base, space, task_space, {"t": 0.9})
    assert unseen["source"] == "tla1" and not unseen["extrapolated"] and "model" not in unseen
    assert unseen["params"]["x"] == pytest.approx(params["x"], abs=1e-5)
    assert unseen["params_std"]["x"] == pytest.approx(std["x"], abs=1e-5)
    assert unseen["loss_low"] <= unseen["loss"] <= unseen["loss_high"]

    # a campaign with transfer.model joint stores the joint model fitted on the LCM's points
    # (tuningdb update --transfer-model joint): TLA1 on it, as transfer tla1 computes it
    joint_db = tmp_path / "tuning.sqlite"
    shutil.copy(lcm_db, joint_db)
    joint = as_joint(LCM.load(campaign / "mla" / "model.json"), space, task_space, seed=0)
    with TuningDB(joint_db) as db:
        db.set_meta(JOINT_META, joint.to_dict())
    unseen = suggest(joint_db, {"t": 0.9})
    params, std, band = joint_tla1(joint, space, task_space, {"t": 0.9}, seed=0)
    assert unseen["source"] == "tla1" and unseen["model"] == "joint"
    assert not unseen["extrapolated"]
    assert unseen["params"]["x"] == pytest.approx(params["x"], abs=1e-3)
    assert unseen["params_std"]["x"] == pytest.approx(std["x"], abs=1e-3)
    assert {k: unseen[k] for k in band} == pytest.approx(band, rel=1e-2)
    assert unseen["loss_low"] <= unseen["loss"] <= unseen["loss_high"]
    # that model was stored without its band's calibration (a database of an older version):
    # suggest computed it. tuningdb update stores it, and suggest gives the same answer from it
    from propulate.transfer.joint_posterior import JointPosterior
    from propulate.tuningdb.ingest import fit_model_meta

    meta = fit_model_meta(
        tmp_path / "none.sqlite", campaign / "mla" / "model.json", space, task_space, 0, "joint"
    )
    stored = meta[JOINT_META]
    assert stored["band"] == JointPosterior(joint.to_dict()).calibration()
    assert stored["band"]["sigmas"] > 0
    with TuningDB(joint_db) as db:
        db.set_meta(JOINT_META, stored)
    assert suggest(joint_db, {"t": 0.9}) == unseen
    # the expected loss is the LCM extended by the task (no fit), as TLA2 starts from it
    from propulate.models.sampling import TaskData
    from propulate.models.transfer import extend_model

    # with the band calibrated on the training tasks (propulate.tuningdb.predictor.band_calibration)
    with TuningDB(lcm_db, readonly=True) as db:
        stored = db.get_meta("lcm_posterior")
    band, y_std = stored["band"], stored["y_std"]  # the floor is in standardized units
    assert band["sigmas"] > 0 and band["floor"] > 0
    for t in (0.05, 0.9, 1.45):
        got = suggest(lcm_db, {"t": t})
        ext = extend_model(base, TaskData("new", {"t": t}), task_space, space, fit=False)
        mean, var = ext.predict(space.encode(got["params"])[None, :], ext.n_tasks - 1)
        half = band["sigmas"] * (var[0] + (band["floor"] * y_std) ** 2) ** 0.5
        lo, hi = mean[0] - half, mean[0] + half
        if ext.log_output:
            mean, lo, hi = np.exp(mean), np.exp(lo), np.exp(hi)
        assert (got["loss"], got["loss_low"], got["loss_high"]) == pytest.approx(
            (float(mean[0]), float(lo), float(hi)), rel=1e-9
        )

    with pytest.raises(ValueError, match="outside the task space"):
        suggest(campaign, "t=3")
    assert suggest(campaign, "t=3", extrapolate=True)["extrapolated"]
    assert main(["suggest", "--campaign", str(campaign), "--task", "t=3"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--extrapolate" in err
    assert main(["suggest", "--campaign", str(campaign), "--task", "u=1"]) == 2
    assert main(["suggest", "--campaign", str(campaign / "nothing"), "--task", "t=1"]) == 2
    assert parse_task("m=1234, n=567") == {"m": "1234", "n": "567"}
    with pytest.raises(ValueError):
        parse_task("m1234")


def test_suggest_command_loads_neither_mpi_nor_gpy(campaign: Path) -> None:
    code = (
        "import json, sys\n"
        "from propulate.cli import main\n"
        f"main(['suggest', '--campaign', {str(campaign)!r}, '--task', 't=0.9'])\n"
        "print(json.dumps(sorted(m for m in ('GPy', 'mpi4py', 'pandas', 'scipy.stats', "
        "'scipy.optimize', 'propulate.models.lcm') if m in sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300
    ).stdout.splitlines()
    assert json.loads(out[0])["source"] == "tla1"
    assert json.loads(out[-1]) == []


@pytest.mark.slow
def test_revalidation_after_a_fingerprint_change_flags_drift_and_retunes(
    campaign: Path, tmp_path: Path
) -> None:
    import shutil

    db_path = tmp_path / "tuning.sqlite"
    shutil.copy(campaign / "tuning.sqlite", db_path)
    # the same machine: nothing to re-validate
    assert revalidate(db_path, fingerprint=MACHINE_A)["checked"] == []
    # a BLAS upgrade that leaves the losses unchanged: re-measured, no drift
    same = revalidate(db_path, repeats=2, fingerprint=MACHINE_B)
    assert same["checked"] == ["train00", "train01", "train02"] and same["drifted"] == []
    # a node twice as slow: every task drifts by +100 % and is re-tuned with TLA2
    machine_c = {**MACHINE_B, "cpu_model": "C"}
    slow = revalidate(
        db_path,
        "tests.tuningdb_utils:slower_demo",
        repeats=2,
        fingerprint=machine_c,
        retune_dir=tmp_path / "retune",
        budget=2,
    )
    assert slow["drifted"] == ["train00", "train01", "train02"]
    with TuningDB(db_path, readonly=True) as db:
        drift = db.revalidations()
        current = db.current()
        versions = db.versions()
    assert [d["drifted"] for d in drift] == [False] * 3 + [True] * 3
    assert all(d["drift"] == pytest.approx(1.0) and d["repeats"] for d in drift[3:])
    assert drift[3]["changes"] == ["cpu_model: A -> C"]
    assert all(r.fingerprint == machine_c for r in current)
    reasons = [r.reason for r in versions]
    assert reasons.count("revalidated") == 6 and reasons[:3] == ["tuned"] * 3
    for r in current:  # TLA2's result only replaces the re-measured row when it is better
        remeasured = [v for v in versions if v.task_id == r.task_id and v.reason == "revalidated"][
            -1
        ]
        assert r.loss <= remeasured.loss
        assert r.reason in ("revalidated", "retuned")
    assert set(slow["retuned"]) == {r.task_id for r in current if r.reason == "retuned"}
    assert sorted(p.name for p in (tmp_path / "retune").iterdir() if p.is_dir()) == [
        "train00",
        "train01",
        "train02",
    ]
    # and now this machine is the reference: nothing left to re-validate
    assert revalidate(db_path, fingerprint=machine_c)["checked"] == []

    from propulate.report.tuningdb import drift_table, tuningdb_section

    with TuningDB(db_path, readonly=True) as db:
        table = drift_table(db)
    assert list(table["drifted"]) == ["no"] * 3 + ["yes"] * 3
    page = tuningdb_section(db_path)
    assert page.count("<td>yes</td>") == 3 and page.count("<td>no</td>") == 3
    assert page.count("<td>cpu_model: A -&gt; C</td>") == 3
    assert page.count("<td>blas: openblas 1 -&gt; openblas 2</td>") == 3
    for fp in (MACHINE_A, MACHINE_B, machine_c):
        assert fingerprint_hash(fp) in page
    assert "No tuning database" in tuningdb_section(tmp_path / "none.sqlite")


def test_repeats_of_a_command_objective_come_from_the_record_details(tmp_path: Path) -> None:
    from propulate.runs.summary import RunSummary, write_summary

    run = tmp_path / "run"
    (run / "evals").mkdir(parents=True)
    (run / "task.json").write_text(json.dumps({"id": "a", "task": {"t": 0.5}}))
    records = [
        {
            "params": {"x": 0.5},
            "loss": 2.0,
            "status": "ok",
            "task": "a",
            "details": {"losses": [1.9, 2.0, 2.2]},
        },
        {"params": {"x": 0.1}, "loss": 3.0, "status": "ok", "task": "a"},
    ]
    (run / "evals" / "s-r0.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    write_summary(
        run,
        RunSummary(
            task="a",
            run="seed1",
            method="propulate",
            best_params={"x": 0.5},
            best_loss=2.0,
            evaluations=2,
        ),
    )
    assert update(tmp_path, CAMPAIGN, [run], fingerprint=MACHINE_A)["added"] == ["a"]
    with TuningDB(tmp_path, readonly=True) as db:
        (got,) = db.current()
    assert (got.loss, got.repeats, got.method) == (2.0, [1.9, 2.0, 2.2], "evolve")
    assert got.loss_std == pytest.approx(0.152752523, rel=1e-6)


def test_tuningdb_command_line(campaign: Path, tmp_path: Path, capsys) -> None:
    assert main(["tuningdb", "show", "--db", str(campaign)]) == 0
    shown = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["task_id"] for r in shown] == ["train00", "train01", "train02"]
    runs = [str(p) for p in sorted((campaign / "mla").glob("train*"))]
    assert (
        main(
            [
                "tuningdb",
                "update",
                "--db",
                str(tmp_path),
                "--campaign",
                str(campaign / "campaign.yaml"),
                "--runs",
                *runs,
                "--config-hash",
                "abc",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["added"] == ["train00", "train01", "train02"]
    with TuningDB(tmp_path, readonly=True) as db:
        assert {r.config_hash for r in db.current()} == {"abc"}
    assert (
        main(
            [
                "tuningdb",
                "update",
                "--db",
                str(tmp_path),
                "--campaign",
                str(campaign / "campaign.yaml"),
                "--runs",
                str(tmp_path / "nope"),
            ]
        )
        == 2
    )
    assert "nope does not exist" in capsys.readouterr().err


def test_report_refuses_a_missing_tuning_database(campaign: Path, tmp_path: Path, capsys) -> None:
    assert (
        main(
            [
                "report",
                "--summary",
                str(tmp_path / "s.csv"),
                "--runs",
                str(campaign / "mla" / "train00"),
                "--tuning-db",
                str(tmp_path / "none"),
                "--out",
                str(tmp_path / "r.html"),
            ]
        )
        == 2
    )
    assert "tuning database not found" in capsys.readouterr().err
