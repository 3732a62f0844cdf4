// The compare page's runs of several objectives: their hypervolume against evaluations,
// one line per run on a linear scale, joined on their evaluations (uPlot.join); the legend
// under the plot (the page's) names engine, seed and objectives, in the colours of
// compare.js. window.decidoDash.plots.hypervolume is the plot and
// window.decidoDash.hvPoints each run's point count (the browser tests read them).
(function () {
  "use strict";
  var el = document.getElementById("compare-hv");
  if (!el) return;
  var COLORS = ["#1d4ed8", "#b91c1c", "#047857", "#7c3aed", "#c2410c", "#0e7490", "#a21caf",
                "#4d7c0f"];
  var ids = el.dataset.runs.split(",");
  var dash = window.decidoDash = window.decidoDash || {plots: {}};
  Promise.all(ids.map(function (id) {
    return fetch("/dashboard/runs/" + id + "/trace.json", {credentials: "same-origin"})
      .then(function (r) { return r.json(); });
  })).then(function (views) {
    var tables = views.map(function (v) {
      // points are [evaluations, elapsed_ms, hypervolume]
      return [v.trace.map(function (p) { return p[0]; }),
              v.trace.map(function (p) { return p[2]; })];
    });
    var series = [{label: "evaluations"}].concat(views.map(function (v, i) {
      return {label: v.engine + " seed " + v.row.seed, stroke: COLORS[i % COLORS.length],
              width: 2, spanGaps: true,
              // a run whose trace has one point has no line to draw: its point is drawn
              points: {show: v.trace.length < 2, size: 8}};
    }));
    dash.plots.hypervolume = new uPlot({
      width: Math.max(280, el.clientWidth || 600), height: 360,
      scales: {x: {time: false}},
      axes: [window.decidoAxisX("evaluations"),
             {label: "hypervolume", size: 70, values: window.decidoTicks}],
      series: series, legend: {show: false}
    }, uPlot.join(tables), el);
    dash.hvPoints = tables.map(function (t) { return t[0].length; });
    el.dataset.series = String(views.length);
  });
})();
