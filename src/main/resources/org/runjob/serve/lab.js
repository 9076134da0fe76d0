// runjob serve's front page: the lab's servers and the user's runs, asked every 2 s.
// Every text from a node or a worker goes in through textContent only: never markup.
(function () {
  "use strict";

  function cell(row, text, cls) {
    var td = document.createElement("td");
    td.textContent = text === null || text === undefined ? "-" : String(text);
    if (cls) { td.className = cls; }
    row.appendChild(td);
    return td;
  }

  function fixed(v, digits, unit) {
    return typeof v === "number" ? v.toFixed(digits) + (unit || "") : "-";
  }

  function duration(s) {
    if (typeof s !== "number") { return "-"; }
    return s < 120 ? s + " s" : s < 7200 ? Math.floor(s / 60) + " min" : Math.floor(s / 3600) + " h " + Math.floor(s % 3600 / 60) + " min";
  }

  function get(url, then) {
    var r = new XMLHttpRequest();
    r.open("GET", url);
    r.onload = function () { if (r.status === 200) { then(JSON.parse(r.responseText)); } };
    r.send();
  }

  function servers(data) {
    var body = document.querySelector("#servers tbody");
    var rows = document.createDocumentFragment();
    data.servers.forEach(function (s) {
      if (!s.gpus.length) {
        var r = document.createElement("tr");
        r.setAttribute("data-server", s.server);
        cell(r, s.server);
        var why = cell(r, s.state + (s.why ? ": " + s.why : ""), "state-" + s.state.replace(/[^a-z]/g, ""));
        why.colSpan = 7;
        rows.appendChild(r);
      }
      s.gpus.forEach(function (g) {
        var r = document.createElement("tr");
        r.setAttribute("data-server", s.server);
        r.setAttribute("data-gpu", String(g.index));
        r.setAttribute("data-holder", g.holder.kind);
        cell(r, s.server);
        cell(r, g.index, "num");
        cell(r, g.name);
        cell(r, fixed(g.utilization_pct, 0, " %"), "num");
        cell(r, typeof g.memory_used_mib === "number" ? (g.memory_used_mib / 1024).toFixed(1) + " / " + (g.memory_total_mib / 1024).toFixed(1) + " GiB" : "-", "num");
        cell(r, fixed(g.power_w, 0, " W"), "num");
        cell(r, fixed(g.temperature_c, 0, " C"), "num");
        var who = g.holder.text;
        if (g.holder.kind === "run" && g.holder.ranks && g.holder.ranks.length) { who += ", ranks " + g.holder.ranks.join(","); }
        cell(r, who, "held-" + g.holder.kind);
        rows.appendChild(r);
      });
    });
    body.replaceChildren(rows);
  }

  function runs(data) {
    var body = document.querySelector("#runs tbody");
    var rows = document.createDocumentFragment();
    var sweep = null;
    data.runs.forEach(function (run) {
      if (run.sweep && run.sweep.id !== sweep) {
        var head = document.createElement("tr");
        head.className = "sweep";
        cell(head, run.sweep.id + ": " + run.sweep.size + " points").colSpan = 10;
        rows.appendChild(head);
      }
      sweep = run.sweep ? run.sweep.id : null;
      var r = document.createElement("tr");
      r.setAttribute("data-run-id", run.run_id);
      r.setAttribute("data-state", run.state);
      var first = document.createElement("td");
      var a = document.createElement("a");
      a.href = "/run/" + encodeURIComponent(run.run_id);
      a.textContent = run.run_id;
      first.appendChild(a);
      r.appendChild(first);
      cell(r, run.job);
      cell(r, run.state + (run.exit_code !== null && run.exit_code !== undefined ? " (exit " + run.exit_code + ")" : ""),
        "state-" + String(run.state).split(" ")[0].replace(/[^a-z]/g, ""));
      cell(r, run.submitted ? "master " + run.master : (run.nodes || []).join(", "));
      cell(r, run.gpus, "num");
      cell(r, run.attempt + (run.stand_ins ? " (" + run.stand_ins + " stand-ins)" : "") + (run.stragglers ? ", " + run.stragglers + " straggling" : ""), "num");
      var p = run.progress;
      cell(r, p ? (p.max_steps ? p.step + " / " + p.max_steps + " (" + Math.round(p.fraction * 100) + " %)" : "step " + p.step) : "-");
      cell(r, p ? duration(p.eta_s) : "-", "num");
      cell(r, fixed(run.goodput, 2), "num");
      cell(r, run.last_line || "", "mono");
      rows.appendChild(r);
    });
    body.replaceChildren(rows);
    document.getElementById("left-out").textContent = data.left_out.length ? "left out: " + data.left_out.join("; ") : "";
    document.getElementById("updated").textContent = "updated " + new Date().toLocaleTimeString();
    document.body.setAttribute("data-runs", String(data.runs.length));
  }

  function tick() {
    get("/api/runs", runs);
    get("/api/servers", servers);
  }

  tick();
  setInterval(tick, 2000);
})();
