/* agentjudge HTML report: a grading run (verdict, counts, quality metrics, cases). */
function renderGrade() {
  var tone = data.exit_code === 0 ? "good" : data.exit_code === 1 ? "bad" : "warn";
  header(data.title, data.subtitle, badge(data.verdict + " · exit " + data.exit_code, tone));
  data.warnings.forEach(function (w) { app.appendChild(h("div", { cls: "banner", text: w })); });
  var only = "all", query = "";
  var table;
  var cards = h("div", { cls: "cards", id: "counts" });
  var ALARM = { failed: "bad", error: "bad", missing: "bad", quality_below_threshold: "warn" };
  data.counts.forEach(function (c) {
    var filterable = c.status !== "planned";
    cards.appendChild(card({ label: c.status.replace(/_/g, " "), key: c.status, value: c.count, format: "int", tone: c.count ? ALARM[c.status] : null },
      filterable ? { cls: "card clickable", title: "show only " + c.status + " cases", onclick: function () { select(only === c.status ? "all" : c.status); } } : {}));
  });
  app.appendChild(cards);
  app.appendChild(h("div", { cls: "grid3" }, [
    panel("Quality metrics", [qualityTable()], "quality"),
    panel("Judge usage", [kvTable(data.usage.map(function (u) { return { label: u.label, key: u.key, value: u.value, format: "int" }; }))], "usage")
  ]));
  var chips = h("span", {});
  ["all", "passed", "failed", "quality_below_threshold", "error", "missing"].forEach(function (s) {
    var n = s === "all" ? data.cases.length : data.cases.filter(function (c) { return c.status === s; }).length;
    chips.appendChild(h("button", { type: "button", cls: "chip" + (s === only ? " active" : ""), "data-filter": s, onclick: function () { select(s); } },
      [s.replace(/_/g, " "), h("span", { cls: "n", text: n })]));
  });
  function select(s) {
    only = s;
    Array.prototype.forEach.call(chips.children, function (c) { c.classList.toggle("active", c.getAttribute("data-filter") === s); });
    Array.prototype.forEach.call(cards.children, function (c) { c.classList.toggle("active", c.getAttribute("data-key") === s); });
    table.render();
  }
  var count = h("span", { cls: "muted" });
  var RANK = { missing: 0, error: 1, failed: 2, quality_below_threshold: 3, passed: 4 };
  table = DataTable({
    id: "cases", rows: data.cases, empty: "No case matches.",
    rowId: function (c) { return c.id; },
    rowAttrs: function (c) { return { "data-case": c.id, "data-status": c.status }; },
    filter: function (c) {
      if (only !== "all" && c.status !== only) return false;
      return !query || (c.id + " " + c.reasons.join(" ")).toLowerCase().indexOf(query) >= 0;
    },
    onRender: function (n) { count.textContent = n + " of " + data.cases.length + " shown"; },
    columns: [
      { width: "26%", key: "id", label: "Case", sort: function (c) { return c.id.toLowerCase(); }, cell: function (c) { return h("span", { cls: "title-cell" }, [h("span", { cls: "main", text: c.id })]); } },
      { width: "190px", key: "status", label: "Status", sort: function (c) { return RANK[c.status]; }, cell: function (c) { return statusBadge(c.status); } },
      { key: "reasons", label: "Reasons", sort: function (c) { return c.reasons.join("; ").toLowerCase(); }, cell: function (c) { return c.reasons.length ? h("ul", { cls: "reasons" }, c.reasons.map(function (r) { return h("li", { text: r }); })) : h("span", { cls: "muted", text: "–" }); } },
      { width: "80px", key: "checks", label: "Checks", num: true, sort: function (c) { return c.checks.length ? c.checks_passed / c.checks.length : null; }, cell: function (c) { return c.checks.length ? c.checks_passed + " / " + c.checks.length : "–"; } },
      { width: "80px", key: "judges", label: "Metrics", num: true, sort: function (c) { return c.judges.length ? c.judges_passed / c.judges.length : null; }, cell: function (c) { return c.judges.length ? c.judges_passed + " / " + c.judges.length : "–"; } }
    ],
    detail: caseDetail
  });
  app.appendChild(panel("Cases", [h("div", { cls: "toolbar" }, [searchBox("Filter by case id or reason…", function (q) { query = q; table.render(); }), chips, h("span", { cls: "grow" }), count]), table.el], "cases-panel"));
  app.appendChild(panel("Run", [kvTable(data.info)], "info"));
}

function qualityTable() {
  if (!data.quality.length) return h("p", { cls: "empty", text: "No quality metric is configured." });
  return h("table", { cls: "sub-table", id: "quality-table" }, [
    h("thead", {}, [h("tr", {}, ["Metric", "Pass rate", "Passed / scored", "Min", "Status"].map(function (t) { return h("th", { text: t }); }))]),
    h("tbody", {}, data.quality.map(function (q) {
      return h("tr", { "data-metric": q.metric, "data-pass-rate": q.pass_rate === null ? "" : q.pass_rate }, [
        h("td", { cls: "mono", text: q.metric }),
        h("td", { text: fmt(q.pass_rate, "pct") }),
        h("td", { text: q.passed + " / " + q.scored }),
        h("td", { text: fmt(q.min_pass_rate, "pct") }),
        h("td", {}, [statusBadge(q.status)])
      ]);
    }))
  ]);
}

function caseDetail(c) {
  var parts = [];
  if (c.checks.length) parts.push(h("table", { cls: "sub-table checks" }, [
    h("thead", {}, [h("tr", {}, ["Check", "Result", "Reason"].map(function (t) { return h("th", { text: t }); }))]),
    h("tbody", {}, c.checks.map(function (k) {
      return h("tr", { "data-check": k.name }, [h("td", { cls: "mono", text: k.name }), h("td", {}, [passBadge(k.passed)]), h("td", { text: k.reason || "–" })]);
    }))
  ]));
  if (c.judges.length) parts.push(h("table", { cls: "sub-table judges" }, [
    h("thead", {}, [h("tr", {}, ["Metric", "Kind", "Score", "Threshold", "Result", "Reasoning"].map(function (t) { return h("th", { text: t }); }))]),
    h("tbody", {}, c.judges.map(function (j) {
      return h("tr", { "data-metric": j.name }, [
        h("td", { cls: "mono", text: j.name + (j.quality ? " (quality)" : "") }), h("td", { text: j.kind || "–" }),
        h("td", { text: fmt(j.score, "num") }), h("td", { text: fmt(j.threshold, "num") }),
        h("td", {}, [passBadge(j.passed)]), h("td", { cls: "text", text: j.error ? "error: " + j.error : (j.reasoning || "–") })
      ]);
    }))
  ]));
  if (c.notes.length) parts.push(h("ul", { cls: "reasons muted" }, c.notes.map(function (n) { return h("li", { text: n }); })));
  if (!parts.length) parts.push(h("p", { cls: "empty", text: "No check or metric ran for this case." }));
  return h("div", { "data-case-detail": c.id }, parts);
}
