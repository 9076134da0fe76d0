// runjob serve's run page: the run's ranks, events and outputs (asked every 2 s), its metric
// charts (plot.js, every 3 s) and its log as it is written (Server-Sent Events).
// Every text from a node or a worker goes in through textContent only: never markup.
(function () {
  "use strict";
  var id = decodeURIComponent(location.pathname.split("/")[2] || "");
  var api = "/api/run/" + encodeURIComponent(id);
  var MAX_LINES = 2000;
  var stream = null;
  var ranksKnown = {};

  function el(name, text, cls) {
    var e = document.createElement(name);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }

  function cell(row, text, cls) {
    row.appendChild(el("td", text === null || text === undefined ? "-" : text, cls));
  }

  function get(url, then) {
    var r = new XMLHttpRequest();
    r.open("GET", url);
    r.onload = function () {
      if (r.status === 200) {
        then(JSON.parse(r.responseText));
      } else if (url === api) {
        document.getElementById("title").textContent = r.responseText;
      }
    };
    r.send();
  }

  function duration(s) {
    return s < 120 ? s + " s" : s < 7200 ? Math.floor(s / 60) + " min" : Math.floor(s / 3600) + " h " + Math.floor(s % 3600 / 60) + " min";
  }

  function run(d) {
    document.getElementById("title").textContent = d.job + " / " + d.run_id;
    document.title = "runjob: " + d.job + " / " + d.run_id;
    var state = document.getElementById("state");
    state.textContent = d.state + (d.exit_code !== null && d.exit_code !== undefined ? " (exit " + d.exit_code + ")" : "")
      + (d.attempt ? ", attempt " + d.attempt : "");
    state.setAttribute("data-state", d.state);
    document.getElementById("stop").hidden = !d.stop || !d.live;
    var p = d.progress;
    document.getElementById("progress").textContent = p ? "step " + p.step + (p.max_steps ? " of " + p.max_steps + " (" + Math.round(p.fraction * 100) + " %)" : "")
      + (typeof p.steps_per_s === "number" ? ", " + p.steps_per_s.toFixed(2) + " steps/s" : "") + (typeof p.eta_s === "number" ? ", ETA " + duration(p.eta_s) : "")
      + (typeof d.goodput === "number" ? ", goodput " + d.goodput.toFixed(2) : "") : (typeof d.goodput === "number" ? "goodput " + d.goodput.toFixed(2) : "");
    var cause = document.getElementById("cause");
    cause.hidden = !d.root_cause;
    cause.textContent = d.root_cause ? "root cause: " + d.root_cause : "";
    var stacks = document.getElementById("stacks");
    stacks.hidden = !d.stacks;
    stacks.textContent = d.stacks ? "stacks, last capture:\n" + d.stacks : "";
    ranks(d.rank_rows || d.ranks || []);
    timeline(d.events || [], d.attempt_lines || []);
    var outs = document.createDocumentFragment();
    (d.outputs || []).forEach(function (o) { outs.appendChild(el("li", o.path + " (" + o.bytes + " bytes)")); });
    document.getElementById("outputs").replaceChildren(outs);
  }

  function ranks(rows) {
    var body = document.querySelector("#ranks tbody");
    var frag = document.createDocumentFragment();
    var select = document.getElementById("rank");
    rows.forEach(function (k) {
      var r = el("tr");
      r.setAttribute("data-rank", String(k.rank));
      cell(r, k.rank, "num");
      cell(r, k.node);
      cell(r, k.state + (k.straggler ? " (straggler: " + k.straggler + ")" : ""), "state-" + String(k.state).replace(/[^a-z]/g, ""));
      cell(r, k.pid, "num");
      var gpus = k.gpus || [];
      cell(r, gpus.length ? gpus.map(function (g) { return g.index; }).join(",") : "-");
      cell(r, gpus.length ? gpus.map(function (g) { return typeof g.utilization_pct === "number" ? g.utilization_pct.toFixed(0) + " %" : "n/a"; }).join(",") : "-", "num");
      cell(r, k.step, "num");
      cell(r, typeof k.step_time_s === "number" ? k.step_time_s.toFixed(3) + " s" : "-", "num");
      cell(r, typeof k.rate === "number" ? k.rate.toFixed(2) + " " + k.rate_unit : "-", "num");
      cell(r, k.last_line, "mono");
      frag.appendChild(r);
      if (!ranksKnown[k.rank]) {
        ranksKnown[k.rank] = true;
        var o = el("option", "rank " + k.rank);
        o.value = String(k.rank);
        select.appendChild(o);
      }
    });
    body.replaceChildren(frag);
  }

  function timeline(events, lines) {
    var frag = document.createDocumentFragment();
    events.forEach(function (e) {
      var parts = [];
      Object.keys(e).forEach(function (k) {
        if (k !== "time" && k !== "event") { parts.push(k + " " + (typeof e[k] === "object" ? JSON.stringify(e[k]) : e[k])); }
      });
      var li = el("li", (e.time || "").replace("T", " ").replace(/\.\d+Z$/, "Z") + "  " + e.event + (parts.length ? ": " + parts.join(", ") : ""));
      li.setAttribute("data-event", String(e.event));
      if (typeof e.attempt === "number") { li.setAttribute("data-attempt", String(e.attempt)); }
      frag.appendChild(li);
    });
    lines.forEach(function (l) { frag.appendChild(el("li", l, "muted")); });
    document.getElementById("timeline").replaceChildren(frag);
  }

  function metrics(d) {
    var none = document.getElementById("metrics-none");
    if (d.none) {
      none.textContent = d.none;
      return;
    }
    none.textContent = "";
    window.runjobPlot(d, document.getElementById("charts"));
  }

  function follow() {
    if (stream) { stream.close(); }
    var log = document.getElementById("log");
    log.replaceChildren();
    var rank = document.getElementById("rank").value;
    var state = document.getElementById("log-state");
    state.textContent = "following";
    stream = new EventSource(api + "/log" + (rank ? "?rank=" + encodeURIComponent(rank) : ""));
    stream.addEventListener("line", function (m) {
      var stick = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
      log.appendChild(el("div", JSON.parse(m.data), "logline"));
      while (log.childNodes.length > MAX_LINES) { log.removeChild(log.firstChild); }
      if (stick) { log.scrollTop = log.scrollHeight; }
      log.setAttribute("data-lines", String(log.childNodes.length));
    });
    stream.addEventListener("caught-up", function () { log.setAttribute("data-caught-up", "1"); });
    stream.addEventListener("end", function () {
      state.textContent = "the run ended";
      stream.close();
    });
  }

  function tick() { get(api, run); }
  function charts() { get(api + "/metrics", metrics); }

  document.getElementById("rank").addEventListener("change", follow);
  document.getElementById("stop").addEventListener("click", function () {
    var r = new XMLHttpRequest();
    r.open("POST", api + "/stop");
    r.onload = function () { document.getElementById("said").textContent = r.status === 200 ? JSON.parse(r.responseText).said : r.responseText; };
    r.send();
  });
  tick();
  charts();
  follow();
  setInterval(tick, 2000);
  setInterval(charts, 3000);
})();
