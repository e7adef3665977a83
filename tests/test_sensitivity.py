"""Sobol indices of functions and of a fitted LCM per task; the ``sensitivity --model`` command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from propulate.cli import main
from propulate.models.lcm import LCM
from propulate.models.sampling import TaskData, build_lcm
from propulate.models.transfer import extend_model
from propulate.sensitivity.model import mean_function, model_sensitivity, resolve_task
from propulate.sensitivity.sobol import SobolIndices, snap, sobol_indices
from propulate.settings import SensitivitySettings
from propulate.space import Categorical, Float, Integer, SearchSpace
from propulate.space.search import INACTIVE

SPACE = SearchSpace(
    {"x": Float(0.0, 1.0), "n": Integer(1, 4), "kind": Categorical(("a", "b", "c"))}
)
TASK_SPACE = SearchSpace({"t": Float(0.0, 1.0)})


def family(p: dict, t: float) -> float:
    """Task 0 depends on x, task 1 on n; kind never matters."""
    return (1.0 - t) * 3.0 * p["x"] + t * 0.8 * p["n"] + 0.05 * p["x"] * p["n"]


@pytest.fixture(scope="module")
def model_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-task LCM over a mixed space (float, integer, categorical), saved."""
    tasks = []
    for i, t in enumerate((0.0, 1.0)):
        params = SPACE.latin_hypercube(40, seed=i)
        tasks.append(TaskData(f"t{i}", {"t": t}, params, [family(p, t) for p in params]))
    model = build_lcm(tasks, SPACE, TASK_SPACE, latent=2, max_points=None).fit(restarts=2, seed=0)
    path = tmp_path_factory.mktemp("model") / "lcm.json"
    model.save(path)
    return path


def test_snap_moves_discrete_coordinates_to_their_values_encodings() -> None:
    U = np.array([[0.12, 0.01, 0.99], [0.5, 0.49, 0.34], [0.999, 0.76, 0.0]])
    S = snap(U, SPACE)
    assert np.array_equal(S[:, 0], U[:, 0])  # floats stay
    assert [SPACE.decode(r) for r in S] == [SPACE.decode(r) for r in U]  # same values
    assert set(S[:, 1]) <= {(k + 0.5) / 4 for k in range(4)}
    assert set(S[:, 2]) <= {(k + 0.5) / 3 for k in range(3)}


def test_a_conditional_parameter_is_sampled_as_the_models_see_it() -> None:
    """Where ``x`` is inactive its coordinate is INACTIVE, so a function of it (as a model
    fitted on encoded records is) sees no spurious variation there."""
    space = SearchSpace.from_dict(
        {
            "branch": {"type": "categorical", "choices": ["a", "b"]},
            "x": {"type": "float", "low": 0.0, "high": 1.0, "when": {"branch": ["a"]}},
            "y": {"type": "float", "low": 0.0, "high": 1.0},
        }
    )
    U = np.array([[0.2, 0.7, 0.3], [0.8, 0.7, 0.3]])  # branch a, then b
    assert snap(U, space).tolist() == [[0.25, 0.7, 0.3], [0.75, INACTIVE, 0.3]]
    seen: list[np.ndarray] = []

    def f(U: np.ndarray) -> np.ndarray:
        seen.append(U)
        return np.where(U[:, 1] == INACTIVE, 0.5, U[:, 1]) + 0.01 * U[:, 2]

    ind = sobol_indices(f, space, SensitivitySettings(samples=512))
    branch_b = seen[0][:, 0] > 0.5
    assert np.all(seen[0][branch_b, 1] == INACTIVE) and np.all(seen[0][~branch_b, 1] >= 0)
    assert ind.ranking()[0] == "x" and ind.ST[1] > 0.5 and ind.ST[2] < 0.01


def test_indices_of_an_additive_function_and_of_a_categorical_one() -> None:
    space = SearchSpace({"a": (0.0, 1.0), "b": (0.0, 1.0), "c": (0.0, 1.0)})
    ind = sobol_indices(lambda U: 4 * U[:, 0] + 2 * U[:, 1], space)
    # variances 16/12 and 4/12: S1 = ST = 0.8, 0.2, 0
    assert ind.S1 == pytest.approx([0.8, 0.2, 0.0], abs=0.03)
    assert ind.ST == pytest.approx([0.8, 0.2, 0.0], abs=0.03)
    assert ind.ranking() == ["a", "b", "c"] and ind.S2 is None
    assert ind.evaluations == 1024 * 5 and np.all(ind.S1_conf[:2] > 0)

    seen: list[np.ndarray] = []

    def by_choice(U: np.ndarray) -> np.ndarray:
        seen.append(U.copy())
        return np.choose(np.floor(U[:, 2] * 3).astype(int), [0.0, 1.0, 5.0]) + 0.01 * U[:, 0]

    ind = sobol_indices(by_choice, SPACE, SensitivitySettings(samples=256, second_order=True))
    assert set(seen[0][:, 2]) == {1 / 6, 0.5, 5 / 6}  # only the choices' own encodings
    assert ind.ranking()[0] == "kind" and ind.S1[2] > 0.95 and ind.ST[1] < 0.01
    assert ind.S2 is not None and ind.S2.shape == (3, 3) and np.isnan(ind.S2[1, 0])
    again = SobolIndices.from_dict(json.loads(json.dumps(ind.to_dict())))
    assert np.array_equal(again.ST, ind.ST) and np.allclose(again.S2[0, 1:], ind.S2[0, 1:])
    # the same seed gives the same indices
    small = SensitivitySettings(samples=256)
    assert np.array_equal(
        sobol_indices(by_choice, SPACE, small).S1, sobol_indices(by_choice, SPACE, small).S1
    )


def test_a_flat_function_has_zero_indices_and_the_sample_size_is_checked() -> None:
    ind = sobol_indices(lambda U: np.full(len(U), 2.5), SPACE)
    assert ind.variance == 0.0 and not ind.S1.any() and not ind.ST.any()
    with pytest.raises(ValueError, match="power of two"):
        sobol_indices(lambda U: U[:, 0], SPACE, SensitivitySettings(samples=1000))
    with pytest.raises(ValueError, match="non-finite"):
        sobol_indices(lambda U: np.full(len(U), np.nan), SPACE, SensitivitySettings(samples=64))


def test_model_indices_per_training_task_and_for_a_new_task(model_file: Path) -> None:
    model = LCM.load(model_file)
    t0, t1 = model_sensitivity(model)
    assert (t0.id, t1.id, t0.trained, t0.output) == ("t0", "t1", True, "loss")
    assert t0.indices.ranking()[0] == "x" and t0.indices.ST[0] > 0.9
    assert t1.indices.ranking()[0] == "n" and t1.indices.ST[1] > 0.9
    assert max(t0.indices.ST[2], t1.indices.ST[2]) < 0.05  # kind never matters

    # a training task's values select it; other values are a new task, the model's prediction
    (same,) = model_sensitivity(model, [{"t": 1.0}])
    assert same.trained and np.array_equal(same.indices.ST, t1.indices.ST)
    (new,) = model_sensitivity(model, [{"t": 0.5}])
    assert not new.trained and new.id == "t0.5"
    # ... which is the mean of the model extended by the task without data (TLA2's start)
    target = resolve_task(model, TASK_SPACE, {"t": 0.5})
    ext = extend_model(model, TaskData("t0.5", {"t": 0.5}), TASK_SPACE, SPACE, fit=False)
    U = snap(np.random.default_rng(0).random((50, 3)), SPACE)
    f = mean_function(model, target, SPACE, TASK_SPACE)
    assert f(U) == pytest.approx(ext.predict(U, ext.n_tasks - 1)[0], rel=1e-10)
    assert new.indices.ranking()[-1] == "kind" and new.indices.variance > 0


def test_sensitivity_command_with_a_model(model_file: Path, capsys) -> None:
    assert main(["sensitivity", "--model", str(model_file), "--samples", "256"]) == 0
    out = capsys.readouterr().out
    assert "S1" in out and "t0" in out and "trained" in out and "N = 256" in out

    args = ["sensitivity", "--model", str(model_file), "--task", "t=0.5", "--task", "t=0"]
    assert main([*args, "--json", "--second-order", "--samples", "128"]) == 0
    data = json.loads(capsys.readouterr().out)
    first, second = data["tasks"]
    assert (first["task_id"], first["trained"], second["task_id"], second["trained"]) == (
        "t0.5",
        False,
        "t0",
        True,
    )
    assert first["indices"]["S2"]["x"]["n"] is not None and first["ranking"][-1] == "kind"

    for bad in (
        ["--samples", "1000"],  # not a power of two
        ["--task", "t=2"],  # outside the task space
        ["--task", "u=1"],  # not a task parameter
    ):
        assert main(["sensitivity", "--model", str(model_file), *bad]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
    far = ["--task", "t=2", "--extrapolate", "--samples", "64"]
    assert main(["sensitivity", "--model", str(model_file), *far]) == 0
    assert main(["sensitivity", "--model", str(model_file.parent / "none.json")]) == 2
    assert main(["sensitivity", "--runs", "x", "--task", "t=1"]) == 2
    assert main(["sensitivity"]) == 2
