/* agentjudge HTML report: a scoring run (metrics, charts, root trajectories and their trees). */
function renderScore() {
  var statusText = data.status + (data.error ? " (" + data.error + ")" : "");
  header(data.title, data.subtitle, badge(statusText, data.status === "succeeded" ? "good" : "bad", "run status"));
  if (data.notice) app.appendChild(h("div", { cls: "banner", id: "notice", text: data.notice }));
  if (data.status !== "succeeded") {
    app.appendChild(h("div", { cls: "banner error", text: "The scoring job failed" + (data.error ? " (" + data.error + ")" : "") + ": the metrics below cover what was scored before it stopped, if anything." + (data.error_message ? " The judge said: " + data.error_message : "") }));
  }
  app.appendChild(h("div", { cls: "cards", id: "metrics" }, data.cards.map(function (c) { return card(c); })));
  var candidates = data.categories.reduce(function (n, c) { return n + c.count; }, 0);
  app.appendChild(h("div", { cls: "grid3" }, [
    panel("Failure categories", [
      h("p", { cls: "muted", text: candidates + " step" + (candidates === 1 ? "" : "s") + " scored below " + fmt(data.failure_threshold, "text") + " went to the judge for a category." }),
      bars(data.categories, "No step was categorized.")
    ], "categories"),
    panel("Root scores", histogram(), "histogram"),
    panel("Judge", [kvTable(data.judge)], "judge")
  ]));
  app.appendChild(trajectorySection());
  app.appendChild(panel("Run parameters", [kvTable(data.parameters)], "parameters"));
}

function histogram() {
  var bins = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0], none = 0;
  data.roots.forEach(function (r) {
    if (isNum(r.score)) bins[Math.min(9, Math.floor(r.score * 10))] += 1; else none += 1;
  });
  var max = Math.max.apply(null, bins);
  var box = h("div", { cls: "histo" }, bins.map(function (n, i) {
    var bar = h("div", { cls: "bar", title: (i / 10).toFixed(1) + "–" + ((i + 1) / 10).toFixed(1) + ": " + n + " root" + (n === 1 ? "" : "s") });
    bar.style.height = (max ? 100 * n / max : 0) + "%";
    bar.style.background = scoreColor((i + 0.5) / 10);
    return h("div", { cls: "col", "data-bin": i, "data-count": n }, [bar]);
  }));
  return [
    h("p", { cls: "muted", text: "Subtree aggregate of each root trajectory" + (none ? "; " + none + " without a score" : "") + "." }),
    box, h("div", { cls: "histo-axis" }, [h("span", { text: "0" }), h("span", { text: "0.5" }), h("span", { text: "1" })])
  ];
}

function trajectorySection() {
  var query = "", only = "all";
  var filters = {
    all: function () { return true; },
    passed: function (r) { return r.passed === true; },
    not_passed: function (r) { return r.status === "scored" && r.passed !== true; },
    failed: function (r) { return r.status === "failed"; },
    incomplete: function (r) { return r.complete === false; }
  };
  var count = h("span", { cls: "muted" });
  var table = DataTable({
    id: "trajectories", rows: data.roots, sortKey: null, empty: "No trajectory matches.",
    rowId: function (r) { return r.index; },
    rowAttrs: function (r) { return { "data-root": r.index, "data-status": r.status }; },
    filter: function (r) {
      if (!filters[only](r)) return false;
      if (!query) return true;
      return [r.label, r.trajectory_id, r.agent, r.model, r.file, r.status, r.reason].join(" ").toLowerCase().indexOf(query) >= 0;
    },
    onRender: function (n) { count.textContent = n + " of " + data.roots.length + " shown"; },
    columns: [
      { key: "label", label: "Trajectory", sort: function (r) { return r.label.toLowerCase(); },
        cell: function (r) { return h("div", { cls: "title-cell", title: r.file }, [h("div", { cls: "main", text: r.label }), h("div", { cls: "sub", text: [r.trajectory_id, r.agent, r.model].filter(Boolean).join(" · ") })]); } },
      { width: "150px", key: "status", label: "Status", sort: function (r) { return r.status; },
        cell: function (r) { return h("span", {}, [statusBadge(r.status, r.reason), r.reason ? h("span", { cls: "muted mono", text: " " + r.reason }) : null]); } },
      { width: "92px", key: "score", label: "Score", num: true, help: "subtree aggregate", sort: function (r) { return r.score; }, value: function (r) { return numValue(r.score); }, cell: function (r) { return scoreCell(r.score); } },
      { width: "64px", key: "own", label: "Own", num: true, help: "mean of the root's own steps", sort: function (r) { return r.own; }, value: function (r) { return numValue(r.own); }, cell: function (r) { return fmt(r.own, "score"); } },
      { width: "72px", key: "passed", label: "Result", sort: function (r) { return r.passed === true ? 1 : 0; }, cell: function (r) { return passBadge(r.status === "scored" ? r.passed : null); } },
      { width: "86px", key: "complete", label: "Complete", sort: function (r) { return r.complete ? 1 : 0; }, value: function (r) { return r.complete; }, cell: function (r) { return r.complete ? "yes" : badge("no", "warn"); } },
      { width: "64px", key: "steps", label: "Steps", num: true, help: "scored steps in the subtree", sort: function (r) { return r.steps; }, value: function (r) { return numValue(r.steps); }, cell: function (r) { return fmt(r.steps, "int"); } },
      { width: "110px", key: "subagents", label: "Subagents", num: true, sort: function (r) { return r.subagents; }, value: function (r) { return r.subagents; }, cell: function (r) { return r.subagents + (r.omitted ? " + " + r.omitted + " omitted" : ""); } },
      { width: "170px", key: "decisive", label: "Went wrong at", help: "the decisive failure of a root that did not pass (decisive_rule)", sort: function (r) { return r.decisive ? r.decisive.order : -1; },
        cell: function (r) { return r.decisive ? h("span", { title: r.decisive.reason || "" }, [wentWrong(r.decisive), said(r.decisive)]) : (r.decisive_absent ? h("span", { cls: "muted", text: absentText(r.decisive_absent) }) : ""); } },
      { width: "126px", key: "failures", label: "Below threshold", num: true, help: "steps scored below failure_threshold", sort: function (r) { return r.failures; }, value: function (r) { return r.failures; }, cell: function (r) { return r.failures + (r.errors ? " · " + r.errors + (r.errors === 1 ? " error" : " errors") : ""); } }
    ].concat(data.roots.some(function (r) { return r.cost != null; }) ? [
      { width: "92px", key: "cost", label: "Cost", num: true, help: "USD of the judge calls made for this root's tree", sort: function (r) { return r.cost; }, value: function (r) { return numValue(r.cost); }, cell: function (r) { return r.cost == null ? "" : "$" + r.cost.toFixed(4); } }
    ] : []),
    detail: function (r) { return treeView(r.index); }
  });
  var chips = h("span", {});
  [["all", "All"], ["passed", "Passed"], ["not_passed", "Not passed"], ["failed", "Failed to score"], ["incomplete", "Incomplete"]].forEach(function (f) {
    var n = data.roots.filter(filters[f[0]]).length;
    chips.appendChild(h("button", { type: "button", cls: "chip" + (f[0] === only ? " active" : ""), "data-filter": f[0],
      onclick: function (ev) {
        only = f[0];
        Array.prototype.forEach.call(chips.children, function (c) { c.classList.toggle("active", c === ev.currentTarget); });
        table.render();
      } }, [f[1], h("span", { cls: "n", text: n })]));
  });
  return panel("Root trajectories", [
    h("div", { cls: "toolbar" }, [searchBox("Filter by file, id, agent, model…", function (q) { query = q; table.render(); }), chips, h("span", { cls: "grow" }), count]),
    table.el,
    legend()
  ], "roots");
}

function legend() {
  function item(cls, text, color) {
    var cell = h("span", { cls: "cell " + cls });
    if (color) cell.style.background = color;
    return h("span", {}, [cell, text]);
  }
  return h("div", { cls: "strip-legend" }, [
    item("", "step score 0 → 1 (red → green)", "linear-gradient(" + scoreColor(0) + "," + scoreColor(1) + ")"),
    item("fail", "below failure threshold", scoreColor(0.2)),
    item("error", "judge error"),
    item("unscored", "no score"),
    h("span", { text: "Click a row to open its subagent tree, a step for its rationale." })
  ]);
}

/* Where a failed root went wrong: its node's agent, the step, its score and category. */
/* The decisive step's own words (the results' excerpt), quoted: a person checks the step at a glance. */
function said(d) {
  return d.excerpt ? h("span", { cls: "muted decisive-excerpt", text: " “" + d.excerpt + "”" }) : null;
}

/* Why a root that did not pass names no step (decisive_absent). */
function absentText(kind) {
  return { only_user_or_system_steps_below_threshold: "none: only user or system steps scored low", no_scored_agent_step: "none: no scored agent step" }[kind] || kind;
}

function wentWrong(d) {
  return [d.agent || d.label || "?", " · step " + d.step_id + (d.segment ? " (segment " + d.segment + ")" : "") + " · " + fmt(d.score, "score") + (d.category ? " · " + d.category : "")].join("");
}

/* The subagent tree of one root: nodes and children are built when first opened. */
function treeView(rootIndex) {
  var nodes = data.trees[rootIndex];
  var row = data.roots.filter(function (r) { return r.index === rootIndex; })[0];
  var children = nodes.map(function () { return []; });
  nodes.forEach(function (n, i) { if (n.parent !== null && n.parent !== undefined) children[n.parent].push(i); });
  var tree = h("div", { cls: "tree", "data-tree": rootIndex });
  var d = row && row.decisive;
  if (d) tree.appendChild(h("p", { cls: "decisive-line" }, [badge("went wrong", "bad", "decisive_rule " + d.rule), " ", h("b", { text: wentWrong(d) }), h("span", { cls: "muted", text: " in " + (d.label || "?") }), said(d), d.reason ? h("span", { cls: "text", text: " — " + d.reason }) : null]));
  tree.appendChild(nodeView(nodes, children, 0, rootIndex, true));
  return tree;
}

function nodeView(nodes, children, i, rootIndex, open) {
  var n = nodes[i];
  var kids = children[i];
  var hasKids = kids.length + n.omitted.length > 0;
  var caret = h("span", { cls: "caret", text: hasKids ? "▸" : "" });
  var stats = h("span", { cls: "stats" }, [
    h("span", {}, ["own ", h("b", { text: fmt(n.own, "score"), "data-field": "own" })]),
    h("span", {}, ["aggregate ", h("b", { text: fmt(n.aggregate, "score"), "data-field": "aggregate" })]),
    h("span", { title: "steps with a score that count in the node's own score" }, [h("b", { text: fmt(n.step_count, "int") }), " scored steps"])
  ]);
  var head = h("div", { cls: "node-head" + (hasKids ? " toggle" : "") }, [
    caret,
    badge(n.kind || "node", "info"),
    h("span", { cls: "who", text: n.label, title: n.file }),
    h("span", { cls: "muted", text: [n.trajectory_id, n.agent, n.model].filter(Boolean).join(" · ") }),
    statusBadge(n.status),
    n.reason ? h("span", { cls: "mono muted", text: n.reason }) : null,
    n.status === "scored" ? passBadge(n.passed) : null,
    n.complete === false ? badge("incomplete", "warn") : null,
    n.parent_step !== null && n.parent_step !== undefined ? h("span", { cls: "muted", text: "from step " + n.parent_step }) : null,
    stats
  ]);
  var body = h("div", { cls: "node-body" });
  if (n.problems.length) body.appendChild(h("ul", { cls: "problems" }, n.problems.map(function (p) { return h("li", { text: p }); })));
  if (n.steps.length) body.appendChild(stepStrip(n));
  else if (n.status === "unscored") body.appendChild(h("p", { cls: "empty", text: "Not scored (" + (n.reason || "no reason given") + ")." }));
  else if (n.status === "failed" && !n.problems.length) body.appendChild(h("p", { cls: "empty", text: "No step was scored." }));
  var box = h("div", { cls: "children", hidden: true });
  var node = h("div", { cls: "node", "data-node": i, "data-status": n.status, "data-depth": n.depth }, [head, body, box]);
  var built = false;
  function setOpen(on) {
    if (on && !built) {
      kids.forEach(function (k) { box.appendChild(nodeView(nodes, children, k, rootIndex, false)); });
      n.omitted.forEach(function (o) { box.appendChild(omittedView(o)); });
      built = true;
    }
    box.hidden = !on;
    caret.classList.toggle("open", on);
  }
  if (hasKids) {
    head.addEventListener("click", function () { setOpen(box.hidden); });
    onKey(head, function () { setOpen(box.hidden); });
  }
  if (open && hasKids) setOpen(true);
  return node;
}

function omittedView(o) {
  return h("div", { cls: "node omitted", "data-status": "omitted" }, [h("div", { cls: "node-head" }, [
    h("span", { cls: "caret" }), statusBadge("omitted"),
    h("span", { cls: "who", text: o.ref_path || o.target || "?" }),
    h("span", { cls: "mono muted", text: o.reason }),
    o.target && o.target !== o.ref_path ? h("span", { cls: "muted", text: "→ " + o.target }) : null,
    o.parent_step_id !== null && o.parent_step_id !== undefined ? h("span", { cls: "muted", text: "from step " + o.parent_step_id }) : null
  ])]);
}

function stepStrip(n) {
  var detail = h("div", { cls: "step-detail", hidden: true });
  var strip = h("div", { cls: "strip" });
  var selected = null;
  n.steps.forEach(function (s, k) {
    var cell = h("button", { type: "button", cls: "cell" + (s.mark !== "ok" ? " " + s.mark : "") + (s.decisive ? " decisive" : ""), "data-step": k, "data-score": isNum(s.score) ? s.score : "",
      title: "step " + s.id + " · " + (s.source || "?") + " · " + (s.error ? s.error : fmt(s.score, "score")) + (s.category ? " · " + s.category : "") + (s.decisive ? " · where the run went wrong" : "") });
    if (isNum(s.score)) cell.style.background = scoreColor(s.score);
    cell.addEventListener("click", function (ev) {
      ev.stopPropagation();
      if (selected === cell) { cell.classList.remove("selected"); detail.hidden = true; selected = null; return; }
      if (selected) selected.classList.remove("selected");
      selected = cell; cell.classList.add("selected");
      showStep(detail, s); detail.hidden = false;
    });
    strip.appendChild(cell);
  });
  return h("div", {}, [strip, detail]);
}

function showStep(box, s) {
  box.textContent = "";
  box.appendChild(h("div", { cls: "head" }, [
    h("b", { text: "Step " + s.id }), s.segment ? h("span", { cls: "muted", text: "segment " + s.segment }) : null,
    badge(s.source || "?", ""), scoreCell(s.score),
    s.mark === "fail" ? badge("below threshold", "bad") : null,
    s.decisive ? badge("decisive", "bad", "where the run went wrong") : null,
    s.error ? badge(s.error, "bad", "judge error") : null,
    s.truncated ? badge("cut", "", "too long to show whole: the judge saw " + s.shown_chars + " of its " + (s.shown_chars + s.hidden_chars) + " characters") : null
  ]));
  var rows = [];
  function row(label, value, cls) { if (value !== undefined && value !== null && value !== "") rows.push(h("dt", { text: label }), h("dd", { cls: cls, text: value })); }
  row("tools", (s.tools || []).join(", "), "mono");
  if (s.scores) row("criteria", Object.keys(s.scores).map(function (k) { return k + " " + fmt(s.scores[k], "score"); }).join(" · "));
  row("judge error", s.error_message, "text");
  row("rationale", s.rationale, "text rationale");
  row("category", s.category ? s.category + (isNum(s.confidence) ? " (confidence " + fmt(s.confidence, "score") + ")" : "") + (s.categorization && s.categorization !== "categorized" ? " · " + s.categorization : "") : null, "mono");
  row("category rationale", s.category_rationale, "text");
  box.appendChild(rows.length ? h("dl", {}, rows) : h("p", { cls: "empty", text: "No rationale recorded." }));
}
