(function () {
  "use strict";
  var el = document.getElementById("perfgate-data");
  if (!el || typeof Chart === "undefined") { return; }
  document.documentElement.classList.add("js");
  var data = JSON.parse(el.textContent);
  var colour = { baseline: "#4e79a7", candidate: "#e8590c", history: "#4e79a7", band: "rgba(78, 121, 167, 0.18)" };
  Chart.defaults.font.family = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
  Chart.defaults.font.size = 12;
  Chart.defaults.color = "#1f2328";
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.responsive = true;

  function num(x) {
    if (x === null || x === undefined) { return "—"; }
    var a = Math.abs(x);
    if (a === 0) { return "0"; }
    if (a >= 100) { return x.toFixed(0); }
    return x.toPrecision(3);
  }
  function pct(x) {
    var p = 100 * x;
    return (p >= 99 || p < 1 ? String(Math.round(p * 100) / 100) : p.toFixed(0)) + "%";
  }
  // padded widens a value axis by a tenth of its range each way, but not
  // below zero when no value is.
  function padded(scale) {
    var r = scale.max - scale.min || Math.abs(scale.max) || 1;
    var lo = scale.min - 0.1 * r;
    scale.min = scale.min >= 0 && lo < 0 ? 0 : lo;
    scale.max += 0.1 * r;
  }
  // valueAxis is a chart's value axis: the range the report decided
  // (axes.go: from zero, or spanning at least half its largest value, a
  // share within 0-100%), else padded around the data.
  function valueAxis(c) {
    var y = { type: "linear", title: axis(c.y_title) };
    if (c.y_axis) { y.min = c.y_axis.lo; y.max = c.y_axis.hi; } else { y.afterDataLimits = padded; }
    return y;
  }
  // tick is a tick's label: three significant figures, no trailing zeros.
  function tick(v) { return String(Number(Number(v).toPrecision(3))); }
  function axis(text) { return { display: true, text: text, font: { weight: "bold" } }; }
  function plugins(c) {
    return {
      title: { display: true, text: c.title, font: { size: 14, weight: "bold" } },
      subtitle: { display: !!(c.subtitle || c.y_note), text: [c.subtitle, c.y_note].filter(function (t) { return !!t; }), color: "#59636e" },
      legend: { position: "bottom", labels: { boxWidth: 14, filter: function (item, d) { var r = d.datasets[item.datasetIndex].role; return r !== "lo" && r.indexOf("-median") < 0; } } }
    };
  }
  function line(role) {
    var col = colour[role.replace("-median", "")] || colour.baseline;
    var ds = { borderColor: col, backgroundColor: col, borderWidth: 2, pointRadius: 0, fill: false };
    if (role === "baseline" || role === "candidate") { ds.borderWidth = 1.5; ds.pointRadius = 4; ds.pointHoverRadius = 6; }
    if (role.indexOf("-median") > 0) { ds.borderDash = [6, 4]; ds.borderWidth = 1.5; ds.pointRadius = 0; ds.pointHitRadius = 0; }
    return ds;
  }

  function cdf(c) {
    var datasets = c.series.map(function (s) {
      var ds = line(s.role);
      ds.label = s.label;
      ds.role = s.role;
      ds.data = s.points;
      ds.pointRadius = 0;
      ds.pointHitRadius = 6;
      ds.borderWidth = 2.5;
      return ds;
    });
    return {
      type: "line",
      data: { datasets: datasets },
      options: {
        interaction: { mode: "nearest", intersect: false },
        scales: {
          x: cdfAxis(c),
          y: { type: "linear", min: 0, max: 1, title: axis(c.y_title), ticks: { stepSize: 0.2, callback: function (v) { return Math.round(100 * v) + "%"; } } }
        },
        plugins: Object.assign(plugins(c), {
          tooltip: { callbacks: { label: function (ctx) { return ctx.dataset.label + ": " + pct(ctx.parsed.y) + " at or below " + num(ctx.parsed.x) + " ms"; } } }
        })
      }
    };
  }

  // cdfAxis is a CDF's log-scaled x axis over the range and at the ticks
  // the report decided (axes.go: few enough that their labels stay apart).
  function cdfAxis(c) {
    var x = { type: "logarithmic", title: axis(c.x_title), ticks: { maxRotation: 0, autoSkip: true, autoSkipPadding: 12, callback: function (v) { return tick(v); } } };
    if (c.x_axis) { x.min = c.x_axis.lo; x.max = c.x_axis.hi; }
    if (c.x_ticks && c.x_ticks.length) {
      x.afterBuildTicks = function (scale) {
        scale.ticks = c.x_ticks.filter(function (v) { return v >= scale.min && v <= scale.max; }).map(function (v) { return { value: v }; });
      };
    }
    return x;
  }

  function reps(c) {
    var n = 1;
    var datasets = c.series.map(function (s) {
      var ds = line(s.role);
      ds.label = s.label;
      ds.role = s.role;
      ds.data = s.points;
      s.points.forEach(function (p) { if (p.x > n) { n = p.x; } });
      return ds;
    });
    return {
      type: "line",
      data: { datasets: datasets },
      options: {
        interaction: { mode: "nearest", intersect: true },
        scales: {
          x: { type: "linear", min: 0.5, max: n + 0.5, title: axis(c.x_title),
               afterBuildTicks: function (scale) {
                 var step = Math.max(1, Math.ceil(n / 20)), ticks = [];
                 for (var i = 1; i <= n; i += step) { ticks.push({ value: i }); }
                 scale.ticks = ticks;
               } },
          y: valueAxis(c)
        },
        plugins: Object.assign(plugins(c), {
          tooltip: { callbacks: { label: function (ctx) { return ctx.dataset.label + (ctx.dataset.label.indexOf("median") < 0 ? " #" + ctx.parsed.x : "") + ": " + num(ctx.parsed.y); } } }
        })
      }
    };
  }

  function trend(c) {
    var labels = c.labels || [];
    var datasets = c.series.map(function (s) {
      var ys = labels.map(function () { return null; });
      s.points.forEach(function (p) { if (p.x >= 0 && p.x < ys.length) { ys[p.x] = p.y; } });
      var ds;
      if (s.role === "lo" || s.role === "hi") {
        ds = { borderWidth: 0, pointRadius: 0, pointHitRadius: 0, backgroundColor: colour.band, borderColor: colour.band,
               fill: s.role === "hi" ? "-1" : false, spanGaps: false };
      } else if (s.role === "candidate") {
        ds = { borderColor: colour.candidate, backgroundColor: colour.candidate, showLine: false, pointRadius: 6, pointHoverRadius: 8, pointStyle: "rectRot" };
      } else {
        ds = { borderColor: colour.history, backgroundColor: colour.history, borderWidth: 2, pointRadius: 3, pointHoverRadius: 5, spanGaps: true };
      }
      ds.label = s.label;
      ds.role = s.role;
      ds.data = ys;
      return ds;
    });
    return categoryLine(c, labels, datasets, 8, {
            filter: function (item) { return item.dataset.label !== "" && item.parsed.y !== null; },
            callbacks: {
              afterTitle: function (items) { var i = items.length ? items[0].dataIndex : -1; return c.notes && c.notes[i] ? c.notes[i] : ""; },
              label: function (ctx) {
                if (ctx.dataset.label === "95% interval") {
                  var lo = ctx.chart.data.datasets[ctx.datasetIndex - 1].data[ctx.dataIndex];
                  return "95% interval: " + num(lo) + " to " + num(ctx.parsed.y);
                }
                return ctx.dataset.label + ": " + num(ctx.parsed.y);
              }
            }
          });
  }

  // categoryLine is a line chart over the category labels (history entries,
  // rounds), with the chart's axes, legend and the given tooltip.
  function categoryLine(c, labels, datasets, skipPadding, tooltip) {
    return {
      type: "line",
      data: { labels: labels, datasets: datasets },
      options: {
        interaction: { mode: "index", intersect: false },
        scales: {
          x: { type: "category", title: axis(c.x_title), ticks: { maxRotation: 0, autoSkip: true, autoSkipPadding: skipPadding } },
          y: valueAxis(c)
        },
        plugins: Object.assign(plugins(c), { tooltip: tooltip })
      }
    };
  }

  function rounds(c) {
    var labels = c.labels || [];
    var datasets = c.series.map(function (s) {
      var ys = labels.map(function () { return null; });
      s.points.forEach(function (p) { var i = p.x - 1; if (i >= 0 && i < ys.length) { ys[i] = p.y; } });
      var ds = line(s.role);
      ds.label = s.label;
      ds.role = s.role;
      ds.data = ys;
      ds.spanGaps = true;
      return ds;
    });
    function value(chart, role, i) {
      var ds = chart.data.datasets.filter(function (d) { return d.role === role; })[0];
      return ds ? ds.data[i] : null;
    }
    return categoryLine(c, labels, datasets, 6, {
            filter: function (item) { return item.parsed.y !== null; },
            callbacks: {
              title: function (items) { var i = items.length ? items[0].dataIndex : -1; return i >= 0 ? c.x_title.split(" ")[0] + " " + (i + 1) : ""; },
              afterTitle: function (items) { var i = items.length ? items[0].dataIndex : -1; return c.notes && c.notes[i] ? c.notes[i] : ""; },
              label: function (ctx) { return ctx.dataset.label + ": " + num(ctx.parsed.y); },
              footer: function (items) {
                if (!items.length) { return ""; }
                var b = value(items[0].chart, "baseline", items[0].dataIndex), k = value(items[0].chart, "candidate", items[0].dataIndex);
                return b !== null && k !== null && b !== 0 ? "candidate ÷ base: " + (k / b).toFixed(3) : "";
              }
            }
          });
  }

  // present are a series' points that a chart can place (a missing value
  // is null), each with its index: the offered load it was measured at.
  function present(points) {
    var out = [];
    points.forEach(function (p, i) { if (p.x !== null && p.y !== null) { out.push({ x: p.x, y: p.y, i: i }); } });
    return out;
  }

  // curve is a sweep's latency against its achieved output throughput:
  // each side's p99 solid and p50 dashed (role "-p50"), latency on a log
  // scale; the tooltip names the offered load of the point.
  function curve(c) {
    var datasets = c.series.map(function (s) {
      var side = s.role.replace("-p50", "");
      var col = colour[side] || colour.baseline;
      var ds = { label: s.label, role: s.role, data: present(s.points), borderColor: col, backgroundColor: col,
                 borderWidth: 2, pointRadius: 4, pointHoverRadius: 6, showLine: true, fill: false };
      if (s.role !== side) { ds.borderDash = [6, 4]; ds.borderWidth = 1.5; ds.pointRadius = 3; ds.pointStyle = "rect"; }
      return ds;
    });
    return {
      type: "scatter",
      data: { datasets: datasets },
      options: {
        interaction: { mode: "nearest", intersect: true },
        scales: {
          x: { type: "linear", title: axis(c.x_title), afterDataLimits: padded },
          y: logAxis(c.y_title)
        },
        plugins: Object.assign(plugins(c), {
          legend: { position: "bottom", labels: { boxWidth: 14 } },
          tooltip: { callbacks: {
            title: function (items) { var p = items.length ? items[0].raw : null; return p && c.labels && c.labels[p.i] ? "offered " + c.labels[p.i][0] : ""; },
            label: function (ctx) { return ctx.dataset.label + ": " + num(ctx.parsed.y) + " ms at " + num(ctx.parsed.x) + " tok/s"; }
          } }
        })
      }
    };
  }

  // logAxis is a logarithmic axis padded by a quarter either way (around
  // the values of also, when given) and ticked at 1, 2 and 5 times a power
  // of ten; at its ends when fewer of those fall in it.
  function logAxis(title, also) {
    return {
      type: "logarithmic", title: axis(title), ticks: { callback: function (v) { return num(v); } },
      afterDataLimits: function (s) {
        var extra = (also || []).filter(function (v) { return v !== null && v > 0 && isFinite(v); });
        if (!(s.min > 0) || !isFinite(s.max)) { s.min = extra.length ? extra[0] : 1; s.max = extra.length ? extra[0] : 10; }
        extra.forEach(function (v) { s.min = Math.min(s.min, v); s.max = Math.max(s.max, v); });
        // Widened, the ends stay finite and above zero (a subnormal
        // divided, or the largest float multiplied, would not).
        s.min = Math.max(s.min / 1.25, Number.MIN_VALUE);
        s.max = Math.min(s.max * 1.25, Number.MAX_VALUE);
      },
      afterBuildTicks: function (s) {
        var ticks = [];
        // Bounded by a count (a float64 has 633 decades), never by a value
        // alone: an end of 0 or Infinity would spin forever.
        var first = Math.floor(Math.log10(s.min));
        for (var i = 0; i < 640 && isFinite(first) && Math.pow(10, first + i) <= s.max; i++) {
          var e = first + i;
          [1, 2, 5].forEach(function (m) { var v = m * Math.pow(10, e); if (v >= s.min && v <= s.max) { ticks.push({ value: v }); } });
        }
        s.ticks = ticks.length >= 2 ? ticks : [{ value: s.min }, { value: s.max }];
      }
    };
  }

  // capacity is a capacity search's probes: x the load and y the worst SLO
  // margin, both log-scaled; held probes filled, broken ones hollow; a
  // dashed line at a margin of 1, and each side's [holds, breaks) shaded
  // (its "-band" series: two x values, null for an open end).
  function capacity(c) {
    var bands = [], datasets = [], ends = [];
    c.series.forEach(function (s) {
      var side = s.role.replace("-broken", "").replace("-band", "");
      var col = colour[side] || colour.baseline;
      if (s.role.indexOf("-band") > 0) {
        bands.push({ lo: s.points[0] ? s.points[0].x : null, hi: s.points[1] ? s.points[1].x : null, colour: col });
        ends.push(bands[bands.length - 1].lo, bands[bands.length - 1].hi);
        return;
      }
      var broken = s.role.indexOf("-broken") > 0;
      datasets.push({ label: s.label, role: s.role, data: present(s.points), borderColor: col, borderWidth: 2,
                      backgroundColor: broken ? "rgba(255, 255, 255, 0)" : col, pointRadius: 5, pointHoverRadius: 7,
                      pointStyle: side === "candidate" ? "rectRot" : "circle" });
    });
    var shade = {
      id: "capacityBands",
      beforeDatasetsDraw: function (chart) {
        var x = chart.scales.x, y = chart.scales.y, a = chart.chartArea, g = chart.ctx;
        g.save();
        bands.forEach(function (b) {
          var left = b.lo === null ? a.left : Math.max(a.left, x.getPixelForValue(b.lo));
          var right = b.hi === null ? a.right : Math.min(a.right, x.getPixelForValue(b.hi));
          g.globalAlpha = 0.14;
          g.fillStyle = b.colour;
          g.fillRect(left, a.top, Math.max(right - left, 2), a.bottom - a.top);
        });
        g.globalAlpha = 1;
        var one = y.getPixelForValue(1);
        if (one >= a.top && one <= a.bottom) {
          g.strokeStyle = "#cf222e";
          g.lineWidth = 1.5;
          g.setLineDash([6, 4]);
          g.beginPath();
          g.moveTo(a.left, one);
          g.lineTo(a.right, one);
          g.stroke();
        }
        g.restore();
      }
    };
    return {
      type: "scatter",
      data: { datasets: datasets },
      plugins: [shade],
      options: {
        interaction: { mode: "nearest", intersect: true },
        scales: {
          x: logAxis(c.x_title, ends),
          y: logAxis(c.y_title, [1])
        },
        plugins: Object.assign(plugins(c), {
          legend: { position: "bottom", labels: { boxWidth: 14 } },
          tooltip: { callbacks: { label: function (ctx) { return ctx.dataset.label + ": " + num(ctx.parsed.x) + " load, margin " + num(ctx.parsed.y); } } }
        })
      }
    };
  }

  // frontier is the quality-cost frontier (perfgate report --frontier): a
  // scatter of configurations, x a figure at capacity (c.x_unit; c.lower
  // when lower is better), y the accuracy. The Pareto-optimal points are
  // filled and joined by the frontier's steps (c.step), the dominated ones
  // hollow; a triangle is a censored capacity, whose x is a bound. Each
  // point has its accuracy's interval as a bar and its label beside it.
  function frontier(c) {
    var opt = colour.candidate, dom = colour.baseline;
    function shape(p) { return p.bound ? "triangle" : "circle"; }
    var optimal = c.points.filter(function (p) { return p.optimal; });
    var dominated = c.points.filter(function (p) { return !p.optimal; });
    var datasets = [
      { label: "frontier", role: "step", data: c.step, showLine: true, borderColor: opt, borderWidth: 1.5, pointRadius: 0, pointHitRadius: 0, fill: false },
      { label: "Pareto-optimal", role: "optimal", data: optimal, backgroundColor: opt, borderColor: opt, borderWidth: 2, pointRadius: 6, pointHoverRadius: 8, pointStyle: optimal.map(shape) },
      { label: "dominated", role: "dominated", data: dominated, backgroundColor: "#ffffff", borderColor: dom, borderWidth: 2, pointRadius: 6, pointHoverRadius: 8, pointStyle: dominated.map(shape) }
    ];
    var ylo = 1, yhi = 0;
    c.points.forEach(function (p) { ylo = Math.min(ylo, p.lo); yhi = Math.max(yhi, p.hi); });
    var yr = Math.max(yhi - ylo, 0.05);
    function x(v) { return c.x_unit === "$/Mtok" ? "$" + (v >= 0.1 ? v.toFixed(2) : num(v)) + "/Mtok" : num(v) + " " + c.x_unit; }
    function share(v) { return v.toFixed(2); }
    var marks = {
      id: "frontierMarks",
      afterDatasetsDraw: function (chart) {
        var g = chart.ctx, sx = chart.scales.x, sy = chart.scales.y, area = chart.chartArea;
        g.save();
        g.font = "11px " + Chart.defaults.font.family;
        g.textBaseline = "bottom";
        var placed = [];
        // label writes text beside (px, py), above it or, where an earlier
        // label is in the way, a line further down or up.
        function label(text, px, py) {
          var w = g.measureText(text).width, right = px + 10 + w > area.right;
          var x0 = right ? px - 10 - w : px + 10;
          var offsets = [-4, 16, -18, 30, -32, 44];
          for (var k = 0; k < offsets.length; k++) {
            var y1 = py + offsets[k], clash = placed.some(function (b) { return x0 < b.x1 && b.x0 < x0 + w && y1 - 12 < b.y1 && b.y1 - 12 < y1; });
            if (!clash || k === offsets.length - 1) {
              placed.push({ x0: x0, x1: x0 + w, y1: y1 });
              g.textAlign = "left";
              g.fillText(text, x0, y1);
              return;
            }
          }
        }
        chart.data.datasets.forEach(function (ds, i) {
          if (ds.role === "step" || !chart.isDatasetVisible(i)) { return; }
          ds.data.forEach(function (p) {
            var px = sx.getPixelForValue(p.x), top = sy.getPixelForValue(p.hi), bottom = sy.getPixelForValue(p.lo);
            g.strokeStyle = ds.borderColor;
            g.lineWidth = 1;
            g.beginPath();
            g.moveTo(px, top); g.lineTo(px, bottom);
            g.moveTo(px - 4, top); g.lineTo(px + 4, top);
            g.moveTo(px - 4, bottom); g.lineTo(px + 4, bottom);
            g.stroke();
            g.fillStyle = "#1f2328";
            label(p.label, px, sy.getPixelForValue(p.y));
          });
        });
        g.restore();
      }
    };
    return {
      type: "scatter",
      data: { datasets: datasets },
      plugins: [marks],
      options: {
        interaction: { mode: "nearest", intersect: true },
        scales: {
          x: { type: c.x_log ? "logarithmic" : "linear", title: axis(c.x_title),
               afterDataLimits: function (scale) {
                 if (c.x_log) { scale.min /= 1.4; scale.max *= 1.4; } else { padded(scale); scale.max += 0.1 * (scale.max - scale.min); }
               } },
          y: { type: "linear", title: axis(c.y_title), min: Math.max(0, Math.floor(20 * (ylo - 0.1 * yr)) / 20), max: Math.min(1, Math.ceil(20 * (yhi + 0.1 * yr)) / 20),
               ticks: { callback: function (v) { return share(v); } } }
        },
        plugins: Object.assign(plugins(c), {
          tooltip: {
            filter: function (item) { return item.dataset.role !== "step"; },
            callbacks: {
              title: function (items) { return items.length ? items[0].raw.label : ""; },
              label: function (ctx) {
                var p = ctx.raw;
                return ["accuracy " + share(p.y) + " [Wilson 95% " + share(p.lo) + ", " + share(p.hi) + "]",
                        (p.bound ? p.bound + " " : "") + x(p.x) + (p.bound ? " (the capacity search was censored)" : ""),
                        p.optimal ? "Pareto-optimal" : "dominated"];
              }
            }
          }
        })
      }
    };
  }


  // history is a metric on the history site (perfgate report --history):
  // every run's median with its 95% band, promotions as filled points and
  // nightly records as small ones, change points as triangles (red worse,
  // green better), identity changes as dashed lines; a point opens its
  // commit where the site knows the repository.
  function history(c) {
    var runs = data.runs || [];
    function pts(arr) { var out = []; (arr || []).forEach(function (y, i) { if (y !== null) { out.push({ x: i, y: y }); } }); return out; }
    function run(i) {
      var r = runs[i];
      if (!r) { return ""; }
      return r.d + (r.c ? " · " + r.c : "") + (r.k === "p" ? " · promotion" : r.k === "r" ? " · nightly record" : "") +
        (r.t ? " · tag " + r.t : "") + (r.p ? " · PR #" + r.p : "");
    }
    var med = pts(c.y);
    var changes = c.changes || [];
    var idents = data.identities || [];
    var datasets = [
      { label: "", role: "lo", data: pts(c.lo), borderWidth: 0, pointRadius: 0, pointHitRadius: 0, backgroundColor: colour.band, borderColor: colour.band, fill: false },
      { label: "95% interval", role: "hi", data: pts(c.hi), borderWidth: 0, pointRadius: 0, pointHitRadius: 0, backgroundColor: colour.band, borderColor: colour.band, fill: "-1" },
      { label: "median (filled: promotion)", role: "history", data: med, borderColor: colour.history, backgroundColor: colour.history, borderWidth: 1.2,
        // Thousands of runs: the line alone, promotions as small dots.
        pointRadius: med.map(function (p) { var prom = runs[p.x] && runs[p.x].k === "p"; return runs.length > 300 ? (prom ? 1.5 : 0) : (prom ? 3.5 : 1.2); }),
        pointHoverRadius: 5 },
      { label: "change point", role: "change", data: changes.map(function (ch) { return { x: ch.i, y: c.y[ch.i] }; }), showLine: false,
        pointStyle: "triangle", pointRadius: 8, pointHoverRadius: 10,
        backgroundColor: changes.map(function (ch) { return ch.worse ? "#b42318" : "#1a7f37"; }),
        borderColor: changes.map(function (ch) { return ch.worse ? "#b42318" : "#1a7f37"; }) }
    ];
    var marks = {
      id: "identities",
      afterDatasetsDraw: function (chart) {
        var g = chart.ctx, sx = chart.scales.x, area = chart.chartArea;
        g.save();
        g.strokeStyle = "#8250df"; g.fillStyle = "#8250df"; g.setLineDash([4, 3]); g.lineWidth = 1;
        idents.forEach(function (id) {
          var px = sx.getPixelForValue(id.i - 0.5);
          if (px < area.left || px > area.right) { return; }
          g.beginPath(); g.moveTo(px, area.top); g.lineTo(px, area.bottom); g.stroke();
        });
        // Release tags: a solid line and the tag's name at the top.
        g.setLineDash([]); g.strokeStyle = "#1a7f37"; g.fillStyle = "#1a7f37"; g.font = "11px sans-serif"; g.textAlign = "left";
        runs.forEach(function (r, i) {
          if (!r.t) { return; }
          var px = sx.getPixelForValue(i);
          if (px < area.left || px > area.right) { return; }
          g.beginPath(); g.moveTo(px, area.top); g.lineTo(px, area.bottom); g.stroke();
          g.fillText(r.t, px + 3, area.top + 10);
        });
        g.restore();
      }
    };
    function notesAt(i) {
      var out = [];
      changes.forEach(function (ch) { if (ch.i === i) { out.push("change point: " + num(ch.before) + " → " + num(ch.after) + " (" + ch.text + ", " + (ch.worse ? "worse" : "better") + ")"); } });
      idents.forEach(function (id) { if (id.i === i) { out.push("identity: " + id.text); } });
      return out;
    }
    return {
      type: "line",
      data: { datasets: datasets },
      plugins: [marks],
      options: {
        parsing: true,
        interaction: { mode: "nearest", axis: "x", intersect: false },
        // A click opens the run's commit; with Shift its workflow run (its
        // report), with Alt its pull request, where the history knows them.
        onClick: function (e, items, chart) {
          if (!items.length) { return; }
          var p = chart.data.datasets[items[0].datasetIndex].data[items[0].index];
          var r = p ? runs[p.x] : null;
          if (!r) { return; }
          var ev = e.native || {};
          if (ev.shiftKey) {
            if (r.u && /^https:\/\//.test(r.u)) { window.location.href = r.u; }
          } else if (ev.altKey) {
            if (data.repo && r.p) { window.location.href = data.repo + "/pull/" + r.p; }
          } else if (data.repo && /^[0-9a-f]{7,64}$/i.test(r.c)) {
            window.location.href = data.repo + "/commit/" + r.c;
          }
        },
        scales: {
          x: { type: "linear", min: 0, max: Math.max(runs.length - 1, 1), title: axis("run (date)"),
               ticks: { maxRotation: 0, autoSkip: true, autoSkipPadding: 16, callback: function (v) { return runs[v] && v === Math.round(v) ? runs[v].d.slice(0, 10) : ""; } } },
          // A history of zeros (no error ever) sits on the axis's floor.
          y: med.every(function (p) { return p.y === 0; }) ? { type: "linear", title: axis(c.y_title), min: 0, max: 1 }
                                                          : { type: "linear", title: axis(c.y_title), afterDataLimits: padded }
        },
        plugins: Object.assign(plugins(c), {
          tooltip: {
            filter: function (item) { return item.dataset.role === "history" || item.dataset.role === "change"; },
            callbacks: {
              title: function (items) { return items.length ? run(items[0].parsed.x) : ""; },
              label: function (ctx) {
                if (ctx.dataset.role === "change") { return null; }
                var i = ctx.parsed.x, lo = c.lo[i], hi = c.hi[i];
                return "median " + num(ctx.parsed.y) + (lo !== null && hi !== null ? " [" + num(lo) + ", " + num(hi) + "]" : "");
              },
              footer: function (items) {
                if (!items.length) { return []; }
                var i = items[0].parsed.x, r = runs[i] || {}, out = notesAt(i);
                if (r.u) { out.push("Shift-click: its workflow run (report)"); }
                if (r.p && data.repo) { out.push("Alt-click: pull request #" + r.p); }
                return out;
              }
            }
          }
        })
      }
    };
  }

  var build = { cdf: cdf, reps: reps, trend: trend, rounds: rounds, curve: curve, capacity: capacity, history: history };
  build.frontier = frontier;
  var drawn = 0;
  data.charts.forEach(function (c) {
    var canvas = document.getElementById(c.id);
    if (!canvas || !build[c.kind]) { return; }
    try {
      new Chart(canvas, build[c.kind](c));
      drawn++;
    } catch (e) {
      canvas.parentNode.textContent = "chart failed: " + e;
    }
  });
  // How many charts were drawn of how many the page has, for a browser
  // check (scripts/check-report-browser.sh) to read from the DOM.
  document.documentElement.setAttribute("data-charts", drawn + "/" + data.charts.length);
})();
