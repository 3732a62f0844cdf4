// Every page: the plots' tick labels (window.decidoTicks), and the runs tables, whose rows
// of queued or running runs are refreshed every second from /dashboard/runs/live.json
// (session cookie; no key in the browser) until they finish.
(function () {
  "use strict";
  // uPlot axis values: 3 significant digits, exponents for the very small and the large
  // (uPlot's default shows 1e-5 as "0" on a log axis)
  window.decidoTicks = function (u, splits) {
    return splits.map(function (v) {
      if (v === null || v === undefined) return "";
      var a = Math.abs(v);
      return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(0) : String(+v.toPrecision(3));
    });
  };
  // The horizontal axis (evaluations, milliseconds): compact labels (20k, 1.5M) with the
  // fewest significant digits that keep them apart, and room between ticks for the widest
  // of them, so they never overlap (uPlot's default wrote 1,000,000 every 50 px)
  var UNITS = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  function compact(v, digits) {
    if (v === null || v === undefined) return "";
    var a = Math.abs(v);
    for (var i = 0; i < UNITS.length; i++) {
      if (a >= UNITS[i][0]) return String(+(v / UNITS[i][0]).toPrecision(digits)) + UNITS[i][1];
    }
    return String(+v.toPrecision(digits));
  }
  window.decidoCompactTicks = function (u, splits) {
    var labels = [];
    for (var digits = 3; digits <= 15; digits++) {
      labels = splits.map(function (v) { return compact(v, digits); });
      var shown = labels.filter(function (t) { return t !== ""; });
      if (new Set(shown).size === shown.length) break;
    }
    return labels;
  };
  window.decidoAxisX = function (label) {
    return {label: label, values: window.decidoCompactTicks, space: 64};
  };
  // Log scale. A value <= 0 (log cannot show it), or below 1e-300, is drawn at a floor a
  // decade below the smallest positive value of the arrays (at least 1e-300); clip says
  // how many were. uPlot's log axis knows the decades 1e-16 to 1e16 only: values below
  // them threw "Invalid array length" and drew nothing (a run whose best reached 1e-23),
  // so the tick decades are chosen here (splits: at most about 8 ticks).
  window.decidoLog = {
    floor: function (arrays) {
      var least = Infinity;
      arrays.forEach(function (ys) {
        ys.forEach(function (y) { if (y >= 1e-300 && y < least) least = y; });
      });
      return least === Infinity ? 1e-12 : Math.max(least / 10, 1e-300);
    },
    clip: function (ys, floor) {
      var clipped = 0;
      var out = ys.map(function (y) {
        if (y !== null && !(y >= floor)) { clipped++; return floor; }
        return y;
      });
      return {ys: out, floor: floor, clipped: clipped};
    },
    splits: function (u, axisIdx, min, max) {
      var lo = Math.floor(Math.log10(min)), hi = Math.ceil(Math.log10(max));
      var step = Math.max(1, Math.ceil((hi - lo) / 8)), out = [];
      for (var e = lo; e <= hi; e += step) out.push(Math.pow(10, e));
      return out;
    }
  };
  // The vertical scale of several runs' best values, chosen from the data (the compare
  // page; the run page's log toggle asks for a log scale, of the distances when needed): "log" of the values when they are all positive and span at least SPAN decades;
  // else "log-distance", the log of each value's distance to the best value seen (the
  // least when minimizing, the greatest when maximizing), when those distances span SPAN
  // decades (a best value below zero, or reaching it); else "linear". A distance of 0
  // (the best value seen itself) is drawn at the log scale's floor (window.decidoLog).
  var SPAN = 2;
  window.decidoScale = {
    choose: function (arrays, maximize, log) {  // log: a log scale whatever the span
      var lo = Infinity, hi = -Infinity;
      arrays.forEach(function (ys) {
        ys.forEach(function (y) {
          if (y !== null && isFinite(y)) { lo = Math.min(lo, y); hi = Math.max(hi, y); }
        });
      });
      var linear = {kind: "linear", best: null, label: "best value"};
      if (lo === Infinity) return linear;
      var best = maximize ? hi : lo;
      var plain = !maximize && lo > 0;   // the values themselves, else their distances
      var least = Infinity, most = 0;
      arrays.forEach(function (ys) {
        ys.forEach(function (y) {
          if (y === null || !isFinite(y)) return;
          var d = plain ? y : Math.abs(y - best);
          if (d > 0) { least = Math.min(least, d); most = Math.max(most, d); }
        });
      });
      if (!log && (least === Infinity || Math.log10(most / least) < SPAN)) return linear;
      if (plain || (!maximize && best === 0)) return {kind: "log", best: 0, label: "best value (log scale)"};
      var text = String(+best.toPrecision(6));
      return {kind: "log-distance", best: best,
              label: "distance to best seen (" + text + "), log"};
    },
    // ys as drawn on the chosen scale (distances for "log-distance"; at the floor what log
    // cannot show): {ys, clipped}
    apply: function (scale, tables) {
      if (scale.kind === "linear") return tables.map(function (ys) { return {ys: ys, clipped: 0}; });
      var shifted = tables.map(function (ys) {
        return ys.map(function (y) {
          return y === null ? null : (scale.kind === "log" ? y : Math.abs(y - scale.best));
        });
      });
      var floor = window.decidoLog.floor(shifted);
      return shifted.map(function (ys) { return window.decidoLog.clip(ys, floor); });
    }
  };
  // Tables wider than the screen scroll inside their box (.scroll): such a box gets a
  // visible cue above it, shadows at the edges that hide columns (dash.css), and can take
  // the keyboard's focus to scroll (checked on load and on every resize).
  function scrollCues() {
    Array.prototype.forEach.call(document.querySelectorAll(".scroll"), function (box) {
      var over = box.scrollWidth > box.clientWidth + 1;
      var cue = box.previousElementSibling;
      var has = cue && cue.classList.contains("scroll-cue");
      box.classList.toggle("overflows", over);
      if (over && !has) {
        cue = document.createElement("p");
        cue.className = "scroll-cue";
        cue.textContent = "Scroll sideways for more columns \u2192";
        box.parentNode.insertBefore(cue, box);
        box.setAttribute("tabindex", "0");
        box.setAttribute("role", "region");
        var caption = box.querySelector("caption");
        box.setAttribute("aria-label", (caption ? caption.textContent + ": " : "") + "scrolls sideways");
      } else if (!over && has) {
        cue.remove();
        box.removeAttribute("tabindex");
        box.removeAttribute("role");
        box.removeAttribute("aria-label");
      }
    });
  }
  window.decidoScrollCues = scrollCues;
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", scrollCues);
  else scrollCues();
  window.addEventListener("resize", scrollCues);
  var PERIOD = 1000;
  function fmt(v, digits) {
    if (v === null || v === undefined) return "\u2014";
    return typeof v === "number" ? Number(v.toPrecision(digits)).toString() : String(v);
  }
  function duration(ms) {
    if (ms === null || ms === undefined) return "\u2014";
    return ms < 1000 ? Math.round(ms) + " ms" : (ms / 1000).toFixed(2) + " s";
  }
  function stateBadge(el, s) {
    el.textContent = "";
    var span = document.createElement("span");
    span.className = "state state-" + s;
    span.textContent = s;
    el.appendChild(span);
  }
  function loadFinal(base, show) {
    return fetch(base + "/trace.json", {credentials: "same-origin"})
      .then(function (r) { return r.json(); })
      .then(show);
  }
  // Parts of this page (by id) as the server renders them now, from one fetch of the page:
  // the result's summary of a run that ended while the page was open, a study's status and
  // trials as they change (study.js). A part missing on either side is left as it is.
  function refreshParts(ids) {
    return fetch(location.href, {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (html === null) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        ids.forEach(function (id) {
          var fresh = doc.getElementById(id), here = document.getElementById(id);
          if (fresh && here) here.replaceWith(document.importNode(fresh, true));
        });
        scrollCues();
      });
  }
  window.decidoRefreshParts = refreshParts;
  function loadEnded(base, show) {
    return loadFinal(base, show).then(function () { return refreshParts(["result-summary"]); });
  }
  // The run pages (run.js: one objective; front.js: several), what both do: formats, the
  // state shown (a run that has ended loses its cancel form), the final trace, and the
  // live events (state, onProgress(each progress document), then the final trace).
  window.decidoRun = {
    width: function (el) { return Math.max(280, el.clientWidth || 600); },
    fmt: fmt,
    duration: duration,
    setState: function (root, s) {
      stateBadge(document.getElementById("run-state"), s);
      root.dataset.state = s;
      if (s !== "queued" && s !== "running") {
        var cancel = document.getElementById("cancel-form");
        if (cancel) cancel.remove();
      }
    },
    loadFinal: loadFinal,
    watch: function (root, base, dash, onProgress, show) {
      var source = new EventSource(base + "/events");
      dash.source = source;
      source.addEventListener("state", function (e) {
        window.decidoRun.setState(root, JSON.parse(e.data).state);
      });
      source.addEventListener("progress", function (e) { onProgress(JSON.parse(e.data)); });
      function end() { source.close(); loadEnded(base, show); }
      source.addEventListener("result", end);
      source.addEventListener("error", function (e) {
        if (e.data) { end(); return; }                  // the run failed: its final document
        if (source.readyState === EventSource.CLOSED) loadEnded(base, show);  // it went away
      });
    }
  };
  function update(tr, row) {
    stateBadge(tr.querySelector('[data-col="state"]'), row.state);
    tr.querySelector('[data-col="best"]').textContent = fmt(row.best, 6);
    tr.querySelector('[data-col="evaluations"]').textContent = fmt(row.evaluations, 12);
    tr.querySelector('[data-col="duration"]').textContent = duration(row.duration_ms);
    if (!row.live) tr.removeAttribute("data-running");
  }
  function poll() {
    var rows = document.querySelectorAll("table[data-live] tr[data-running]");
    if (!rows.length) return;
    var ids = Array.prototype.map.call(rows, function (tr) { return tr.dataset.run; });
    var q = ids.map(function (id) { return "id=" + encodeURIComponent(id); }).join("&");
    fetch("/dashboard/runs/live.json?" + q, {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (body) {
        if (body) body.data.forEach(function (row) {
          var tr = document.querySelector('tr[data-run="' + row.id + '"]');
          if (tr) update(tr, row);
        });
        setTimeout(poll, PERIOD);
      })
      .catch(function () { setTimeout(poll, PERIOD * 5); });
  }
  setTimeout(poll, PERIOD);
})();
