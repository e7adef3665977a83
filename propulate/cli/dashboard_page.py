"""The dashboard's page: HTML, CSS and the script that polls ``/api/state`` and redraws.

The tables are rebuilt from each answer; the best loss over time is one Plotly chart
(``/plotly.js``, served from the ``plotly`` package: no network beyond the dashboard itself)
updated with ``Plotly.react``. Without plotly.js the tables still work.
"""

from __future__ import annotations

import json

_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>propulate dashboard</title>
<style>
body { font-family: sans-serif; margin: 1.5em 2em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.bar { background: #eee; width: 120px; height: 0.8em; display: inline-block; }
.bar span { background: #4a7; height: 100%; display: block; }
.running { color: #070; } .orphaned { color: #b00; font-weight: bold; }
.stopped { color: #555; } .note { color: #666; font-size: 0.85em; }
</style></head><body>
<h1>propulate dashboard</h1>
<p class="note">Results: <code id="root"></code>. Updated <span id="updated">never</span>,
every __INTERVAL__ s; <span id="error"></span></p>
<h2>Snakemake</h2>
<p class="note">From Snakemake's own log of its newest run per config file: the jobs it planned
(outputs missing or outdated when it started), finished, running and failed.</p>
<table id="jobs"><thead><tr><th>campaign</th><th>config</th><th>started</th><th>state</th>
<th>done</th><th>running</th><th>pending</th><th>failed</th><th>per rule (done/planned)</th>
</tr></thead><tbody></tbody></table>
<h2>Runs</h2>
<table id="runs"><thead><tr><th>run</th><th>evaluations</th><th></th><th>failed</th>
<th>best loss</th><th>rate</th><th>ETA</th><th>state</th></tr></thead><tbody></tbody></table>
<h2>Best loss over time</h2>
<div id="best-plot" style="height:420px"></div>
<script src="/plotly.js"></script>
<script>
var INTERVAL = __INTERVAL_MS__;
function esc(s) {
  return String(s).replace(/[&<>"]/g, function (c) {
    return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c];
  });
}
function num(v, digits) {
  return v === null || v === undefined ? "-" : Number(v).toPrecision(digits || 3);
}
function duration(s) {
  if (s === null || s === undefined) return "-";
  s = Math.round(s);
  if (s >= 3600) return Math.floor(s / 3600) + "h" + String(Math.floor(s % 3600 / 60)).padStart(2, "0") + "m";
  if (s >= 60) return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
  return s + "s";
}
function cell(v, cls) { return "<td" + (cls ? ' class="' + cls + '"' : "") + ">" + v + "</td>"; }
function bar(done, total) {
  if (!total) return "";
  var pct = Math.min(100, 100 * done / total);
  return '<span class="bar"><span style="width:' + pct.toFixed(1) + '%"></span></span>';
}
function drawJobs(jobs) {
  document.querySelector("#jobs tbody").innerHTML = jobs.map(function (j) {
    var pending = Math.max(j.planned - j.done - j.running.length, 0);
    var rules = j.rules.map(function (r) { return esc(r.rule) + " " + r.done + "/" + r.planned; });
    return "<tr>" + cell(esc(j.campaign || "-")) + cell(esc(j.config)) + cell(esc(j.date)) +
      cell(j.active ? "running" : "ended", j.active ? "running" : "stopped") +
      cell(j.done + "/" + j.planned + " " + bar(j.done, j.planned), "num") +
      cell(j.running.length ? esc(j.running.join(", ")) : "-") + cell(pending, "num") +
      cell(j.failed.length ? esc(j.failed.join(", ")) : "-") + cell(rules.join(", ")) + "</tr>";
  }).join("") || '<tr><td colspan="9">no Snakemake log found</td></tr>';
}
function drawRuns(runs) {
  document.querySelector("#runs tbody").innerHTML = runs.map(function (r) {
    var state = r.state.split(" ")[0].replace("?", "");
    return '<tr class="run">' + cell(esc(r.path)) +
      cell(r.evaluations + "/" + (r.budget === null ? "-" : r.budget), "num evals") +
      cell(bar(r.evaluations, r.budget)) + cell(r.failures, "num") + cell(num(r.best), "num") +
      cell(r.rate === null ? "-" : num(r.rate) + "/s", "num") + cell(duration(r.eta), "num") +
      cell(esc(r.state) + (r.method ? " (" + esc(r.method) + ")" : ""), state) + "</tr>";
  }).join("") || '<tr><td colspan="8">no run directories yet</td></tr>';
}
function drawPlot(runs) {
  if (typeof Plotly === "undefined") return;
  var traces = runs.filter(function (r) { return r.best_over_time.length; }).map(function (r) {
    var pts = r.best_over_time.slice();
    if (/^running/.test(r.state)) pts.push([Date.now() / 1000, pts[pts.length - 1][1]]);
    return {x: pts.map(function (p) { return new Date(p[0] * 1000); }),
            y: pts.map(function (p) { return p[1]; }), name: r.path, mode: "lines+markers",
            line: {shape: "hv"}};
  });
  Plotly.react("best-plot", traces, {margin: {t: 20}, xaxis: {title: {text: "time"}},
    yaxis: {title: {text: "best loss"}}, legend: {font: {size: 10}}},
    {displaylogo: false, responsive: true});
}
function update() {
  fetch("/api/state", {cache: "no-store"}).then(function (r) { return r.json(); })
    .then(function (s) {
      document.getElementById("root").textContent = s.root;
      drawJobs(s.snakemake); drawRuns(s.runs); drawPlot(s.runs);
      document.getElementById("updated").textContent = new Date(s.time * 1000).toLocaleTimeString();
      document.getElementById("error").textContent = "";
    })
    .catch(function (e) { document.getElementById("error").textContent = "update failed: " + e; })
    .finally(function () { setTimeout(update, INTERVAL); });
}
update();
</script></body></html>
"""


def page(interval: float) -> str:
    """The dashboard page, polling every ``interval`` seconds."""
    return _HTML.replace("__INTERVAL_MS__", json.dumps(int(interval * 1000))).replace(
        "__INTERVAL__", f"{interval:g}"
    )
