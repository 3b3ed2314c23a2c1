// Builds the report page from the JSON in #report-data with Chart.js (inlined above from Debian's
// libjs-chart.js). Every chart it creates is counted in body[data-charts-rendered] once Chart.js
// drew it, its datasets of measured times in body[data-measured-drawn], the measured rows of
// family splits in body[data-measured-splits]; errors are counted in body[data-errors] (the
// headless-browser test reads all four).
(function () {
  "use strict";
  var body = document.body;
  function fail(message) {
    body.dataset.errors = String(Number(body.dataset.errors) + 1);
    var box = document.getElementById("errors");
    box.hidden = false;
    box.textContent += message + " ";
  }
  window.addEventListener("error", function (e) { fail(String(e.message)); });
  var console_error = console.error;
  console.error = function () {
    fail(Array.prototype.join.call(arguments, " "));
    console_error.apply(console, arguments);
  };

  var data = JSON.parse(document.getElementById("report-data").textContent);
  var palette = ["#0a84ff", "#ff9f0a", "#30d158", "#bf5af2", "#ff375f", "#64d2ff", "#8e8e93"];
  // Measured datasets: dark colours, so that none is taken for one of the seven chips' predictions.
  var measured_palette = ["#000000", "#a0522d", "#5e5ce6", "#2e7d32"];

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(x, digits) { return Number(x).toPrecision(digits || 3); }
  // Log-axis ticks at powers of ten only, written plainly (0.01, 100, 1e+4).
  function tick(value) {
    var e = Math.log10(value);
    return Math.abs(e - Math.round(e)) < 1e-9 ? (Math.abs(e) < 4 ? String(Number(value)) : value.toExponential(0)) : "";
  }

  function chart(parent, title, config) {
    var box = el("div", {"class": "chart"});
    var canvas = el("canvas", {"aria-label": title, "role": "img"});
    box.appendChild(canvas);
    parent.appendChild(box);
    body.dataset.chartsExpected = String(Number(body.dataset.chartsExpected) + 1);
    config.options = Object.assign({responsive: true, maintainAspectRatio: false, animation: false}, config.options);
    config.options.plugins = Object.assign({title: {display: true, text: title}}, config.options.plugins);
    config.plugins = [{id: "counted", afterRender: function (c) {
      if (c.$counted) return;
      c.$counted = true;
      body.dataset.chartsRendered = String(Number(body.dataset.chartsRendered) + 1);
      // The measured datasets Chart.js drew, for the headless-browser test.
      var measured = c.data.datasets.filter(function (d) { return String(d.label).indexOf("measured: ") === 0; }).length;
      body.dataset.measuredDrawn = String(Number(body.dataset.measuredDrawn) + measured);
      var splits = (c.data.labels || []).filter(function (l) { return String(l).indexOf("measured: ") === 0; }).length;
      body.dataset.measuredSplits = String(Number(body.dataset.measuredSplits) + splits);
    }}];
    new Chart(canvas, config);
  }

  // Roofline: every tune point's predicted (intensity, GFLOP/s) under each chip's two roofs.
  function roofline(parent, k) {
    var chips = data.chips.filter(function (c) { return data.roofline_chips.indexOf(c.name) >= 0; });
    var datasets = [];
    chips.forEach(function (c, i) {
      var ridge = c.peak_gflops / c.bandwidth_gbs, pts = [];
      [1e-3, ridge, 1e3].forEach(function (x) { pts.push({x: x, y: Math.min(c.peak_gflops, x * c.bandwidth_gbs)}); });
      datasets.push({type: "line", label: c.name + " roof", data: pts, borderColor: palette[i], pointRadius: 0, borderWidth: 1});
      datasets.push({type: "scatter", label: c.name + " variants", pointRadius: 4, backgroundColor: palette[i],
        data: k.points.map(function (p) {
          var q = p.predictions.find(function (r) { return r.chip === c.name; });
          var flops = Math.max(p.flops, 1);
          return {x: flops / Math.max(p.unique_bytes, 1), y: Math.max(flops / (q.time_us * 1e3), 1e-6), label: p.label};
        })});
    });
    chart(parent, "Roofline (predicted, log-log)", {data: {datasets: datasets}, options: {
      scales: {x: {type: "logarithmic", min: 1e-3, max: 1e3, title: {display: true, text: "flops per unique byte"}, ticks: {callback: tick}},
               y: {type: "logarithmic", title: {display: true, text: "GFLOP/s"}, ticks: {callback: tick}}},
      plugins: {tooltip: {callbacks: {label: function (ctx) { return ctx.raw.label ? ctx.raw.label + ": " + fmt(ctx.raw.y) + " GFLOP/s" : ""; }}}}}});
  }

  // One --measured set as a dataset over the sweep's tune points (null where it has no time).
  function measured_dataset(points, m, i) {
    var at = m["case"] ? "case " + m["case"] : "dims " + JSON.stringify(m.dims);
    var color = measured_palette[i % measured_palette.length];
    return {label: m.label + " (" + at + ")", borderColor: color, backgroundColor: color, borderDash: [6, 3],
      pointStyle: "rectRot", pointRadius: 6, spanGaps: true,
      data: points.map(function (p) {
        var t = m.points.find(function (q) { return q.entry_point === p.entry_point; });
        return t ? t.median_us : null;
      })};
  }

  // The tune points of the counted types, predicted time per chip, and the measured times.
  function sweep(parent, k) {
    var points = k.points.filter(function (p) { return p.label.indexOf("=") >= 0 || p.counted || k.points.length === 1; });
    var datasets = data.chips.map(function (c, i) {
      return {label: c.name, borderColor: palette[i], backgroundColor: palette[i],
        data: points.map(function (p) { return p.predictions[i].time_us; })};
    });
    (k.measured || []).forEach(function (m, i) { datasets.push(measured_dataset(points, m, i)); });
    var title = k.measured && k.measured.length ? "Predicted and measured time" : "Predicted time";
    chart(parent, title + " per tune point, case " + k["case"].name + " (us, log)", {type: "line",
      data: {labels: points.map(function (p) { return p.label; }), datasets: datasets},
      options: {scales: {y: {type: "logarithmic", title: {display: true, text: "us"}, ticks: {callback: tick}}}}});
  }

  function bytes_per_element(parent, k) {
    var b = k.counters.buffers.filter(function (x) { return x.unique_loaded + x.unique_stored > 0; });
    chart(parent, "Bytes moved per unique byte, per buffer", {type: "bar",
      data: {labels: b.map(function (x) { return x.name; }), datasets: [
        {label: "loaded / unique loaded", backgroundColor: palette[0],
         data: b.map(function (x) { return x.unique_loaded ? x.loaded / x.unique_loaded : 0; })},
        {label: "stored / unique stored", backgroundColor: palette[1],
         data: b.map(function (x) { return x.unique_stored ? x.stored / x.unique_stored : 0; })}]},
      options: {scales: {y: {beginAtZero: true}}}});
  }

  function coalescing(parent, k) {
    var s = k.counters.sites.filter(function (x) { return x.simd_accesses > 0; });
    chart(parent, "Coalescing per access site (32-byte segments touched per segment needed)", {type: "bar",
      data: {labels: s.map(function (x) { return (x.store ? "store " : "load ") + x.buffer + " @" + (x.spec_line || ("msl " + x.line)) +
          " (" + fmt(x.mean_lanes, 2) + " lanes)"; }),
        datasets: [{label: "segments touched per segment needed (1 is ideal)", backgroundColor: palette[2], data: s.map(function (x) { return x.coalescing; })}]},
      options: {indexAxis: "y", scales: {x: {beginAtZero: true, suggestedMax: 2}}}});
  }

  function table(parent, head, rows) {
    var t = el("table"), tr = el("tr");
    head.forEach(function (h) { tr.appendChild(el("th", {}, h)); });
    t.appendChild(tr);
    rows.forEach(function (r) {
      var row = el("tr");
      r.forEach(function (c, i) { row.appendChild(el("td", i === 0 ? {"class": "text"} : {}, String(c))); });
      t.appendChild(row);
    });
    parent.appendChild(t);
  }

  function cost(parent, k) {
    if (!k.cost.length) return;
    parent.appendChild(el("h3", {}, "Cost model against the counters"));
    table(parent, ["term", "declared (B)", "counted unique (B)", "agrees"], k.cost.map(function (c) {
      return [c.term, c.declared === null ? "none" : c.declared, c.counted, c.declared === null ? "-" : c.agrees ? "yes" : "NO"];
    }));
  }

  function findings(parent, k) {
    parent.appendChild(el("h3", {}, "Lints (" + k.findings.length + ")"));
    if (!k.findings.length) parent.appendChild(el("p", {"class": "ok"}, "No lint fired."));
    k.findings.forEach(function (f) {
      var d = el("div", {"class": "finding"});
      d.appendChild(el("code", {}, f.text));
      parent.appendChild(d);
    });
  }

  function predictions_table(parent, k) {
    var counted = k.points.find(function (p) { return p.counted; }) || k.points[0];
    parent.appendChild(el("h3", {}, "Counted variant " + counted.entry_point + " per chip"));
    table(parent, ["chip", "predicted us", "floor us", "parallelism x", "coalescing x", "% of peak"], counted.predictions.map(function (q) {
      return [q.chip, fmt(q.time_us), fmt(q.floor_us), fmt(q.parallelism), fmt(q.coalescing), fmt(q.percent_of_peak, 2)];
    }));
  }

  function sum(xs) { return xs.reduce(function (a, b) { return a + b; }, 0); }

  // The --measured runs of a family point (its case and entry point) that carry a split by dispatch.
  function measured_splits(k, p) {
    var out = [];
    (k.measured || []).forEach(function (m) {
      if (m["case"] !== p["case"].name) return;
      var t = m.points.find(function (q) { return q.entry_point === p.entry_point && q.members; });
      // "measured: NVIDIA H200 (CUDA, relative guide only)" -> "measured: NVIDIA H200": the axis is narrow.
      if (t) out.push({label: m.label.replace(/ \(.*\)$/, ""), us: t.members.map(function (x) { return x.median_us; })});
    });
    return out;
  }

  // Predicted (the roofline chips) and measured time of one family point, each row split by
  // dispatch as shares of its own total: different machines, so the split's shape is what compares.
  function family_split(parent, k, p) {
    var rows = [];
    data.chips.forEach(function (c, i) {
      if (data.roofline_chips.indexOf(c.name) < 0) return;
      rows.push({label: "predicted: " + c.name, us: p.dispatches.map(function (d) { return d.predictions[i].time_us; })});
    });
    var measured = measured_splits(k, p);
    rows = rows.concat(measured);
    var n = p.dispatches.length;
    var datasets = p.dispatches.map(function (d, j) {
      var color = "hsl(" + Math.round(360 * j / n) + ", 60%, 55%)";
      return {label: d.dispatch + " " + d.kernel, backgroundColor: color,
        data: rows.map(function (r) { return 100 * r.us[j] / sum(r.us); })};
    });
    chart(parent, p.entry_point + " at case " + p["case"].name + ": share of the family's time per dispatch (%)", {type: "bar",
      data: {labels: rows.map(function (r) { return r.label + " (" + fmt(sum(r.us)) + " us)"; }), datasets: datasets},
      options: {indexAxis: "y", scales: {x: {stacked: true, max: 100, title: {display: true, text: "% of the row's total"}},
                                         y: {stacked: true}},
        plugins: {legend: {position: "bottom"}, tooltip: {callbacks: {label: function (ctx) {
          return ctx.dataset.label + ": " + fmt(rows[ctx.dataIndex].us[ctx.datasetIndex]) + " us (" + fmt(ctx.raw, 2) + "%)";
        }}}}}});
    return measured;
  }

  // Per dispatch: the member variant served, its bound dims, the M3 Max prediction and every
  // measured split, in us and share.
  function family_table(parent, p, measured) {
    var chip = data.chips.findIndex(function (c) { return c.name === "M3 Max"; });
    var predicted = p.dispatches.map(function (d) { return d.predictions[chip].time_us; });
    var head = ["dispatch", "dims", "M3 Max predicted us", "share"];
    measured.forEach(function (m) { head.push(m.label + " us", "share"); });
    var rows = p.dispatches.map(function (d, j) {
      var row = [d.dispatch + " " + d.entry_point, JSON.stringify(d.dims), fmt(predicted[j]),
                 fmt(100 * predicted[j] / sum(predicted), 2) + "%"];
      measured.forEach(function (m) { row.push(fmt(m.us[j]), fmt(100 * m.us[j] / sum(m.us), 2) + "%"); });
      return row;
    });
    var total = ["total", "", fmt(sum(predicted)), "100%"];
    measured.forEach(function (m) { total.push(fmt(sum(m.us)), "100%"); });
    rows.push(total);
    table(parent, head, rows);
  }

  // A family: its first types at each of its cases, split by dispatch.
  function family(s, k) {
    s.appendChild(el("p", {}, "A kernel family of " + k.family[0].dispatches.length + " dispatches in one command " +
      "buffer: each dispatch is the member variant the family's glue serves at the dims it binds, predicted as a " +
      "kernel (with the member's own counters where it was counted), launch included; the family's time is their sum."));
    var charts = el("div", {"class": "charts"});
    s.appendChild(charts);
    k.family.filter(function (p) { return p.entry_point === k.counted_variant; }).forEach(function (p) {
      var measured = family_split(charts, k, p);
      s.appendChild(el("h3", {}, p.entry_point + " at case " + p["case"].name + " " + JSON.stringify(p["case"].dims)));
      family_table(s, p, measured);
    });
  }

  function kernel(k) {
    var s = el("section", {id: "k-" + k.kernel});
    s.appendChild(el("h2", {}, k.kernel));
    s.appendChild(el("p", {}, k.summary + " (" + k.spec + ")"));
    document.getElementById("toc").appendChild(el("a", {href: "#k-" + k.kernel}, k.kernel));
    document.getElementById("kernels").appendChild(s);
    if (k.skipped) { s.appendChild(el("p", {}, "Not analysed: " + k.skipped)); return; }
    if (k.family) { family(s, k); return; }
    s.appendChild(el("p", {}, "Realistic case `" + k["case"].name + "` " + JSON.stringify(k["case"].dims) +
      (k.counters ? "; counters of " + k.counted_variant + " at case `" + k.counted_case.name + "` " +
        JSON.stringify(k.counted_case.dims) + ": " + k.counters.unique_bytes + " unique bytes, " +
        fmt(k.counters.barriers_per_thread) + " barriers per thread" : "; no counters")));
    if (k.count_error) s.appendChild(el("p", {"class": "bad"}, "Counting failed: " + k.count_error));
    findings(s, k);
    var charts = el("div", {"class": "charts"});
    s.appendChild(charts);
    roofline(charts, k);
    sweep(charts, k);
    if (k.counters) { bytes_per_element(charts, k); coalescing(charts, k); }
    predictions_table(s, k);
    cost(s, k);
  }

  try {
    data.kernels.forEach(kernel);
  } catch (e) {
    fail(String(e && e.stack || e));
  }
})();
