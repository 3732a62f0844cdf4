// The run page of a run of several objectives: the front's hypervolume against evaluations
// (the run's trace; live over Server-Sent Events while the run is queued or running, from
// the progress events' hypervolume, then the final trace replaces it), and the front when
// the run has ended: 2 objectives, one scatter plot with the reference point marked; 3 or
// more, a scatter matrix (one plot per pair of objectives, x: the first of the pair). Axes
// are labelled with the objectives' names and goals; infeasible points (a front of least
// violation) have their own colour. window.decidoDash exposes the plots and their data
// (the browser tests read point counts from it): plots.hypervolume, plots.front (2
// objectives) or plots.matrix (3 or more, each with its pair); drawFront(result) draws a
// front again and lastFrontMs says how long it took.
(function () {
  "use strict";
  var root = document.getElementById("run");
  var base = "/dashboard/runs/" + root.dataset.run;
  var hvEl = document.getElementById("hypervolume");
  var frontEl = document.getElementById("front");
  var COLORS = {front: "#1d4ed8", infeasible: "#c2410c", reference: "#b91c1c"};
  var state = {evals: [], hv: [], view: null};
  var dash = window.decidoDash = {plots: {hypervolume: null, front: null, matrix: []},
                                  state: state};

  var run = window.decidoRun;  // dash.js
  var width = run.width, fmt = run.fmt, duration = run.duration;
  function setState(s) { run.setState(root, s); }
  function loadFinal() { return run.loadFinal(base, showFinal); }
  function text(id, value) {
    var el = document.getElementById(id);
    if (el) el.textContent = value;
  }

  function drawHypervolume() {
    if (dash.plots.hypervolume) dash.plots.hypervolume.destroy();
    dash.plots.hypervolume = new uPlot({
      width: width(hvEl), height: 300, scales: {x: {time: false}},
      axes: [window.decidoAxisX("evaluations"),
             {label: "hypervolume", size: 70, values: window.decidoTicks}],
      series: [{label: "evaluations"},
               {label: "hypervolume", stroke: COLORS.front, width: 2,
                points: {show: state.evals.length < 60}}],
      cursor: {drag: {x: true, y: false}}
    }, [state.evals, state.hv], hvEl);
    hvEl.dataset.points = String(state.evals.length);
    text("hv-note", state.evals.length + " points; each is the front's hypervolume at the " +
         "reference point of that moment (the front's nadir moved outward), so a curve may " +
         "step down when the front widens.");
  }

  function label(o) { return o.name + " (" + o.goal + ")"; }
  function none() { return null; }
  function dots(name, color, size, fill) {
    return {label: name, stroke: color, paths: none,
            points: {show: true, space: 0, size: size, width: 2, stroke: color, fill: fill}};
  }

  // One scatter plot: objective i across, objective j up; the front's points (feasible and
  // not), and the reference point. uPlot draws series over one ascending x: the points
  // sorted by f_i, each series null where another's point is.
  function scatter(el, result, i, j, w, h) {
    var rows = [];
    result.pareto.forEach(function (p) {
      if (p.f[i] !== null && p.f[j] !== null) rows.push([p.f[i], p.f[j], p.feasible ? 1 : 2]);
    });
    var ref = result.reference_point || [];
    if (ref[i] !== null && ref[i] !== undefined && ref[j] !== null && ref[j] !== undefined) {
      rows.push([ref[i], ref[j], 3]);
    }
    rows.sort(function (a, b) { return a[0] - b[0]; });
    var data = [rows.map(function (r) { return r[0]; })];
    for (var k = 1; k <= 3; k++) {
      data.push(rows.map(function (r) { return r[2] === k ? r[1] : null; }));
    }
    var o = result.objectives;
    var plot = new uPlot({
      width: w, height: h, scales: {x: {time: false}},
      axes: [{label: label(o[i]), values: window.decidoTicks},
             {label: label(o[j]), size: 70, values: window.decidoTicks}],
      series: [{label: label(o[i])},
               dots("front", COLORS.front, 7, COLORS.front),
               dots("infeasible", COLORS.infeasible, 7, COLORS.infeasible),
               dots("reference point", COLORS.reference, 13, "rgba(0,0,0,0)")],
      legend: {show: o.length === 2},
      cursor: {drag: {x: true, y: true, uni: 20}}
    }, data, el);
    var drawn = rows.filter(function (r) { return r[2] !== 3; }).length;
    el.dataset.points = String(drawn);
    plot.pair = [i, j];
    plot.drawn = drawn;
    return plot;
  }

  function drawFront(result) {
    var started = performance.now();
    drawPlots(result);
    dash.lastFrontMs = performance.now() - started;
  }
  dash.drawFront = drawFront;

  function drawPlots(result) {
    dash.plots.matrix.forEach(function (p) { p.destroy(); });
    if (dash.plots.front) dash.plots.front.destroy();
    dash.plots.front = null;
    dash.plots.matrix = [];
    frontEl.textContent = "";
    var note = document.getElementById("front-note");
    if (!result || !result.pareto || !result.pareto.length) {
      note.textContent = "No front: the run ended without a result.";
      return;
    }
    var m = result.objectives.length;
    var infeasible = result.pareto.some(function (p) { return !p.feasible; });
    var size = result.front_size || result.pareto.length;
    var said = (size > result.pareto.length
      ? "the first " + result.pareto.length + " of the front's " + size + " points (a page " +
        "of GET /v1/runs/{id}/front, bounded by the tier's front_page_bytes)"
      : result.pareto.length + " points") +
      (infeasible ? "; nothing feasible was found: these are the points of least violation" : "") +
      "; the reference point (" + result.reference_point.map(function (v) {
        return fmt(v, 6);
      }).join(", ") + ") is the hollow circle; hover for values, drag to zoom.";
    if (m === 1) {  // one objective given as a list: its front is its best point(s)
      note.textContent = "One objective: the front is its best value, " +
        fmt(result.pareto[0].f[0], 10) + " (" + label(result.objectives[0]) + "), at " +
        result.pareto.length + " point" + (result.pareto.length > 1 ? "s" : "") + ".";
      frontEl.dataset.points = String(result.pareto.length);
      return;
    }
    if (m === 2) {
      var cell = document.createElement("div");
      frontEl.appendChild(cell);
      dash.plots.front = scatter(cell, result, 0, 1, width(frontEl), 360);
      frontEl.dataset.points = cell.dataset.points;
      note.textContent = said;
      return;
    }
    // the lower triangle of the matrix: row j (1..m-1) against column i (0..j-1)
    var size = Math.max(220, Math.floor(width(frontEl) / (m - 1)) - 8);
    frontEl.style.gridTemplateColumns = "repeat(" + (m - 1) + ", " + size + "px)";
    for (var j = 1; j < m; j++) {
      for (var i = 0; i < m - 1; i++) {
        var box = document.createElement("div");
        box.className = "cell";
        frontEl.appendChild(box);
        if (i < j) dash.plots.matrix.push(scatter(box, result, i, j, size, size));
      }
    }
    frontEl.dataset.points = String(result.pareto.length);
    frontEl.dataset.pairs = String(dash.plots.matrix.length);
    note.textContent = dash.plots.matrix.length + " pairs of objectives; " + said +
      " Blue: the front" + (infeasible ? ", orange: infeasible points" : "") + ".";
  }

  function setFacts(hv, size, evaluations, ms) {
    text("run-hv", fmt(hv, 10));
    text("run-front-size", size === null || size === undefined ? "\u2014" : String(size));
    text("run-evaluations", fmt(evaluations, 12));
    text("run-duration", duration(ms));
  }

  function showFinal(view) {
    state.view = view;
    var trace = view.trace || [];  // [evaluations, elapsed_ms, hypervolume]
    state.evals = trace.map(function (p) { return p[0]; });
    state.hv = trace.map(function (p) { return p[2]; });
    drawHypervolume();
    var result = view.result;
    // the front's points drawn: the first page of its own endpoint (view.front)
    drawFront(result && Object.assign({}, result, {pareto: view.front ? view.front.data : []}));
    if (result) {
      setFacts(result.hypervolume, result.front_size === undefined ? null : result.front_size,
               result.evaluations, result.elapsed_ms);
      var choose = document.getElementById("choose-front");
      if (choose && result.front_size) choose.hidden = false;
    }
    setState(view.state);
    text("result-json", JSON.stringify(view.result, null, 2));
    dash.finished = true;
  }


  function watch() {
    run.watch(root, base, dash, function (p) {
      setFacts(p.hypervolume, p.front_size, p.evaluations, p.elapsed_ms);
      if (p.hypervolume === null || p.hypervolume === undefined) return;
      state.evals.push(p.evaluations);
      state.hv.push(p.hypervolume);
      dash.plots.hypervolume.setData([state.evals, state.hv]);
      hvEl.dataset.points = String(state.evals.length);
    }, showFinal);
    drawHypervolume();
  }

  if (root.dataset.state === "queued" || root.dataset.state === "running") watch();
  else loadFinal();
})();
