"""The Optuna baseline's journal is forced to disk once per trial, not once per operation (a
trial of 30 parameters cost 33 ``fsync`` calls, most of a ZDT1 run's time), and stays a journal
Optuna reads back whole."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from propulate.cli import main

optuna = pytest.importorskip("optuna")

PARAMETERS = 12
TRIALS = 20


def test_one_fsync_per_trial_and_a_complete_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    space = tmp_path / "space.yaml"
    space.write_text(yaml.safe_dump({"parameters": {f"x{i}": [0.0, 1.0] for i in range(12)}}))
    forced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (forced.append(fd), real(fd))[1])
    args = ["evolve", "--method", "optuna", "--objective", "propulate.problems.pairs:zdt1"]
    args += ["--objectives", "f1:min,f2:min", "--space", str(space), "--out", str(tmp_path / "r")]
    assert main([*args, "--max-evaluations", str(TRIALS)]) == 0
    # Optuna's own backend: (PARAMETERS + 3) per trial, 300 here
    assert len(forced) <= TRIALS + 10
    backend = optuna.storages.journal.JournalFileBackend(str(tmp_path / "r" / "optuna-journal.log"))
    study = optuna.load_study(
        study_name="propulate", storage=optuna.storages.JournalStorage(backend)
    )
    trials = study.get_trials(states=[optuna.trial.TrialState.COMPLETE])
    assert len(trials) == TRIALS
    assert all(len(t.params) == PARAMETERS and len(t.values) == 2 for t in trials)
