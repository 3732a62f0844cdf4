// The study page: its charts, drawn in SVG from /dashboard/studies/{id}/trials.json (the
// study and its completed trials; session cookie, never the key), and the page kept live.
// The server reads every completed trial and sends the best so far over all of them and,
// for a study of more than 2,000, a sample (every k-th, with the best and the front's
// trials): the notes under the charts say which (dashboard/study_charts.py).
// - Best so far: each sent trial's value (a dot) and the best value so far over all (a
//   step line) against the trial number; one chart per objective.
// - Parallel coordinates: each sent trial a line through its variables (a categorical
//   one at the index of its value) and its objectives, coloured by the first objective's
//   value (dark: best); the front's trials (several objectives) drawn thick, on top.
// - Front (several objectives): the completed trials in the first two objectives, the
//   front's trials marked.
// Live: the page follows the study's Server-Sent Events (watch below; polling study.json
// every 2 s when the stream is refused); on a change it fetches the charts' data again and
// the status, front and trials parts as the server renders them (window.decidoRefreshParts,
// dash.js), at most once a second. Text from the study (names, labels, values) only ever
// goes in as text nodes.
// window.decidoDash exposes the data and the charts (the browser tests read counts there).
(function () {
  "use strict";
  var root = document.getElementById("study");
  if (!root) return;
  var base = "/dashboard/studies/" + root.dataset.study;
  var NS = "http://www.w3.org/2000/svg";
  var fmt = window.decidoRun.fmt;
  //: the most axes of variables drawn in the parallel coordinates (the trials drawn are
  //: the server's sample: dashboard/study_charts.py)
  var MAX_AXES = 40;
  // viridis, from the best value (dark) to the worst (yellow)
  var RAMP = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  var dash = window.decidoDash = {data: null, loads: 0, best: [], parallel: null, front: null};

  function node(name, attrs, parent) {
    var el = document.createElementNS(NS, name);
    Object.keys(attrs || {}).forEach(function (k) { el.setAttribute(k, String(attrs[k])); });
    if (parent) parent.appendChild(el);
    return el;
  }
  function label(parent, x, y, words, attrs) {
    var el = node("text", Object.assign({x: x, y: y}, attrs || {}), parent);
    el.textContent = words;
    return el;
  }
  function width(el) { return Math.max(320, el.clientWidth || 640); }
  function finite(v) { return typeof v === "number" && isFinite(v); }
  function range(values) {
    var lo = Infinity, hi = -Infinity;
    values.forEach(function (v) { if (finite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } });
    if (lo === Infinity) return [0, 1];
    if (lo === hi) { var pad = Math.max(1, Math.abs(lo)) / 10; return [lo - pad, hi + pad]; }
    return [lo, hi];
  }
  // a position in [a, b] of v within [lo, hi] (log: on a log scale, lo > 0)
  function scale(lo, hi, a, b, log) {
    if (log && lo > 0 && hi > lo) {
      var l0 = Math.log(lo), l1 = Math.log(hi);
      return function (v) { return a + (b - a) * (Math.log(Math.max(v, lo)) - l0) / (l1 - l0); };
    }
    return function (v) { return hi === lo ? (a + b) / 2 : a + (b - a) * (v - lo) / (hi - lo); };
  }
  function ticks(lo, hi, n) {
    var out = [];
    for (var i = 0; i < n; i++) out.push(lo + (hi - lo) * i / (n - 1));
    return out;
  }
  function colour(t) {  // t in [0, 1]: 0 the best
    t = Math.min(1, Math.max(0, t)) * (RAMP.length - 1);
    var i = Math.min(RAMP.length - 2, Math.floor(t)), f = t - i;
    var c = RAMP[i].map(function (v, k) { return Math.round(v + (RAMP[i + 1][k] - v) * f); });
    return "rgb(" + c.join(",") + ")";
  }
  function better(goal) {
    return goal === "maximize" ? function (a, b) { return a > b; } : function (a, b) { return a < b; };
  }
  function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); }
  function say(id, words) { var el = document.getElementById(id); if (el) el.textContent = words; }

  // One chart of objective k: the sampled trials' values (dots) and the best so far over
  // every completed trial (the server's line: [number, best] where it improved).
  function bestChart(box, trials, line, k, objective, w) {
    var h = 240, m = {l: 70, r: 16, t: 24, b: 40};
    var pts = trials.filter(function (t) { return finite(t.values[k]); });
    var svg = node("svg", {width: w, height: h, viewBox: "0 0 " + w + " " + h,
                           "class": "chart best", "data-points": pts.length,
                           "data-steps": line.length}, box);
    label(svg, m.l, 14, objective.name + " (" + objective.goal + ")", {"class": "title"});
    var xr = range(pts.map(function (t) { return t.number; })
      .concat(line.map(function (p) { return p[0]; })));
    var yr = range(pts.map(function (t) { return t.values[k]; })
      .concat(line.map(function (p) { return p[1]; })));
    var sx = scale(xr[0], xr[1], m.l, w - m.r), sy = scale(yr[0], yr[1], h - m.b, m.t);
    axes(svg, xr, yr, sx, sy, w, h, m, "trial number");
    pts.forEach(function (t) {
      node("circle", {cx: sx(t.number).toFixed(1), cy: sy(t.values[k]).toFixed(1), r: 2.5,
                      "class": "trial", "data-trial": t.number}, svg);
    });
    var steps = [];
    line.forEach(function (p, i) {  // a step line: level until the next improvement
      if (i) steps.push(sx(p[0]).toFixed(1) + "," + sy(line[i - 1][1]).toFixed(1));
      steps.push(sx(p[0]).toFixed(1) + "," + sy(p[1]).toFixed(1));
    });
    if (steps.length) node("polyline", {points: steps.join(" "), "class": "best-line"}, svg);
    return {points: pts.length, best: line.length ? line[line.length - 1][1] : null};
  }
  function axes(svg, xr, yr, sx, sy, w, h, m, xName) {
    node("line", {x1: m.l, y1: h - m.b, x2: w - m.r, y2: h - m.b, "class": "axis"}, svg);
    node("line", {x1: m.l, y1: m.t, x2: m.l, y2: h - m.b, "class": "axis"}, svg);
    ticks(yr[0], yr[1], 5).forEach(function (v) {
      label(svg, m.l - 6, sy(v) + 4, fmt(v, 4), {"class": "tick", "text-anchor": "end"});
    });
    ticks(xr[0], xr[1], 5).forEach(function (v) {
      label(svg, sx(v), h - m.b + 16, fmt(Math.round(v), 6), {"class": "tick", "text-anchor": "middle"});
    });
    label(svg, (m.l + w - m.r) / 2, h - 4, xName, {"class": "tick", "text-anchor": "middle"});
  }

  // What is drawn, said under each chart: all completed trials, or a sample of them.
  function drawn(data) {
    var n = data.completed, shown = data.trials.length;
    return data.sampled ? "a sample of " + shown + " of the " + n +
      " completed trials (every " + data.every + "th, with the best" +
      (data.objectives.length > 1 ? " and the front" : "") + ")" :
      n + " completed trial" + (n === 1 ? "" : "s");
  }
  function drawBest(data) {
    var box = document.getElementById("best-chart");
    clear(box);
    var w = width(box), bests = [];
    dash.best = data.objectives.map(function (o, k) {
      var shown = bestChart(box, data.trials, data.best_lines[k] || [], k, o, w);
      bests.push(o.name + " " + fmt(shown.best, 8));
      return shown;
    });
    say("best-note", data.completed ? "Line: the best value so far over all " +
        data.completed + " completed trials (best: " + bests.join(", ") + "); dots: " +
        drawn(data) + "." : "No completed trial yet: the charts fill in as trials complete.");
  }

  // The parallel coordinates: the variables' axes (their ranges), then the objectives'
  // (the values seen); the trials the server sent, coloured by the first objective.
  function drawParallel(data) {
    var box = document.getElementById("parallel");
    clear(box);
    var shownAxes = data.axes.slice(0, MAX_AXES);
    var objectives = data.objectives;
    var trials = data.trials;
    var front = {};
    (data.front || []).forEach(function (n) { front[n] = true; });
    var columns = shownAxes.map(function (a, i) {
      return {name: a.name, lo: a.lower, hi: a.upper, log: a.log, labels: a.values,
              kind: a.kind, get: function (t) { return t.x[i]; }};
    });
    objectives.forEach(function (o, k) {
      var r = range(data.trials.map(function (t) { return t.values[k]; }));
      columns.push({name: o.name + " (" + o.goal.slice(0, 3) + ")", lo: r[0], hi: r[1],
                    log: false, labels: null, objective: true,
                    get: function (t) { return t.values[k]; }});
    });
    var w = Math.max(width(box), columns.length * 70), h = 360, m = {l: 40, r: 40, t: 36, b: 40};
    var svg = node("svg", {width: w, height: h, viewBox: "0 0 " + w + " " + h,
                           "class": "chart parallel", "data-lines": trials.length,
                           "data-axes": columns.length}, box);
    var step = columns.length > 1 ? (w - m.l - m.r) / (columns.length - 1) : 0;
    columns.forEach(function (c, i) {
      c.at = m.l + step * i;
      c.y = scale(c.lo, c.hi, h - m.b, m.t, c.log);
    });
    var first = objectives[0], r0 = range(data.trials.map(function (t) { return t.values[0]; }));
    function shade(t) {
      var v = t.values[0];
      if (!finite(v)) return "#9ca3af";
      var u = (v - r0[0]) / (r0[1] - r0[0]);
      return colour(first.goal === "maximize" ? 1 - u : u);
    }
    var lines = node("g", {"class": "lines"}, svg);
    var ordered = trials.slice().sort(function (a, b) {  // the front last: on top
      return (front[a.number] ? 1 : 0) - (front[b.number] ? 1 : 0);
    });
    ordered.forEach(function (t) {
      var pts = columns.map(function (c) {
        var v = c.get(t);
        return c.at.toFixed(1) + "," + (finite(v) ? c.y(v) : h - m.b).toFixed(1);
      });
      node("polyline", {points: pts.join(" "), stroke: shade(t), "data-trial": t.number,
                        "class": front[t.number] ? "front" : "trial"}, lines);
    });
    columns.forEach(function (c, i) {
      // the names of the first and last axes stay inside the chart
      var anchor = i === 0 ? "start" : i === columns.length - 1 ? "end" : "middle";
      node("line", {x1: c.at, y1: m.t, x2: c.at, y2: h - m.b, "class": "axis"}, svg);
      label(svg, c.at + (anchor === "start" ? -6 : anchor === "end" ? 6 : 0), m.t - 18,
            c.name, {"class": "axis-name", "text-anchor": anchor});
      if (c.kind === "categorical" && c.labels.length <= 12) {  // each value at its place
        c.labels.forEach(function (words, k) {
          label(svg, c.at + 4, c.y(k) + 4, words, {"class": "tick"});
        });
        return;
      }
      var categorical = c.kind === "categorical";
      label(svg, c.at, m.t - 5, categorical ? c.labels[c.labels.length - 1] : fmt(c.hi, 4),
            {"class": "tick", "text-anchor": "middle"});
      label(svg, c.at, h - m.b + 15, categorical ? c.labels[0] : fmt(c.lo, 4),
            {"class": "tick", "text-anchor": "middle"});
    });
    dash.parallel = {lines: trials.length, axes: columns.length};
    say("parallel-note", data.completed ? "Lines: " + drawn(data) + "; colour: " +
        first.name + " (dark: best, yellow: worst)" +
        (objectives.length > 1 ? "; thick lines: the front" : "") +
        (data.axes.length > MAX_AXES ? "; the first " + MAX_AXES + " of " + data.axes.length +
         " variables" : "") + "." : "No completed trial yet.");
  }

  // The front of several objectives: the trials in the first two objectives.
  function drawFront(data) {
    var box = document.getElementById("front-chart");
    if (!box) return;
    clear(box);
    var o = data.objectives, front = {}, w = width(box), h = 340;
    var m = {l: 70, r: 16, t: 36, b: 40};
    (data.front || []).forEach(function (n) { front[n] = true; });
    var pts = data.trials.filter(function (t) { return finite(t.values[0]) && finite(t.values[1]); });
    var onFront = pts.filter(function (t) { return front[t.number]; });
    var svg = node("svg", {width: w, height: h, viewBox: "0 0 " + w + " " + h,
                           "class": "chart scatter", "data-points": pts.length,
                           "data-front": onFront.length}, box);
    var xr = range(pts.map(function (t) { return t.values[0]; }));
    var yr = range(pts.map(function (t) { return t.values[1]; }));
    var sx = scale(xr[0], xr[1], m.l, w - m.r), sy = scale(yr[0], yr[1], h - m.b, m.t);
    axes(svg, xr, yr, sx, sy, w, h, m, o[0].name + " (" + o[0].goal + ")");
    label(svg, m.l, 14, o[1].name + " (" + o[1].goal + ") against " + o[0].name,
          {"class": "title"});
    pts.forEach(function (t) {
      node("circle", {cx: sx(t.values[0]).toFixed(1), cy: sy(t.values[1]).toFixed(1),
                      r: front[t.number] ? 5 : 2.5, "data-trial": t.number,
                      "class": front[t.number] ? "front" : "trial"}, svg);
    });
    dash.front = {points: pts.length, front: onFront.length};
    say("front-note", pts.length ? onFront.length + " trials on the front (blue); dots: " +
        drawn(data) + (o.length > 2 ? "; the first two of " + o.length +
        " objectives are drawn" : "") + "." : "No completed trial yet.");
  }

  function draw(data) {
    dash.data = data;
    root.dataset.state = data.study.state;
    drawBest(data);
    drawParallel(data);
    drawFront(data);
    dash.loads++;
  }
  function load() {
    return fetch(base + "/trials.json", {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) { if (data) draw(data); });
  }

  // Live: a change (an event of the study's stream, or a poll that sees other counts)
  // asks for a refresh; refreshes run one at a time, at most once a second.
  // The charts' data is fetched again only when completed trials may have changed
  // (charts: true); a trial suggested, failed or abandoned changes the parts only.
  var live = dash.live = {pending: false, running: false, last: 0, signature: null,
                          charts: false, chartLoads: 0};
  function refresh(charts) {
    live.pending = true;
    live.charts = live.charts || charts !== false;
    if (live.running) return;
    var wait = Math.max(0, live.last + 1000 - Date.now());
    live.running = true;
    setTimeout(function () {
      var again = live.charts;
      live.pending = false;
      live.charts = false;
      live.last = Date.now();
      if (again) live.chartLoads++;
      Promise.all([again ? load() : null,
                   window.decidoRefreshParts(["study-status", "front-part", "trials-part"])])
        .catch(function () { return null; })
        .then(function () {
          live.running = false;
          if (live.pending) refresh(live.charts);
        });
    }, wait);
  }
  dash.refresh = refresh;
  function signature(study) { return JSON.stringify([study.state, study.trials]); }
  // a study that takes no more suggestions and whose trials are all finished: no more events
  function finished(study) {
    var t = study.trials || {};
    return study.state !== "active" && !t.active && !t.queued;
  }
  // Polling, when the event stream is refused (the key's streams at their cap): the
  // study's document every 2 s; a change of its state or counts refreshes.
  function poll() {
    live.mode = "polling";
    fetch(base + "/study.json", {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : r.status === 404 ? "gone" : null; })
      .then(function (study) {
        if (study === "gone") { live.mode = "gone"; return; }  // deleted meanwhile
        if (study) {
          var now = signature(study);
          if (live.signature !== null && now !== live.signature) refresh();
          live.signature = now;
          if (finished(study)) return;
        }
        setTimeout(poll, 2000);
      })
      .catch(function () { setTimeout(poll, 10000); });
  }
  // The study's Server-Sent Events (/dashboard/studies/{id}/events, the API's stream): the
  // first, "study", is the study now; "trial", "best", "state" and "finished" are changes.
  // The browser resumes a dropped stream with Last-Event-ID; the stream ends when the study
  // is finished ("finished", or a first "study" that is), and the page closes it then.
  function watch() {
    var source = new EventSource(base + "/events");
    live.source = source;
    live.mode = "events";
    source.addEventListener("study", function (e) {
      var study = JSON.parse(e.data);
      if (live.signature !== null && signature(study) !== live.signature) refresh();
      live.signature = signature(study);
      if (finished(study)) source.close();
    });
    source.addEventListener("trial", function (e) {
      live.events++;
      refresh(JSON.parse(e.data).state === "completed");
    });
    ["best", "state"].forEach(function (kind) {
      source.addEventListener(kind, function () { live.events++; refresh(); });
    });
    source.addEventListener("finished", function () {
      live.events++;
      source.close();
      refresh();
    });
    source.addEventListener("error", function () {
      // refused (not 200: the browser gives up) while the study goes on: poll instead
      if (source.readyState === EventSource.CLOSED && !(dash.data && finished(dash.data.study))) {
        poll();
      }
    });
  }
  live.events = 0;
  load().then(function () {
    if (!dash.data) return;
    live.signature = signature(dash.data.study);
    if (!finished(dash.data.study)) watch();
  });
  window.addEventListener("resize", function () { if (dash.data) draw(dash.data); });
})();
