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
  var PERIOD = 1000;
  function fmt(v, digits) {
    if (v === null || v === undefined) return "\u2014";
    return typeof v === "number" ? Number(v.toPrecision(digits)).toString() : String(v);
  }
  function duration(ms) {
    if (ms === null || ms === undefined) return "\u2014";
    return ms < 1000 ? Math.round(ms) + " ms" : (ms / 1000).toFixed(2) + " s";
  }
  function update(tr, row) {
    var state = tr.querySelector('[data-col="state"]');
    state.textContent = "";
    var span = document.createElement("span");
    span.className = "state state-" + row.state;
    span.textContent = row.state;
    state.appendChild(span);
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
