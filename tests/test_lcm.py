"""The LCM: likelihood and gradient, equality with GPy, persistence, multitask benefit."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import approx_fprime

from propulate.models.fitting import GaussianPrior
from propulate.models.hyperparameters import HyperLayout
from propulate.models.lcm import LCM
from propulate.models.sampling import TaskData, build_lcm, subsample
from propulate.space import SearchSpace


def small_model(seed: int = 0, tasks: int = 3, n: int = 24, latent: int = 2) -> LCM:
    rng = np.random.default_rng(seed)
    X = rng.random((n, 2))
    t = np.arange(n) % tasks
    y = np.sin(6 * X[:, 0]) + 0.3 * t * X[:, 1] + 0.01 * rng.standard_normal(n)
    m = LCM(X, t, y, tasks, latent=latent)
    m.randomize(rng)
    return m


def test_gradient_matches_finite_differences() -> None:
    m = small_model()
    theta = m.get_theta()
    _, grad = m.objective(theta)
    numeric = approx_fprime(theta, lambda v: m.objective(v)[0], 1e-6)
    assert np.allclose(grad, numeric, rtol=1e-3, atol=1e-3 * np.abs(grad).max())


def test_masked_objective_gradient_is_the_free_part() -> None:
    m = small_model()
    theta = m.get_theta()
    free = m.task_slices(1)
    f_all, g_all = m.objective(theta)
    f_free, g_free = m.objective(theta[free], free)
    assert f_free == pytest.approx(f_all)
    assert np.allclose(g_free, g_all[free])


@pytest.mark.parametrize("latent", [1, 2])
def test_likelihood_and_prediction_equal_gpy_container(latent: int) -> None:
    m = small_model(latent=latent)
    gm = m.gpy_model()
    assert m.log_likelihood() == pytest.approx(float(gm.log_likelihood()), rel=1e-6)
    Xs = np.random.default_rng(5).random((7, 2))
    mu, var = m.predict_standardized(Xs, 2)
    Xa = np.hstack([Xs, np.full((7, 1), 2.0)])
    mg, vg = gm.predict_noiseless(Xa, Y_metadata={"output_index": np.full((7, 1), 2, int)})
    assert np.allclose(mu, mg[:, 0], atol=1e-6)
    assert np.allclose(var, vg[:, 0], atol=1e-6)


def test_fit_improves_likelihood_and_gpy_reads_back() -> None:
    m = small_model()
    before = m.log_likelihood()
    m.fit(restarts=2, seed=1)
    assert m.log_likelihood() > before + 1.0
    assert m.log_likelihood_value == pytest.approx(m.log_likelihood(), rel=1e-6)
    copy = LCM(m.X, m.task_index, m.y, m.n_tasks, latent=m.latent)
    copy.read_gpy(m.gpy_model())
    assert copy.log_likelihood() == pytest.approx(m.log_likelihood(), rel=1e-6)


def test_free_mask_only_moves_free_entries() -> None:
    m = small_model()
    theta = m.get_theta()
    free = m.task_slices(0)
    m.fit(restarts=1, free=free)
    after = m.get_theta()
    assert np.array_equal(after[~free], theta[~free])
    assert not np.allclose(after[free], theta[free])


def test_save_load_round_trip_predicts_exactly(tmp_path) -> None:
    m = small_model(latent=2)
    m.log_output = False
    m.fit(restarts=1)
    m.info = {"tasks": [{"id": "a", "task": {"t": 0.1}}], "note": "x"}
    path = tmp_path / "model.json"
    m.save(path)
    data = json.loads(path.read_text())  # plain JSON, no pickle
    assert data["format"] == "propulate-lcm/1" and len(data["X"]) == len(m.y)
    loaded = LCM.load(path)
    Xs = np.random.default_rng(3).random((11, 2))
    for task in range(3):
        a, b = m.predict(Xs, task), loaded.predict(Xs, task)
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert np.array_equal(m.task_correlation(), loaded.task_correlation())
    assert loaded.info == m.info
    assert loaded.log_likelihood_value == m.log_likelihood_value


def test_load_rejects_other_formats(tmp_path) -> None:
    (tmp_path / "m.json").write_text(json.dumps({"format": "pickle"}))
    with pytest.raises(ValueError, match="propulate-lcm"):
        LCM.load(tmp_path / "m.json")


def related(x: np.ndarray) -> np.ndarray:
    return np.sin(7 * x[:, 0]) + 0.5 * x[:, 0]


def test_lcm_beats_independent_gp_on_a_sparse_related_task() -> None:
    rng = np.random.default_rng(0)
    Xa = rng.random((25, 1))
    Xb = np.array([[0.15], [0.5], [0.85]])
    ya = related(Xa)
    yb = 0.9 * related(Xb) + 0.3  # strongly correlated with task a, shifted
    lcm = LCM(np.vstack([Xa, Xb]), [0] * 25 + [1] * 3, np.concatenate([ya, yb]), 2, latent=2)
    lcm.fit(restarts=3, seed=0)
    single = LCM(Xb, [0, 0, 0], yb, 1, latent=1).fit(restarts=3, seed=0)
    grid = np.linspace(0, 1, 201)[:, None]
    truth = 0.9 * related(grid) + 0.3
    rmse_lcm = np.sqrt(np.mean((lcm.predict(grid, 1)[0] - truth) ** 2))
    rmse_gp = np.sqrt(np.mean((single.predict(grid, 0)[0] - truth) ** 2))
    assert rmse_lcm < 0.5 * rmse_gp, (rmse_lcm, rmse_gp)
    corr = lcm.task_correlation()
    assert np.allclose(corr, corr.T) and np.allclose(np.diag(corr), 1.0)
    assert corr[0, 1] > 0.8


def test_log_output_models_log_and_needs_positive() -> None:
    X = np.linspace(0, 1, 8)[:, None]
    y = np.exp(2 * X[:, 0])
    m = LCM(X, [0] * 8, y, 1, latent=1, log_output=True).fit(restarts=1)
    mean, _ = m.predict(X, 0)
    assert np.allclose(mean, 2 * X[:, 0], atol=0.05)
    with pytest.raises(ValueError, match="positive"):
        LCM(X, [0] * 8, y - 2, 1, log_output=True)


def test_subsample_keeps_best_and_spreads() -> None:
    rng = np.random.default_rng(1)
    X = rng.random((200, 2))
    y = ((X - 0.3) ** 2).sum(1)
    idx = subsample(X, y, 20)
    assert len(idx) == 20 == len(set(idx.tolist()))
    assert set(np.argsort(y)[:10]) <= set(idx.tolist())
    assert X[idx].max(0).min() > 0.7  # the spread reaches far from the optimum
    assert np.array_equal(subsample(X[:5], y[:5], 20), np.arange(5))


def test_build_lcm_caps_training_set_and_records_tasks() -> None:
    space = SearchSpace({"x": (0.0, 1.0), "k": (1, 8)})
    ts = SearchSpace({"t": (0.0, 1.0)})
    rng = np.random.default_rng(2)
    tasks = []
    for i in range(3):
        params = [
            {"x": float(v), "k": int(k)}
            for v, k in zip(rng.random(50), rng.integers(1, 9, 50), strict=True)
        ]
        losses = [p["x"] ** 2 + i for p in params]
        tasks.append(TaskData(f"t{i}", {"t": i / 3}, params, losses))
    m = build_lcm(tasks, space, ts, latent=2, max_points=30)
    assert len(m.y) == 30 and np.bincount(m.task_index).tolist() == [10, 10, 10]
    assert [b["loss"] for b in m.info["best"]] == [min(t.losses) for t in tasks]
    assert m.info["tasks"][1] == {"id": "t1", "task": {"t": 1 / 3}}
    assert SearchSpace.from_dict(m.info["space"]).names == ("x", "k")


def test_layout_names_every_block_of_theta() -> None:
    m = small_model(tasks=3, latent=2)
    layout, theta = m.layout, m.get_theta()
    assert layout == HyperLayout(latent=2, tasks=3, dim=2, rank=1) and layout.size == len(theta)
    sl = layout.slices
    assert list(sl) == ["lengthscale", "W", "kappa", "noise"]
    assert [s.start for s in sl.values()] == [0, 4, 10, 16] and sl["noise"].stop == 19
    assert np.array_equal(theta[sl["lengthscale"]], np.log(m.lengthscale).ravel())
    assert np.array_equal(theta[sl["W"]], m.W.ravel())
    assert np.array_equal(theta[sl["kappa"]], np.log(m.kappa).ravel())
    assert np.array_equal(theta[sl["noise"]], np.log(m.noise))
    blocks = layout.unpack(theta)
    assert all(np.allclose(blocks[n], m.hyper[n]) for n in layout.shapes)
    assert np.allclose(layout.pack(blocks), theta)
    raw = layout.unpack(theta, log=False)
    assert np.array_equal(raw["noise"], np.log(m.noise))
    with pytest.raises(ValueError, match="19 hyperparameters"):
        layout.unpack(theta[:-1])
    bounds = layout.bounds()
    assert len(bounds) == 19 and bounds[sl["W"].start] == (-10.0, 10.0)
    mask = layout.task_mask(1)
    expected = np.zeros(19, bool)
    expected[[sl["W"].start + 1, sl["W"].start + 4]] = True  # W[q, 1, 0] for q = 0, 1
    expected[[sl["kappa"].start + 1, sl["kappa"].start + 4, sl["noise"].start + 1]] = True
    assert np.array_equal(mask, expected) and np.array_equal(m.task_slices(1), mask)


def test_gaussian_prior_by_block() -> None:
    layout = HyperLayout(latent=2, tasks=3, dim=2, rank=1)
    mask = layout.task_mask(2)
    prior = GaussianPrior.on_blocks(layout, np.zeros(layout.size), {"W": 0.3, "noise": 1.0}, mask)
    sl = layout.slices
    assert np.all(np.isinf(prior.std[sl["lengthscale"]])) and np.all(
        np.isinf(prior.std[sl["kappa"]])
    )
    assert set(prior.std[sl["W"]][mask[sl["W"]]]) == {0.3}
    assert np.all(np.isinf(prior.std[sl["W"]][~mask[sl["W"]]]))
    assert prior.std[sl["noise"]].tolist()[2] == 1.0
    restricted = prior.restricted(mask)
    assert len(restricted.mean) == int(mask.sum()) == 5


def test_model_file_rejects_a_block_of_the_wrong_size(tmp_path) -> None:
    m = small_model()
    data = m.to_dict()
    data["W"] = data["W"][:1]
    with pytest.raises(ValueError, match="'W'"):
        LCM.from_dict(data)


def _imports(path: Path) -> set[str]:
    """The propulate.models modules a file imports (anywhere in it, lazily or not)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found |= {n.rsplit(".", 1)[-1] for n in names if n.startswith("propulate.models.")}
    return found


def test_models_modules_import_no_cycle() -> None:
    folder = Path(__file__).resolve().parents[1] / "propulate" / "models"
    graph = {p.stem: _imports(p) for p in folder.glob("*.py") if p.stem != "__init__"}
    graph = {k: v & set(graph) for k, v in graph.items()}
    assert "lcm" not in graph["gpy_bridge"] and "gpy_bridge" in graph["lcm"]
    done: set[str] = set()

    def visit(node: str, path: tuple[str, ...]) -> None:
        assert node not in path, f"import cycle: {' -> '.join((*path, node))}"
        if node not in done:
            for nxt in graph[node]:
                visit(nxt, (*path, node))
            done.add(node)

    for node in graph:
        visit(node, ())
