"""Interactive figures of the report: Plotly figures embedded as JSON, plotly.js inlined once.

A :class:`Plot` is a Plotly figure (its JSON) with a caption. The page
(:mod:`propulate.report.html`) puts plotly.js into one ``<script>`` and draws each plot with
``Plotly.newPlot`` as it scrolls into view, so the file still opens offline, needs nothing
else, and shows its first screen without waiting for the plots further down. A browser draws a
few thousand SVG points per plot fluently, not a hundred thousand: :func:`sample_runs` keeps,
within one budget per plot shared by its runs (:func:`point_budget`), every improvement of the
best loss so far and a uniform sample of the rest, and the captions say how many evaluations a
plot shows (:func:`sample_note`). A point's hover text is a template filled from the point's
values (:func:`hover_data`), so the parameters' names are written once per trace.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

#: Most evaluations drawn in one plot, shared by its runs (every improvement, then a sample).
MAX_POINTS = 5000

#: Most parameter values one plot carries (points x (parameters + 1)): a page of 30-parameter
#: tasks draws fewer points per plot, not 30 times the data.
MAX_VALUES = 60_000

#: The fewest evaluations a plot draws, however many parameters.
MIN_POINTS = 500

#: Significant digits of a parameter value in hover texts and tables.
PARAM_DIGITS = 4

#: The toolbar of every plot: no link to an online editor, PNG export kept.
PLOT_CONFIG = {"displaylogo": False, "responsive": True}


@dataclass
class Plot:
    """One interactive figure.

    Attributes
    ----------
    name : str
        Its identifier (the ``id`` of its ``<div>``, unique in the page).
    figure : str
        The Plotly figure as JSON (``fig.to_json()``).
    caption : str
        HTML shown under the plot (what it shows, what was sampled).
    height : int
        Height of the plot in pixels.
    """

    name: str
    figure: str
    caption: str = ""
    height: int = 420


def run_colour(i: int) -> str:
    """The colour of the ``i``-th run of a plot (hues spread around the circle)."""
    return f"hsl({(i * 67) % 360},65%,45%)"


def make_plot(name: str, fig: Any, caption: str = "", height: int = 420, top: int = 50) -> Plot:
    """A :class:`Plot` of a ``plotly.graph_objects.Figure`` (its layout gets the height and
    ``top`` pixels of margin above the plot area)."""
    fig.update_layout(height=height, margin={"l": 60, "r": 20, "t": top, "b": 50})
    return Plot(re.sub(r"[^A-Za-z0-9_-]", "_", name), fig.to_json(), caption, height)


def plotly_js() -> str:
    """The plotly.js bundle shipped with the ``plotly`` package (inlined once per page)."""
    from plotly.offline import get_plotlyjs

    return str(get_plotlyjs())


def plot_html(plot: Plot) -> str:
    """The ``<figure>`` of one plot: its ``<div>``, the script drawing it, its caption."""
    ident = html.escape(plot.name, quote=True)
    data = plot.figure.replace("</", "<\\/")  # a "</script>" in a label cannot end the script
    caption = f"<figcaption>{plot.caption}</figcaption>" if plot.caption else ""
    return (
        f'<figure class="plot"><div id="{ident}" class="plotly-plot" '
        f'style="height:{plot.height}px"></div>{caption}'
        f'<script type="application/json" id="{ident}-data">{data}</script></figure>'
    )


#: Milliseconds between two plots drawn in the background (the page stays responsive).
BACKGROUND_DRAW_MS = 50

#: Draws each plot of the page from its JSON block when it comes near the window (so a page
#: of many plots opens at once), then, once the page has loaded, the plots not drawn yet one
#: after the other in the background, so that a saved page, a full-page screenshot or a print
#: shows every plot without scrolling; every plot at once before printing, with ``#all`` at
#: the end of the page's address, and in a browser without ``IntersectionObserver``.
#: A browser keeps about 16 WebGL contexts alive and drops the oldest beyond them, blanking
#: its plot: a WebGL plot (parallel coordinates) away from the window is therefore replaced by
#: an image of itself (``data-still``), and drawn live again when it comes near the window
#: (with ``#all`` every plot stays live).
DRAW_SCRIPT = (
    "(function () {\n"
    "  var config = " + json.dumps(PLOT_CONFIG) + ";\n"
    "  var near = new Set();\n"
    '  var live = location.hash === "#all" || !("IntersectionObserver" in window);\n'
    '  function gl(div) { return div.dataset.gl === "1"; }\n'
    "  function still(div) {\n"
    "    if (live || !div.dataset.drawn || div.dataset.still || near.has(div)) return;\n"
    '    div.dataset.still = "pending";\n'
    "    var w = div.clientWidth || 1000, h = div.clientHeight || 450;\n"
    '    Plotly.toImage(div, {format: "png", width: w, height: h}).then(function (url) {\n'
    "      if (near.has(div)) { delete div.dataset.still; return; }\n"
    "      Plotly.purge(div);\n"
    '      div.innerHTML = "";\n'
    '      var img = document.createElement("img");\n'
    '      img.src = url; img.alt = "plot"; img.className = "plot-still";\n'
    "      div.appendChild(img);\n"
    '      div.dataset.still = "1";\n'
    "    });\n"
    "  }\n"
    "  function draw(div) {\n"
    '    if (div.dataset.still === "1") { div.innerHTML = ""; delete div.dataset.still; '
    "delete div.dataset.drawn; }\n"
    "    if (div.dataset.drawn) return;\n"
    '    div.dataset.drawn = "1";\n'
    '    var fig = JSON.parse(document.getElementById(div.id + "-data").textContent);\n'
    '    if (fig.data.some(function (t) { return t.type === "parcoords"; })) '
    'div.dataset.gl = "1";\n'
    "    var done = Plotly.newPlot(div, fig.data, fig.layout, config);\n"
    "    if (gl(div)) done.then(function () { still(div); });\n"
    "  }\n"
    '  var divs = document.querySelectorAll("div.plotly-plot");\n'
    "  function all() { divs.forEach(function (d) { if (!d.dataset.still) draw(d); }); }\n"
    "  function rest() {\n"
    "    var next = Array.prototype.find.call(divs, function (d) { return !d.dataset.drawn; });\n"
    "    if (next) { draw(next); setTimeout(rest, " + str(BACKGROUND_DRAW_MS) + "); }\n"
    "  }\n"
    '  window.addEventListener("beforeprint", all);\n'
    "  if (live) { all(); return; }\n"
    '  window.addEventListener("load", function () { setTimeout(rest, '
    + str(BACKGROUND_DRAW_MS)
    + "); });\n"
    "  var seen = new IntersectionObserver(function (entries) {\n"
    "    entries.forEach(function (e) {\n"
    "      if (e.isIntersecting) { near.add(e.target); draw(e.target); }\n"
    "      else { near.delete(e.target); if (gl(e.target)) still(e.target); }\n"
    "    });\n"
    '  }, {rootMargin: "600px 0px"});\n'
    "  divs.forEach(function (div) { seen.observe(div); });\n"
    "})();\n"
)


def short(value: Any, digits: int = PARAM_DIGITS) -> str:
    """A value as shown: floats to ``digits`` significant digits, the rest as they are."""
    if isinstance(value, float | np.floating):
        return f"{float(value):.{digits}g}" if math.isfinite(value) else str(value)
    return str(value)


def params_text(params: Mapping[str, Any]) -> str:
    """Parameters as hover lines (``name = value``, values shortened)."""
    return "<br>".join(
        f"{html.escape(str(k))} = {html.escape(short(v))}" for k, v in params.items()
    )


def _spread(values: list[Any]) -> str:
    numbers = [float(v) for v in values if isinstance(v, int | float)]
    return f"{short(min(numbers), 3)}-{short(max(numbers), 3)}" if numbers else "?"


def _repeats(details: Any) -> str:
    """A command's repeated runs: the spread of their losses, or per objective the spread of
    its values when the runs returned several (``{name: value}`` each)."""
    losses = details.get("losses") if isinstance(details, dict) else None
    if not isinstance(losses, list) or len(losses) < 2:
        return ""
    if all(isinstance(v, dict) for v in losses):
        names = list(losses[0])
        spreads = ", ".join(
            f"{html.escape(str(k))} {_spread([v.get(k) for v in losses])}" for k in names
        )
        return f"<br>repeats n={len(losses)}: {spreads}"
    values = [v for v in losses if isinstance(v, int | float)]
    return f"<br>repeats n={len(values)}: {_spread(values)}" if values else ""


def _shown(value: Any) -> str:
    """A parameter's value in a hover text: shortened, a dash when inactive or missing."""
    if value is None or (isinstance(value, float | np.floating) and math.isnan(value)):
        return "-"
    return html.escape(short(value))


def hover_data(frame: pd.DataFrame, parameters: Sequence[str] = ()) -> tuple[list[list[str]], str]:
    """What a trace's points show on hover: per evaluation its loss and status, MPI rank and
    island, repeated measurements and the given ``parameters``' values (Plotly's
    ``customdata``), and the one ``hovertemplate`` naming them, so a name is written once per
    trace and not once per point.

    Returns
    -------
    customdata : list of list of str
        One row per row of ``frame``.
    template : str
        The trace's ``hovertemplate``.
    """
    columns = list(frame.columns)
    names = [p for p in parameters if p in columns]
    rows = []
    for row in frame.itertuples(index=False):
        rec = dict(zip(columns, row, strict=True))
        loss = rec.get("loss")
        head = f"loss {short(loss, 3)}" if loss is not None and loss == loss else "no loss"
        status = str(rec.get("status"))
        if rec.get("error") and status != "ok":
            status += f": {html.escape(str(rec['error'])[:80])}"
        where = f"rank {rec.get('rank')}, island {rec.get('island')}{_repeats(rec.get('details'))}"
        rows.append([f"{head} ({status})", where, *(_shown(rec[p]) for p in names)])
    lines = ["%{customdata[0]}", "%{customdata[1]}"]
    lines += [f"{html.escape(str(p))} = %{{customdata[{i}]}}" for i, p in enumerate(names, 2)]
    return rows, "<br>".join(lines) + "<extra></extra>"


def point_budget(parameters: int) -> int:
    """Most evaluations one plot draws when each carries ``parameters`` values in its hover
    text: :data:`MAX_POINTS`, fewer for many parameters (at most :data:`MAX_VALUES` values)."""
    return max(MIN_POINTS, min(MAX_POINTS, MAX_VALUES // (parameters + 1)))


def improvements(curve: pd.DataFrame) -> np.ndarray:
    """Which rows of a :func:`propulate.runs.table.best_so_far` frame improved the best loss."""
    best = curve["best_loss"].to_numpy(dtype=float)
    previous = np.concatenate([[np.inf], np.where(np.isnan(best), np.inf, best)[:-1]])
    return ~np.isnan(best) & (best < previous)


def sample_runs(
    curves: Sequence[pd.DataFrame], limit: int = MAX_POINTS, seed: int = 0
) -> list[pd.DataFrame]:
    """At most ``limit`` rows of one plot's runs together: every row that improved its run's
    best loss so far, the rest a uniform random sample (fixed ``seed``) shared among the runs
    in proportion to their other rows, each run's rows in their original order.

    Parameters
    ----------
    curves : sequence of DataFrame
        Frames from :func:`propulate.runs.table.best_so_far`, one per run.
    limit : int
        The most rows kept in all (improvements are kept even beyond it).
    seed : int
        Seed of the sample, so the same report draws the same points.
    """
    if sum(len(c) for c in curves) <= limit:
        return list(curves)
    masks = [improvements(c) for c in curves]
    rest = [np.flatnonzero(~m) for m in masks]
    room = max(limit - sum(int(m.sum()) for m in masks), 0)
    others = sum(len(r) for r in rest)
    exact = [room * len(r) / others if others else 0.0 for r in rest]
    take = [int(x) for x in exact]
    # the rows the floors leave, to the runs with the largest remainders
    for i in sorted(range(len(rest)), key=lambda i: take[i] - exact[i])[: room - sum(take)]:
        take[i] += 1
    rng = np.random.default_rng(seed)
    out = []
    for curve, keep, r, n in zip(curves, masks, rest, take, strict=True):
        keep = keep.copy()
        if n:
            keep[rng.choice(r, size=min(n, len(r)), replace=False)] = True
        out.append(curve[keep])
    return out


def sample_rows(curve: pd.DataFrame, limit: int = MAX_POINTS, seed: int = 0) -> pd.DataFrame:
    """At most ``limit`` rows of one run's evaluations (:func:`sample_runs` of one run)."""
    return sample_runs([curve], limit, seed)[0]


def sample_note(shown: int, total: int) -> str:
    """The caption's sentence on sampling (empty when every evaluation is drawn)."""
    if shown >= total:
        return ""
    return (
        f" For a readable page {shown:,} of {total:,} evaluations are drawn: every improvement "
        "of a run's best loss, and a uniform sample of the rest, shared by the runs in "
        f"proportion to their evaluations (at most {MAX_POINTS:,} per plot, fewer when each "
        "evaluation has many parameters)."
    )


def log_axis(values: Sequence[float] | np.ndarray) -> bool:
    """Whether losses are better read on a log axis: all positive, spanning over 50x."""
    v = np.asarray([x for x in values if x is not None and math.isfinite(x)], dtype=float)
    return bool(len(v) and v.min() > 0 and v.max() / v.min() > 50)


def numeric_axis(values: Sequence[Any]) -> tuple[list[float], dict[str, Any]]:
    """Values as plot coordinates: numbers as they are; other values (categories) as their
    index in sorted order, with the axis's tick labels. Returns the coordinates and the axis
    settings (``tickvals``/``ticktext`` for categories, else empty)."""
    if all(isinstance(v, int | float | np.number) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values], {}
    labels = sorted({str(v) for v in values})
    index = {label: i for i, label in enumerate(labels)}
    return [float(index[str(v)]) for v in values], {
        "tickvals": list(range(len(labels))),
        "ticktext": labels,
    }


def log_coordinates(values: Sequence[Any]) -> tuple[list[float], dict[str, Any]] | None:
    """Positive numbers on a log scale, for an axis that has no log type of its own (parallel
    coordinates): their ``log10`` as coordinates and the axis's ticks at the powers of ten
    (with 2 and 5 times them when the values span less than two decades), labelled with the
    values themselves. ``None`` when a value is not a positive number (e.g. the ``-`` of an
    inactive parameter): such an axis stays linear."""
    if not values or not all(
        isinstance(v, int | float | np.number) and not isinstance(v, bool) and v > 0 for v in values
    ):
        return None
    coords = [math.log10(float(v)) for v in values]
    low, high = min(coords), max(coords)
    steps = (1.0,) if high - low >= 2 else (1.0, 2.0, 5.0)
    ticks = [
        math.log10(step * 10.0**k)
        for k in range(math.floor(low), math.ceil(high) + 1)
        for step in steps
        if low - 1e-9 <= math.log10(step * 10.0**k) <= high + 1e-9
    ]
    if len(ticks) < 2:  # a narrow range: its ends
        ticks = sorted({low, high})
    return coords, {"tickvals": ticks, "ticktext": [short(10.0**t, 3) for t in ticks]}


def importance(frame: pd.DataFrame, parameters: Sequence[str]) -> dict[str, float]:
    """How strongly each parameter goes with the loss, from the evaluations alone: the absolute
    rank correlation (Spearman) of a numeric parameter with the loss, the correlation ratio of
    the loss's ranks over a categorical parameter's values; 0 for a constant parameter. A
    conditional parameter is scored on the evaluations where it was active (its missing values
    left out), with at least 3 of them."""
    ok = frame[frame["loss"].notna()]
    out: dict[str, float] = {}
    for p in parameters:
        active = ok[ok[p].notna()] if p in ok else ok.iloc[:0]
        if len(active) < 3 or active[p].nunique() < 2:
            out[p] = 0.0
            continue
        values = active[p]
        rank = active["loss"].rank().to_numpy(dtype=float)
        if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            rho = np.corrcoef(values.rank().to_numpy(dtype=float), rank)[0, 1]
            out[p] = float(abs(rho)) if math.isfinite(rho) else 0.0
        else:
            groups = pd.Series(rank).groupby(values.astype(str).to_numpy())
            between = float(((groups.mean() - rank.mean()) ** 2 * groups.size()).sum())
            total = float(((rank - rank.mean()) ** 2).sum())
            out[p] = math.sqrt(between / total) if total > 0 else 0.0
    return out
