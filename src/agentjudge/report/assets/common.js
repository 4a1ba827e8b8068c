/* agentjudge HTML report: what both pages share. The report's script is this file, then
   score.js and grade.js, inside one function (see report/html.py), then a call of start().
   Every value is set with textContent or as a property: no data ever becomes markup. */
"use strict";
var data = JSON.parse(document.getElementById("report-data").textContent);
var app = document.getElementById("app");
var PAGE = 500;

function h(tag, props, children) {
  var node = document.createElement(tag);
  var key;
  for (key in props || {}) {
    var value = props[key];
    if (value === undefined || value === null) continue;
    if (key === "text") node.textContent = String(value);
    else if (key === "cls") node.className = value;
    else if (key === "title") node.title = String(value);
    else if (key === "onclick") node.addEventListener("click", value);
    else if (key.slice(0, 5) === "data-") node.setAttribute(key, String(value));
    else node[key] = value;
  }
  (children || []).forEach(function (child) {
    if (child === null || child === undefined || child === false) return;
    node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  });
  return node;
}

function isNum(v) { return typeof v === "number" && isFinite(v); }
function fmt(v, kind) {
  if (v === null || v === undefined) return "–";
  if (kind === "bool") return v ? "yes" : "no";
  if (!isNum(v)) return String(v);
  if (kind === "score4") return v.toFixed(4);
  if (kind === "score") return v.toFixed(3);
  if (kind === "pct") return (v * 100).toFixed(1).replace(/\.0$/, "") + "%";
  if (kind === "int" && Number.isInteger(v)) return String(v).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  if (kind === "num") return String(Math.round(v * 100) / 100);
  return String(v);
}
function scoreColor(v) {
  var x = Math.max(0, Math.min(1, v));
  return "hsl(" + Math.round(x * 120) + ", 62%, " + (46 - Math.round(x * 8)) + "%)";
}
function scoreCell(v, digits) {
  var dot = h("span", { cls: "dot" });
  if (isNum(v)) dot.style.background = scoreColor(v);
  return h("span", { cls: "score" }, [dot, fmt(v, digits || "score")]);
}
function badge(text, tone, title) {
  return h("span", { cls: "badge" + (tone ? " " + tone : ""), text: text, title: title });
}
var TONES = {
  scored: "good", passed: "good", succeeded: "good", met: "good", yes: "good",
  failed: "bad", error: "bad", not_met: "bad", missing: "bad", no: "bad",
  unscored: "warn", quality_below_threshold: "warn", incomplete: "warn", omitted: "warn",
  not_run: "", planned: "info"
};
function statusBadge(status, title) { return badge(status || "–", TONES[status] || "", title); }
function passBadge(passed) {
  if (passed === null || passed === undefined) return badge("–", "");
  return passed ? badge("pass", "good") : badge("fail", "bad");
}
function numValue(v) { return isNum(v) ? v : ""; }

function card(item, extra) {
  return h("div", Object.assign({ cls: "card", "data-key": item.key, "data-value": item.value === null ? "" : item.value }, extra || {}), [
    h("div", { cls: "label", text: item.label }),
    h("div", { cls: "value" + (item.tone ? " " + item.tone : item.value === false ? " warn" : ""), text: fmt(item.value, item.format) }),
    item.sub ? h("div", { cls: "sub", text: item.sub }) : null,
    item.caption ? h("div", { cls: "key", text: item.caption }) : null
  ]);
}
function kvTable(rows) {
  if (!rows.length) return h("p", { cls: "empty", text: "nothing recorded" });
  return h("table", { cls: "kv" }, [h("tbody", {}, rows.map(function (r) {
    return h("tr", { "data-key": r.key || r.label, "data-value": r.value === null ? "" : r.value }, [
      h("td", { text: r.label }),
      h("td", { text: fmt(r.value, r.format || "text") })
    ]);
  }))]);
}
function panel(title, body, id) {
  return h("section", { cls: "panel", id: id }, [h("h2", { text: title })].concat(body));
}
function header(title, subtitle, pill) {
  document.body.insertBefore(h("header", { cls: "top" }, [h("div", { cls: "wrap" }, [
    h("div", {}, [h("div", { cls: "brand", text: "agentjudge" }), h("h1", { text: title }),
      h("div", { cls: "subtitle", text: subtitle })]),
    h("div", { cls: "grow" }), pill
  ])]), app);
  app.className = "wrap";
  app.setAttribute("role", "main");
}
function bars(items, empty) {
  if (!items.length) return h("p", { cls: "empty", text: empty });
  var max = Math.max.apply(null, items.map(function (i) { return i.count; }));
  var grid = h("div", { cls: "bars" });
  items.forEach(function (item) {
    var fill = h("div", { cls: "fill cat-" + item.name });
    fill.style.width = (max ? (100 * item.count / max) : 0) + "%";
    grid.appendChild(h("span", { cls: "name", text: item.name }));
    grid.appendChild(h("div", { cls: "track", "data-category": item.name, "data-count": item.count }, [fill]));
    grid.appendChild(h("span", { cls: "count", text: fmt(item.count, "int") }));
  });
  return grid;
}

/* A sortable, filterable table whose rows expand into a lazily built detail row. */
function DataTable(opts) {
  var state = { key: opts.sortKey || null, dir: opts.sortDir || 1, limit: PAGE, open: {} };
  var thead = h("thead"), tbody = h("tbody");
  var table = h("table", { cls: "data", id: opts.id }, [thead, tbody]);
  var more = h("div", { cls: "more" });
  var caretCol = h("th", { cls: "caret-col" });
  caretCol.style.width = "30px";
  var headRow = h("tr", {}, [caretCol]);
  opts.columns.forEach(function (col) {
    var th = h("th", { cls: (col.num ? "num " : "") + (col.sort ? "sortable" : ""), text: col.label, title: col.help, "data-col": col.key });
    if (col.width) th.style.width = col.width;
    if (col.sort) th.addEventListener("click", function () {
      state.dir = state.key === col.key ? -state.dir : (col.num ? -1 : 1);
      state.key = col.key;
      render(0);
    });
    headRow.appendChild(th);
  });
  thead.appendChild(headRow);

  function sorted() {
    var rows = opts.rows.filter(opts.filter || function () { return true; });
    var col = opts.columns.filter(function (c) { return c.key === state.key; })[0];
    if (!col) return rows;
    return rows.map(function (row, i) { return [col.sort(row), i, row]; }).sort(function (a, b) {
      var x = a[0], y = b[0];
      var nx = x === null || x === undefined || x === "", ny = y === null || y === undefined || y === "";
      if (nx !== ny) return nx ? 1 : -1;  // no value sorts last either way
      if (!nx && x !== y) return (x < y ? -1 : 1) * state.dir;
      return a[1] - b[1];
    }).map(function (t) { return t[2]; });
  }
  function toggle(row, tr) {
    var id = opts.rowId(row);
    var next = tr.nextSibling;
    if (state.open[id]) {
      delete state.open[id];
      tr.classList.remove("open");
      if (next && next.classList.contains("detail")) tbody.removeChild(next);
    } else {
      state.open[id] = true;
      tr.classList.add("open");
      tbody.insertBefore(detailRow(row), next);
    }
  }
  function detailRow(row) {
    return h("tr", { cls: "detail", "data-detail-for": opts.rowId(row) }, [
      h("td", { colSpan: opts.columns.length + 1 }, [opts.detail(row)])
    ]);
  }
  var shown = [];  // the rows of the current order and filter
  function rowElements(row, frag) {
    var tr = h("tr", Object.assign({ cls: "row" }, opts.rowAttrs(row)), [h("td", {}, [h("span", { cls: "caret", text: "▸" })])]);
    opts.columns.forEach(function (col) {
      var content = col.cell(row);
      tr.appendChild(h("td", { cls: col.num ? "num" : "", "data-col": col.key, "data-value": col.value ? col.value(row) : null },
        [typeof content === "object" ? content : String(content)]));
    });
    tr.addEventListener("click", function () { toggle(row, tr); });
    onKey(tr, function () { toggle(row, tr); });
    frag.appendChild(tr);
    if (state.open[opts.rowId(row)]) { tr.classList.add("open"); frag.appendChild(detailRow(row)); }
  }
  /* Rows from..limit of `shown` are added; a new order or filter starts from 0. */
  function render(from) {
    if (!from) {
      Array.prototype.forEach.call(headRow.children, function (th) {
        var on = state.key !== null && th.getAttribute("data-col") === state.key;
        th.classList.toggle("sorted", on);
        th.classList.toggle("asc", on && state.dir === 1);
      });
      shown = sorted();
      tbody.textContent = "";
    }
    var frag = document.createDocumentFragment();
    shown.slice(from || 0, state.limit).forEach(function (row) { rowElements(row, frag); });
    tbody.appendChild(frag);
    more.textContent = "";
    if (!shown.length) more.appendChild(h("p", { cls: "empty", text: opts.empty }));
    var hidden = shown.length - state.limit;
    if (hidden > 0) {
      more.appendChild(h("button", { type: "button", text: "Show " + Math.min(PAGE, hidden) + " more (" + hidden + " hidden)",
        onclick: function () { var from = state.limit; state.limit += PAGE; render(from); } }));
    }
    if (opts.onRender) opts.onRender(shown.length);
  }
  render(0);
  return { el: h("div", {}, [table, more]), render: function () { state.limit = PAGE; render(0); } };
}

/* Enter or space on a focusable row or node head does what a click does. */
function onKey(node, action) {
  node.tabIndex = 0;
  node.addEventListener("keydown", function (ev) {
    if (ev.target !== node || (ev.key !== "Enter" && ev.key !== " ")) return;
    ev.preventDefault();
    action();
  });
}

function searchBox(placeholder, onInput) {
  var input = h("input", { type: "search", placeholder: placeholder });
  input.addEventListener("input", function () { onInput(input.value.toLowerCase()); });
  return input;
}

/* Builds the page from the JSON in #report-data, then marks it rendered. */
function start() {
  if (data.kind === "score") renderScore(); else renderGrade();
  app.appendChild(h("footer", { text: "Generated by agentjudge. Self-contained: this file loads nothing from the network." }));
  document.body.setAttribute("data-rendered", "true");
}
