// The compare page: the convergence curves of 2-8 runs on one log-scaled plot (a value
// <= 0 drawn at the floor of window.decidoLog, dash.js), joined on their evaluations
// (uPlot.join); the legend under the plot names engine and seed. window.decidoDash.plots.compare is the plot (tests read it).
(function () {
  "use strict";
  var el = document.getElementById("compare");
  if (!el) return;
  var COLORS = ["#1d4ed8", "#b91c1c", "#047857", "#7c3aed", "#c2410c", "#0e7490", "#a21caf",
                "#4d7c0f"];
  var ids = el.dataset.runs.split(",");
  var dash = window.decidoDash = {plots: {}};
  Promise.all(ids.map(function (id) {
    return fetch("/dashboard/runs/" + id + "/trace.json", {credentials: "same-origin"})
      .then(function (r) { return r.json(); });
  })).then(function (views) {
    var tables = views.map(function (v) {
      // points are [evaluations, elapsed_ms, best]
      return [v.trace.map(function (p) { return p[0]; }), v.trace.map(function (p) { return p[2]; })];
    });
    var floor = window.decidoLog.floor(tables.map(function (t) { return t[1]; }));
    tables.forEach(function (t) { t[1] = window.decidoLog.clip(t[1], floor).ys; });
    var data = uPlot.join(tables);
    var series = [{label: "evaluations"}].concat(views.map(function (v, i) {
      return {label: v.engine + " seed " + v.row.seed, stroke: COLORS[i % COLORS.length],
              width: 2, spanGaps: true, points: {show: false}};
    }));
    dash.plots.compare = new uPlot({
      width: Math.max(280, el.clientWidth || 600), height: 360,
      scales: {x: {time: false}, y: {distr: 3}},
      axes: [{label: "evaluations"}, {label: "best value (log)", size: 70, values: window.decidoTicks,
                                      splits: window.decidoLog.splits}],
      series: series, legend: {show: false}
    }, data, el);
    dash.points = tables.map(function (t) { return t[0].length; });
    el.dataset.series = String(views.length);
  });
})();
