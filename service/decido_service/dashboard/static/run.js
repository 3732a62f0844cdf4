// The run page: the convergence plot (best value against evaluations or time, log y on
// request), the profile of the best x within the bounds, and, while the run is queued or
// running, its live progress over Server-Sent Events (/dashboard/runs/{id}/events, the
// session cookie authorizes it): the curve grows, then the final trace replaces it.
// window.decidoDash exposes the plots and their data (the browser tests read point
// counts from it; the speed benchmark times drawConvergence on 100,000 points).
(function () {
  "use strict";
  var root = document.getElementById("run");
  var runId = root.dataset.run;
  var base = "/dashboard/runs/" + runId;
  var logY = document.getElementById("log-y");
  var timeX = document.getElementById("time-x");
  var convEl = document.getElementById("convergence");
  var profEl = document.getElementById("profile");
  var state = {evals: [], best: [], times: [], estimated: false, view: null};
  var dash = window.decidoDash = {plots: {}, state: state};

  var run = window.decidoRun;  // dash.js
  var width = run.width, fmt = run.fmt, duration = run.duration;
  function setState(s) { run.setState(root, s); }
  function loadFinal() { return run.loadFinal(base, showFinal); }
  // Log scale: of the values when they are all positive, else of their distance to the
  // best value (window.decidoScale, dash.js), named on the axis; what log cannot show is
  // drawn at a floor (window.decidoLog), and the note under the plot says so.
  function logSafe(ys) {
    var scale = window.decidoScale.choose([ys], root.dataset.goal === "maximize", true);
    var drawn = window.decidoScale.apply(scale, [ys])[0];
    return {ys: drawn.ys, clipped: drawn.clipped, scale: scale};
  }
  dash.logSafe = logSafe;

  function drawConvergence(xs, ys, opts) {
    opts = opts || {};
    var started = performance.now();
    if (dash.plots.convergence) dash.plots.convergence.destroy();
    var safe = opts.log ? logSafe(ys) : null;
    var plot = new uPlot({
      width: width(convEl), height: 320,
      scales: {x: {time: false}, y: {distr: opts.log ? 3 : 1}},
      axes: [window.decidoAxisX(opts.xLabel || "evaluations"),
             {label: safe ? safe.scale.label : "best value", size: 70, values: window.decidoTicks,
              splits: opts.log ? window.decidoLog.splits : undefined}],
      series: [{label: opts.xLabel || "evaluations"},
               {label: "best", stroke: "#1d4ed8", width: 2, points: {show: xs.length < 60}}],
      cursor: {drag: {x: true, y: false}}
    }, [xs, safe ? safe.ys : ys], convEl);
    dash.plots.convergence = plot;
    dash.clipped = safe ? safe.clipped : 0;
    convEl.dataset.points = String(xs.length);
    dash.lastDrawMs = performance.now() - started;
    return plot;
  }
  dash.drawConvergence = drawConvergence;

  function redraw() {
    var useTime = timeX.checked;
    var xs = useTime ? state.times : state.evals;
    drawConvergence(xs, state.best, {log: logY.checked,
                                     xLabel: useTime ? "time (ms)" : "evaluations"});
    note();
  }
  // the line under the plot: how many points it shows (as they arrive), and how to read them
  function note() {
    var n = state.evals.length;
    document.getElementById("conv-note").textContent =
      n + (n === 1 ? " point" : " points") + (timeX.checked && state.estimated
        ? "; times are estimated from evaluations at the run's mean rate (this trace was stored without them)"
        : "") + (dash.clipped ? "; " + dash.clipped + " values at or below 0 on the log scale (the best value itself, a 0) are drawn at its bottom" : "");
  }

  function drawProfile(view) {
    var result = view.result, request = view.request;
    var note = document.getElementById("profile-note");
    if (!result || !result.x) { note.textContent = "No result yet."; return; }
    var x = result.x, n = x.length, idx = new Array(n), lo = new Array(n), hi = new Array(n);
    for (var i = 0; i < n; i++) {
      idx[i] = i;
      lo[i] = request && request.bounds ? request.bounds[i][0] : null;
      hi[i] = request && request.bounds ? request.bounds[i][1] : null;
    }
    if (dash.plots.profile) dash.plots.profile.destroy();
    var dots = n <= 200;
    dash.plots.profile = new uPlot({
      width: width(profEl), height: 260, scales: {x: {time: false}},
      axes: [{label: "variable index"}, {label: "value", size: 70, values: window.decidoTicks}],
      series: [{label: "i"},
               {label: "x", stroke: "#1d4ed8", width: dots ? 0 : 1,
                points: {show: dots, size: 5, fill: "#1d4ed8"}},
               {label: "lower bound", stroke: "#9ca3af", dash: [4, 4], width: 1, points: {show: false}},
               {label: "upper bound", stroke: "#9ca3af", dash: [4, 4], width: 1, points: {show: false}}]
    }, [idx, x, lo, hi], profEl);
    profEl.dataset.points = String(n);
    note.textContent = n + " variables; hover for values, drag to zoom.";
  }

  function setFacts(best, evaluations, ms) {
    document.getElementById("run-best").textContent = fmt(best, 10);
    document.getElementById("run-evaluations").textContent = fmt(evaluations, 12);
    document.getElementById("run-duration").textContent = duration(ms);
  }

  function showFinal(view) {
    state.view = view;
    var trace = view.trace || [];
    var result = view.result;
    // points are [evaluations, elapsed_ms, best]; a trace stored before times were kept
    // has elapsed_ms null: then times are estimated at the run's mean rate
    state.evals = trace.map(function (p) { return p[0]; });
    state.best = trace.map(function (p) { return p[2]; });
    state.estimated = trace.some(function (p) { return p[1] === null; });
    var total = result && result.evaluations ? result.evaluations : 0;
    var ms = result ? result.elapsed_ms : 0;
    state.times = trace.map(function (p) {
      return state.estimated ? (total ? p[0] / total * ms : 0) : p[1];
    });
    redraw();
    drawProfile(view);
    if (result) setFacts(result.value, result.evaluations, result.elapsed_ms);
    setState(view.state);
    document.getElementById("result-json").textContent = JSON.stringify(view.result, null, 2);
    dash.finished = true;
  }


  function watch() {
    state.estimated = false;
    run.watch(root, base, dash, function (p) {
      if (p.best === null || p.best === undefined) return;
      state.evals.push(p.evaluations);
      state.best.push(p.best);
      state.times.push(p.elapsed_ms);
      setFacts(p.best, p.evaluations, p.elapsed_ms);
      if (dash.plots.convergence && !timeX.checked && !logY.checked) {
        dash.plots.convergence.setData([state.evals, state.best]);
        convEl.dataset.points = String(state.evals.length);
        note();
      } else {
        redraw();
      }
    }, showFinal);
    redraw();
  }

  logY.addEventListener("change", redraw);
  timeX.addEventListener("change", redraw);
  if (root.dataset.state === "queued" || root.dataset.state === "running") watch();
  else loadFinal();
})();
