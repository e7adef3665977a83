"""Tables and figures of a campaign, and its self-contained HTML report.

The inputs are the files the pipeline stages write (docs/contracts.md): run directories
(``evals/`` logs read with :func:`propulate.history.read_history`, ``summary.json``,
``task.json``), the LCM model file (JSON) and the TLA1 ``prediction.json``. The report is one
HTML file: tables are inline HTML, figures are matplotlib PNGs embedded as base64 ``data:`` URIs,
so it needs no other file to be read, mailed or archived.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from propulate.history import EVAL_DIR, META_COLUMNS, best_so_far, read_history

#: Columns of the aggregated summary, in order.
SUMMARY_COLUMNS = (
    "task",
    "method",
    "best_loss",
    "best_params",
    "evaluations",
    "failures",
    "wall_time",
    "runs",
)


# ------------------------------------------------------------------------ reading runs
def is_run_dir(path: str | Path) -> bool:
    """Whether ``path`` is a run directory (holds ``evals/`` or ``summary.json``)."""
    p = Path(path)
    return (p / EVAL_DIR).is_dir() or (p / "summary.json").is_file()


def expand_runs(paths: Iterable[str | Path]) -> list[Path]:
    """Run directories of ``paths``: each path itself if it is one, else its run subdirectories.

    The MLA stage writes one run directory per task under one output folder; passing the folder
    stands for all of them.

    Parameters
    ----------
    paths : iterable of path
        Run directories or folders of run directories.

    Returns
    -------
    list of Path
        The run directories, in the given order (subdirectories sorted by name).
    """
    out: list[Path] = []
    for path in paths:
        p = Path(path)
        if is_run_dir(p):
            out.append(p)
        elif p.is_dir():
            out.extend(sorted(c for c in p.iterdir() if c.is_dir() and is_run_dir(c)))
    return out


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, json.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _first(values: pd.Series, default: Any) -> Any:
    values = values.dropna()
    return values.iloc[0] if len(values) else default


def run_info(run_dir: str | Path) -> dict[str, Any]:
    """The result of one run: task, method, run, best parameters and loss, evaluations,
    failures and wall time (seconds).

    ``summary.json`` is used where it exists; the evaluation logs fill in what it lacks (a run
    that wrote no summary, e.g. a TLA1 measurement).

    Parameters
    ----------
    run_dir : path
        A run directory.

    Returns
    -------
    dict
        Keys ``task, method, run, best_params, best_loss, evaluations, failures, wall_time``.
    """
    p = Path(run_dir)
    summary = _read_json(p / "summary.json") or {}
    info: dict[str, Any] = {
        "task": summary.get("task"),
        "method": summary.get("method"),
        "run": summary.get("run"),
        "best_params": summary.get("best_params"),
        "best_loss": summary.get("best_loss"),
        "evaluations": summary.get("evaluations"),
        "failures": summary.get("failures"),
        "wall_time": summary.get("wall_time"),
    }
    if any(v is None for v in info.values()):
        df = read_history(p)
        ok = df[df["loss"].notna()] if len(df) else df
        if info["task"] is None:
            task_spec = _read_json(p / "task.json") or {}
            info["task"] = _first(df["task"], None) if "task" in df else None
            info["task"] = info["task"] or task_spec.get("id") or p.parent.name
        if info["method"] is None:
            info["method"] = (_first(df["method"], None) if "method" in df else None) or p.name
        if info["run"] is None:
            info["run"] = (_first(df["run"], None) if "run" in df else None) or p.name
        params = [c for c in df.columns if c not in _META]
        if info["best_loss"] is None and len(ok):
            best = ok.loc[ok["loss"].idxmin()]
            info["best_loss"] = float(best["loss"])
            info["best_params"] = {c: _plain(best[c]) for c in params}
        if info["evaluations"] is None:
            info["evaluations"] = int(len(df))
        if info["failures"] is None:
            info["failures"] = int(len(df) - len(ok))
        if info["wall_time"] is None:
            info["wall_time"] = (
                float((df["start"] + df["seconds"]).max() - df["start"].min()) if len(df) else 0.0
            )
    return info


_META = {
    *META_COLUMNS,
    "finish",
    "evaluation",
    "elapsed",
    "best_loss",
    "worker",
    "origin",
    "kind",
    # model predictions some methods log next to the measured loss
    "predicted_loss",
    "pred_mean",
    "predicted",
    "mu",
    "mean",
    "pred_std",
    "predicted_std",
    "std",
}


def _plain(value: Any) -> Any:
    """A JSON-safe Python scalar (numpy scalars unwrapped, NaN to None)."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def aggregate(runs: Iterable[str | Path]) -> pd.DataFrame:
    """One row per task and method: the best configuration over its runs (seeds), its loss,
    the evaluations spent and the wall time, both summed over the runs.

    Parameters
    ----------
    runs : iterable of path
        Run directories or folders of them (see :func:`expand_runs`).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SUMMARY_COLUMNS`; ``best_params`` is a JSON object string, ``wall_time``
        is in seconds. Sorted by task and method.
    """
    infos = [run_info(r) for r in expand_runs(runs)]
    rows = []
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for info in infos:
        groups.setdefault((str(info["task"]), str(info["method"])), []).append(info)
    for (task, method), members in groups.items():
        scored = [m for m in members if m["best_loss"] is not None]
        best = min(scored, key=lambda m: m["best_loss"]) if scored else None
        rows.append(
            {
                "task": task,
                "method": method,
                "best_loss": best["best_loss"] if best else float("nan"),
                "best_params": json.dumps(best["best_params"], sort_keys=True) if best else "",
                "evaluations": int(sum(m["evaluations"] or 0 for m in members)),
                "failures": int(sum(m["failures"] or 0 for m in members)),
                "wall_time": float(sum(m["wall_time"] or 0.0 for m in members)),
                "runs": len(members),
            }
        )
    df = pd.DataFrame(rows, columns=list(SUMMARY_COLUMNS))
    return df.sort_values(["task", "method"], kind="stable").reset_index(drop=True)


# ------------------------------------------------------------------------ figures
def _png(fig: Any) -> bytes:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    return buf.getvalue()


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def convergence_figure(task: str, histories: Mapping[str, pd.DataFrame]) -> bytes:
    """Best loss so far over evaluations and over wall time, one line per run of a task.

    Parameters
    ----------
    task : str
        The task id (the title).
    histories : mapping of str to DataFrame
        Run label (e.g. ``"propulate seed1"``) to its :func:`read_history` frame.

    Returns
    -------
    bytes
        The PNG image.
    """
    plt = _pyplot()
    fig, (ax_n, ax_t) = plt.subplots(1, 2, figsize=(10, 3.6))
    for label, df in histories.items():
        curve = best_so_far(df)
        if not curve["best_loss"].notna().any():
            continue
        ax_n.step(curve["evaluation"], curve["best_loss"], where="post", label=label)
        ax_t.step(curve["elapsed"], curve["best_loss"], where="post", label=label)
    ax_n.set_xlabel("evaluations")
    ax_t.set_xlabel("wall time (s)")
    for ax in (ax_n, ax_t):
        ax.set_ylabel("best loss")
        ax.grid(alpha=0.3)
    ax_n.legend(fontsize="small")
    fig.suptitle(f"task {task}: convergence")
    return _png(fig)


def _matrix(value: Any) -> np.ndarray | None:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return arr


def task_covariance(model: Mapping[str, Any]) -> tuple[np.ndarray, list[str]] | None:
    """The LCM's task covariance ``B = sum_q (W_q W_q^T + diag(kappa_q))`` and the task ids.

    Parameters
    ----------
    model : mapping
        The parsed model file of ``fit-lcm`` (``propulate-lcm/1``: ``W`` of shape
        ``(Q, tasks, rank)``, ``kappa`` of shape ``(Q, tasks)``, the task specs under
        ``info.tasks``); an explicit ``task_covariance`` matrix is accepted too.

    Returns
    -------
    (ndarray, list of str) or None
        ``(B, task_ids)``, or None when the file holds no task coefficients.
    """
    info = model.get("info") if isinstance(model.get("info"), Mapping) else {}
    specs = info.get("tasks") or model.get("tasks") or []
    tasks = [t["id"] if isinstance(t, Mapping) and "id" in t else str(t) for t in specs]
    if "task_covariance" in model:
        b = np.asarray(model["task_covariance"], dtype=float)
    elif "W" in model:
        w = np.asarray(model["W"], dtype=float)
        w = w[None] if w.ndim == 2 else w  # (Q, tasks, rank)
        n = w.shape[1]
        kappa = np.asarray(model.get("kappa", np.zeros((len(w), n))), dtype=float)
        kappa = kappa.reshape(len(w), n)
        b = np.einsum("qir,qjr->ij", w, w) + np.diag(kappa.sum(axis=0))
    else:
        return None
    if b.ndim != 2 or b.shape[0] != b.shape[1]:
        return None
    if len(tasks) != len(b):
        tasks = [str(i) for i in range(len(b))]
    return b, tasks


def model_predictions(
    model_file: str | Path, configs: Sequence[Mapping[str, Any]], task_id: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The LCM's predicted loss of ``configs`` on task ``task_id``, with a one-sigma band.

    Parameters
    ----------
    model_file : path
        A ``propulate-lcm/1`` model file whose ``info`` holds the space and the task ids
        (``fit-lcm``, or the extended model ``transfer tla2`` writes).
    configs : sequence of mapping
        Parameter configurations.
    task_id : str
        The task to predict for.

    Returns
    -------
    (mean, low, high) or None
        Arrays in loss units (``exp`` of the log-scale prediction for a ``log_output``
        model); None when the model or the task is not available.
    """
    try:
        from propulate.models.lcm import LCM
        from propulate.space import SearchSpace

        data = json.loads(Path(model_file).read_text(encoding="utf-8"))
        lcm = LCM.from_dict(data)
        info = data.get("info") or {}
        ids = [t.get("id") for t in info.get("tasks", [])]
        space = SearchSpace.from_dict(info["space"])
        params = [{n: c[n] for n in space.names} for c in configs]
        xs = space.encode_many(params)
        mean, var = lcm.predict(xs, ids.index(task_id))
    except (ImportError, OSError, KeyError, ValueError, TypeError):
        return None
    std = np.sqrt(var)
    if data.get("log_output"):
        return np.exp(mean), np.exp(mean - std), np.exp(mean + std)
    return mean, mean - std, mean + std


def correlation(cov: np.ndarray) -> np.ndarray:
    """Correlation matrix of a covariance matrix (zero variances give zero correlation)."""
    d = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    with np.errstate(divide="ignore", invalid="ignore"):
        corr = cov / np.outer(d, d)
    return np.nan_to_num(corr, nan=0.0)


def correlation_figure(corr: np.ndarray, tasks: Sequence[str]) -> bytes:
    """Heatmap of the task correlations of the LCM (PNG bytes)."""
    plt = _pyplot()
    k = len(tasks)
    fig, ax = plt.subplots(figsize=(1.0 + 0.7 * k, 0.6 + 0.6 * k))
    im = ax.imshow(corr, vmin=-1, vmax=1, cmap="RdBu_r")
    ax.set_xticks(range(k), tasks, rotation=45, ha="right")
    ax.set_yticks(range(k), tasks)
    for i in range(k):
        for j in range(k):
            ax.text(j, i, f"{corr[i, j]:.2f}", ha="center", va="center", fontsize=8)
    fig.colorbar(im, ax=ax, label="correlation")
    ax.set_title("LCM task correlation")
    return _png(fig)


def transfer_figure(
    task: str,
    tla1: tuple[Mapping[str, Any], float | None] | None,
    tla2: pd.DataFrame | None,
    model_file: str | Path | None,
) -> bytes:
    """Predicted against measured loss on one new task (PNG bytes).

    Left: the model's prediction (mean and one-sigma band, from the extended LCM that
    ``transfer tla2`` writes) against the measured loss of the TLA1 configuration and of every
    TLA2 evaluation, with the diagonal of perfect prediction. Right: TLA2's measured losses and
    its best so far per evaluation, with the measured loss of the TLA1 prediction as reference.

    Parameters
    ----------
    task : str
        The new task's id.
    tla1 : (prediction, measured loss) or None
        The TLA1 ``prediction.json`` content and the measured loss of its configuration.
    tla2 : DataFrame or None
        The TLA2 run's history.
    model_file : path or None
        The model to predict with.
    """
    plt = _pyplot()
    fig, (ax_p, ax_c) = plt.subplots(1, 2, figsize=(10, 3.6))
    spec, tla1_loss = tla1 if tla1 else ({}, None)
    points: list[tuple[str, Mapping[str, Any], float]] = []
    if spec.get("params") and tla1_loss is not None:
        points.append(("TLA1", spec["params"], float(tla1_loss)))
    if tla2 is not None and len(tla2):
        names = [c for c in tla2.columns if c not in _META]
        for _, row in tla2[tla2["loss"].notna()].iterrows():
            points.append(("TLA2", {n: _plain(row[n]) for n in names}, float(row["loss"])))
    pred = model_predictions(model_file, [p for _, p, _ in points], task) if model_file else None
    if pred is not None and points:
        mean, low, high = pred
        measured = np.array([m for _, _, m in points])
        for label, marker in (("TLA1", "*"), ("TLA2", "o")):
            sel = np.array([lab == label for lab, _, _ in points])
            if sel.any():
                ax_p.errorbar(
                    measured[sel],
                    mean[sel],
                    yerr=[mean[sel] - low[sel], high[sel] - mean[sel]],
                    fmt=marker,
                    markersize=10 if label == "TLA1" else 5,
                    label=label,
                )
        lo = float(min(measured.min(), low.min()))
        hi = float(max(measured.max(), high.max()))
        ax_p.plot([lo, hi], [lo, hi], "k:", linewidth=1, label="predicted = measured")
        ax_p.legend(fontsize="small")
    else:
        ax_p.text(0.5, 0.5, "no model predictions", ha="center", va="center")
    ax_p.set_xlabel("measured loss")
    ax_p.set_ylabel("predicted loss (LCM)")
    ax_p.grid(alpha=0.3)
    if tla2 is not None and len(tla2):
        curve = best_so_far(tla2)
        ax_c.plot(curve["evaluation"], curve["loss"], "o", label="TLA2 measured")
        ax_c.step(curve["evaluation"], curve["best_loss"], where="post", label="TLA2 best so far")
    if tla1_loss is not None and math.isfinite(tla1_loss):
        ax_c.axhline(tla1_loss, color="k", linestyle="--", label="TLA1 prediction, measured")
    ax_c.set_xlabel("TLA2 evaluation")
    ax_c.set_ylabel("loss")
    ax_c.grid(alpha=0.3)
    ax_c.legend(fontsize="small")
    fig.suptitle(f"new task {task}: transfer")
    return _png(fig)


# ------------------------------------------------------------------------ the report
def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img alt="{html.escape(alt)}" src="data:image/png;base64,{data}">'


def _table(df: pd.DataFrame) -> str:
    return df.to_html(index=False, escape=True, float_format=lambda v: f"{v:.6g}", border=0)


_CSS = """
body { font-family: sans-serif; max-width: 1100px; margin: 2em auto; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ccc; padding: 0.3em 0.7em; text-align: left; }
th { background: #f0f0f0; }
img { max-width: 100%; display: block; margin: 0.5em 0 1.5em; }
.note { color: #666; font-size: 0.9em; }
"""


def build_report(
    summary: str | Path,
    runs: Iterable[str | Path],
    out: str | Path,
    *,
    model: str | Path | None = None,
    figures: str | Path | None = None,
    title: str = "campaign",
    suite: Sequence[str] | None = None,
) -> Path:
    """Write the self-contained HTML report of a campaign.

    Parameters
    ----------
    summary : path
        The aggregated ``summary.csv`` (:func:`aggregate`).
    runs : iterable of path
        Run directories (or folders of them): evolutionary runs, MLA, TLA1, TLA2.
    out : path
        The HTML file to write.
    model : path, optional
        The LCM model file; its task correlations become a heatmap.
    figures : path, optional
        A folder to also write every figure to as ``<name>.png``.
    title : str
        The campaign name.
    suite : sequence of str, optional
        For a benchmark-suite campaign, its functions (in order): adds the methods' comparison
        (:mod:`propulate.report_suite`) and writes it as text to ``<figures>/suite.txt``.

    Returns
    -------
    Path
        ``out``.
    """
    table = pd.read_csv(summary)
    run_dirs = expand_runs(runs)
    histories: dict[str, dict[str, pd.DataFrame]] = {}
    tla1: dict[str, tuple[dict[str, Any], float | None]] = {}
    tla2: dict[str, pd.DataFrame] = {}
    tla2_models: dict[str, Path] = {}
    suite_infos: list[tuple[Path, dict[str, Any], dict[str, Any]]] = []
    for run in run_dirs:
        info = run_info(run)
        task, method = str(info["task"]), str(info["method"])
        prediction = _read_json(run / "prediction.json")
        if prediction is not None or method == "tla1":
            spec = prediction or {}
            tla1[str(spec.get("task", task))] = (spec, info["best_loss"])
            continue
        df = read_history(run)
        if method == "tla2":
            tla2[task] = df
            if (run / "model.json").is_file():
                tla2_models[task] = run / "model.json"
            continue
        if len(df):
            histories.setdefault(task, {})[f"{method} {info['run']}"] = df
            suite_infos.append((run, info, _read_json(run / "summary.json") or {}))

    figs: list[tuple[str, str, bytes]] = []  # (name, section, png)
    for task in sorted(histories):
        figs.append(
            (f"convergence_{task}", "convergence", convergence_figure(task, histories[task]))
        )
    corr_note = ""
    if model is not None and Path(model).is_file():
        cov = task_covariance(_read_json(Path(model)) or {})
        if cov is not None:
            b, ids = cov
            figs.append(("task_correlation", "model", correlation_figure(correlation(b), ids)))
        else:
            corr_note = "The model file holds no task coefficients."
    new_tasks = sorted(set(tla1) | set(tla2))
    for task in new_tasks:
        png = transfer_figure(task, tla1.get(task), tla2.get(task), tla2_models.get(task))
        figs.append((f"transfer_{task}", "transfer", png))

    suite_html = ""
    if suite is not None:
        from propulate.report_suite import load_runs, suite_section, suite_text, target_checks

        suite_html, suite_df, suite_figs = suite_section(load_runs(suite_infos), suite)
        figs += [(name, "suite", png) for name, png in suite_figs]
    if figures is not None:
        folder = Path(figures)
        folder.mkdir(parents=True, exist_ok=True)
        for name, _, png in figs:
            (folder / f"{name}.png").write_bytes(png)
        if suite is not None:
            text = suite_text(suite_df, target_checks(suite_df))
            (folder / "suite.txt").write_text(text, encoding="utf-8")

    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}: propulate campaign report</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Campaign {html.escape(title)}</h1>",
        f'<p class="note">{len(run_dirs)} runs, {int(table["evaluations"].sum())} evaluations, '
        f"{table['wall_time'].sum():.1f} s of run wall time.</p>",
        "<h2>Best configurations</h2>",
        "<p>Per task and method: the best configuration over all runs, its loss, the "
        "evaluations spent and the wall time in seconds (summed over the runs).</p>",
        _table(table),
    ]
    if suite is not None:
        parts.append(suite_html)
        parts += [_img(png, name) for name, section, png in figs if section == "suite"]
    parts += [
        "<h2>Convergence</h2>",
        "<p>Best loss so far over evaluations (left) and over wall time (right), per run.</p>",
    ]
    parts += [_img(png, name) for name, section, png in figs if section == "convergence"]
    if model is not None:
        parts.append("<h2>Multitask model (LCM)</h2>")
        parts.append("<p>Correlation between the training tasks in the fitted LCM.</p>")
        parts += [_img(png, name) for name, section, png in figs if section == "model"]
        if corr_note:
            parts.append(f'<p class="note">{html.escape(corr_note)}</p>')
    if new_tasks:
        parts.append("<h2>Transfer to new tasks</h2>")
        parts.append(
            "<p>TLA1 predicts the optimum of a new task from the training tasks' optima "
            "(zero tuning evaluations, one measurement); TLA2 tunes it with a small budget "
            "on the LCM extended by the new task, starting from the TLA1 prediction. The "
            "figures put the extended model's predictions (mean, one-sigma band) against the "
            "measured losses; TLA2's own evaluations are in the model's training data.</p>"
        )
        parts.append(_table(transfer_table(new_tasks, tla1, tla2)))
        parts += [_img(png, name) for name, section, png in figs if section == "transfer"]
    parts.append("</body></html>")
    out_path = Path(out)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text("\n".join(parts), encoding="utf-8")
    return out_path


def transfer_table(
    tasks: Sequence[str],
    tla1: Mapping[str, tuple[Mapping[str, Any], float | None]],
    tla2: Mapping[str, pd.DataFrame],
) -> pd.DataFrame:
    """Per new task: the TLA1 configuration (with the GPs' std), its measured loss, and
    TLA2's best configuration and loss."""
    rows = []
    for task in tasks:
        spec, loss = tla1.get(task, ({}, None))
        row: dict[str, Any] = {
            "task": task,
            "TLA1 params": json.dumps(spec.get("params"), sort_keys=True) if spec else "",
            "TLA1 std": json.dumps(spec.get("std"), sort_keys=True) if spec else "",
            "TLA1 measured loss": loss if loss is not None else float("nan"),
        }
        df = tla2.get(task)
        ok = df[df["loss"].notna()] if df is not None and len(df) else None
        if ok is not None and len(ok):
            best = ok.loc[ok["loss"].idxmin()]
            params = {c: _plain(best[c]) for c in df.columns if c not in _META}
            row["TLA2 best params"] = json.dumps(params, sort_keys=True)
            row["TLA2 best loss"] = float(best["loss"])
            row["TLA2 evaluations"] = len(df)
        rows.append(row)
    return pd.DataFrame(rows)
