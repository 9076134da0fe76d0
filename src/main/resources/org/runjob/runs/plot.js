// runjob plot: draws one chart per metric from the JSON in #data, a line per rank, as inline SVG.
// No network, no library: the page is one file. Text goes in through textContent only.
// runjob serve's run page loads the same script and calls runjobPlot(data, container) as data comes.
(function () {
  "use strict";
  var data, container;
  var NS = "http://www.w3.org/2000/svg";
  var W = 860, H = 260, L = 64, R = 120, T = 16, B = 36;
  var colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"];

  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (parent) { parent.appendChild(e); }
    return e;
  }

  function text(parent, x, y, s, cls, anchor) {
    var t = el("text", {x: x, y: y, "class": cls || "", "text-anchor": anchor || "start"}, parent);
    t.textContent = s;
    return t;
  }

  function nice(v) {
    var a = Math.abs(v);
    return a >= 1000 || (a > 0 && a < 0.01) ? v.toExponential(2) : String(Math.round(v * 1000) / 1000);
  }

  // range: a fixed [low, high] for the y axis (GPU utilization: 0-100 %); else the data's, on a log
  // scale when every value is positive and they span at least two decades (a loss from 10 to 0.01)
  function chart(title, series, unit, range) {
    var section = document.createElement("section");
    section.className = "chart";
    section.setAttribute("data-metric", title);
    var h = document.createElement("h2");
    section.appendChild(h);
    var svg = el("svg", {width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img"});
    section.appendChild(svg);
    var ranks = Object.keys(series).sort(function (a, b) { return a - b; });
    var xs = [], ys = [];
    ranks.forEach(function (r) { series[r].forEach(function (p) { xs.push(p[0]); ys.push(p[1]); }); });
    var x0 = 0, x1 = Math.max(data.end, Math.max.apply(null, xs.concat([1])));
    var y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
    var log = !range && y0 > 0 && y1 / y0 >= 100;
    if (range) { y0 = Math.min(range[0], y0); y1 = Math.max(range[1], y1); }
    if (y0 === y1) { y0 -= 1; y1 += 1; }
    svg.setAttribute("data-scale", log ? "log" : "linear");
    h.textContent = title + (unit ? " (" + unit + ")" : "") + (log ? " (log scale)" : "");
    var f = log ? function (y) { return Math.log10(y); } : function (y) { return y; };
    var sx = function (x) { return L + (x - x0) / (x1 - x0) * (W - L - R); };
    var sy = function (y) { return T + (1 - (f(y) - f(y0)) / (f(y1) - f(y0))) * (H - T - B); };
    el("rect", {x: L, y: T, width: W - L - R, height: H - T - B, "class": "frame"}, svg);
    for (var i = 0; i <= 4; i++) {
      var yv = log ? Math.pow(10, f(y0) + (f(y1) - f(y0)) * i / 4) : y0 + (y1 - y0) * i / 4, xv = x0 + (x1 - x0) * i / 4;
      text(svg, L - 6, sy(yv) + 4, nice(yv), "tick", "end");
      text(svg, sx(xv), H - B + 16, Math.round(xv) + " s", "tick", "middle");
    }
    data.attempts.forEach(function (a) {
      if (a.attempt > 0) {
        el("line", {x1: sx(a.t), x2: sx(a.t), y1: T, y2: H - B, "class": "restart", "data-attempt": a.attempt}, svg);
        text(svg, sx(a.t) + 4, T + 12, "restart " + a.attempt, "restart-label");
      }
    });
    ranks.forEach(function (r, k) {
      var points = series[r];
      // a new attempt starts a new stroke: a restart is not joined to the attempt before it
      var d = points.map(function (p, j) {
        var move = j === 0 || points[j - 1][2] !== p[2];
        return (move ? "M" : "L") + sx(p[0]).toFixed(1) + " " + sy(p[1]).toFixed(1);
      }).join(" ");
      var colour = colours[k % colours.length];
      el("path", {d: d, "class": "line", "data-rank": r, stroke: colour}, svg);
      el("rect", {x: W - R + 12, y: T + k * 16, width: 10, height: 10, fill: colour}, svg);
      text(svg, W - R + 28, T + k * 16 + 9, "rank " + r, "legend");
    });
    container.appendChild(section);
  }

  // draws every chart of `d` into `into`, replacing what it held
  function draw(d, into) {
    data = d;
    container = into;
    while (container.firstChild) { container.removeChild(container.firstChild); }
    Object.keys(data.metrics).sort().forEach(function (m) { chart(m, data.metrics[m], "", null); });
    if (Object.keys(data.gpu).length) { chart("GPU utilization", data.gpu, "%", [0, 100]); }
    document.body.setAttribute("data-charts", String(container.querySelectorAll("section.chart").length));
  }

  window.runjobPlot = draw;
  var inline = document.getElementById("data");
  if (inline) { draw(JSON.parse(inline.textContent), document.getElementById("charts")); }
})();
