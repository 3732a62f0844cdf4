// The compare page: the convergence curves of 2-8 runs on one plot, joined on their
// evaluations (uPlot.join), on a vertical scale chosen from the data
// (window.decidoScale, dash.js: linear, log of the values, or log of their distance to the
// best value seen), named on the axis and in the note under the plot; the legend under the
// plot names engine and seed. window.decidoDash.plots.compare is the plot and
// window.decidoDash.scale the scale chosen (tests read them).
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
    // points are [evaluations, elapsed_ms, best]
    var xs = views.map(function (v) { return v.trace.map(function (p) { return p[0]; }); });
    var ys = views.map(function (v) { return v.trace.map(function (p) { return p[2]; }); });
    var maximize = views.every(function (v) { return v.goal === "maximize"; });
    var scale = window.decidoScale.choose(ys, maximize);
    var drawn = window.decidoScale.apply(scale, ys);
    var clipped = drawn.reduce(function (n, d) { return n + d.clipped; }, 0);
    var data = uPlot.join(xs.map(function (x, i) { return [x, drawn[i].ys]; }));
    var series = [{label: "evaluations"}].concat(views.map(function (v, i) {
      return {label: v.engine + " seed " + v.row.seed, stroke: COLORS[i % COLORS.length],
              width: 2, spanGaps: true,
              // a run whose trace has one point has no line to draw: its point is drawn
              points: {show: v.trace.length < 2, size: 8}};
    }));
    var log = scale.kind !== "linear";
    dash.plots.compare = new uPlot({
      width: Math.max(280, el.clientWidth || 600), height: 360,
      scales: {x: {time: false}, y: {distr: log ? 3 : 1}},
      axes: [window.decidoAxisX("evaluations"),
             {label: scale.label, size: 70, values: window.decidoTicks,
              splits: log ? window.decidoLog.splits : undefined}],
      series: series, legend: {show: false}
    }, data, el);
    dash.scale = scale;
    dash.points = xs.map(function (x) { return x.length; });
    el.dataset.series = String(views.length);
    el.dataset.scale = scale.kind;
    el.setAttribute("aria-label", "Best value against evaluations, one line per run; vertical axis: " + scale.label);
    var note = {linear: "Linear scale: the runs' best values span less than two decades.",
                log: "Log scale of the best values.",
                "log-distance": "Log scale of each best value's distance to the best value seen (" +
                  String(+scale.best.toPrecision(6)) + "), since the values are not all positive."}[scale.kind];
    if (clipped) note += " " + clipped + " points at or below 0 on this scale (the best value seen itself) are drawn at its bottom.";
    document.getElementById("compare-note").textContent = note;
  });
})();
